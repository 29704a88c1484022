import { describe, expect, it } from 'vitest';
import type { CanonicalMessage, CanonicalRequest } from '../canonical.js';
import { JSON_OBJECT_INSTRUCTION, toAnthropicRequest } from './to-anthropic-request.js';

const hi: CanonicalMessage = { role: 'user', content: [{ type: 'text', text: 'Hi' }] };

function translate(request: Partial<CanonicalRequest>) {
  return toAnthropicRequest({ model: 'claude-x', messages: [hi], maxOutputTokens: 1000, stream: false, ...request });
}

describe('toAnthropicRequest: basics', () => {
  it('maps the scalar settings', () => {
    expect(
      translate({ temperature: 0.2, topP: 0.9, topK: 20, stop: ['END'], stream: true, user: 'user-1' }),
    ).toEqual({
      body: {
        model: 'claude-x',
        max_tokens: 1000,
        messages: [{ role: 'user', content: 'Hi' }],
        temperature: 0.2,
        top_p: 0.9,
        top_k: 20,
        stop_sequences: ['END'],
        stream: true,
        metadata: { user_id: 'user-1' },
      },
      report: { dropped: [], approximated: [] },
    });
  });

  it('defaults max_tokens to 4096 and reports it', () => {
    const { body, report } = translate({ maxOutputTokens: undefined });
    expect(body.max_tokens).toBe(4096);
    expect(report.approximated).toEqual(['max_tokens']);
  });

  it('clamps a chat temperature above 1', () => {
    const { body, report } = translate({ temperature: 1.7 });
    expect(body.temperature).toBe(1);
    expect(report.approximated).toEqual(['temperature']);
  });

  it('drops penalties, seed and whitespace-only stop sequences', () => {
    const { body, report } = translate({ presencePenalty: 0.5, frequencyPenalty: 0.1, seed: 7, stop: ['\n', 'STOP'] });
    expect(body.stop_sequences).toEqual(['STOP']);
    expect(report.dropped).toEqual(['stop', 'presence_penalty', 'frequency_penalty', 'seed']);
  });
});

describe('toAnthropicRequest: system', () => {
  it('sends a single plain system part as a string, and cache_control as blocks', () => {
    expect(translate({ system: [{ type: 'text', text: 'Be brief.' }] }).body.system).toBe('Be brief.');
    expect(
      translate({
        system: [
          { type: 'text', text: 'Context', cacheControl: { type: 'ephemeral' } },
          { type: 'text', text: 'Rules' },
        ],
      }).body.system,
    ).toEqual([
      { type: 'text', text: 'Context', cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Rules' },
    ]);
  });

  it('joins leading system messages to system and keeps later ones in place', () => {
    const { body } = translate({
      system: [{ type: 'text', text: 'A' }],
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'B' }] },
        hi,
        { role: 'assistant', content: [{ type: 'text', text: 'Hello' }] },
        { role: 'system', content: [{ type: 'text', text: 'Now answer in French.' }] },
        { role: 'user', content: [{ type: 'text', text: 'Bye' }] },
      ],
    });
    expect(body.system).toEqual([
      { type: 'text', text: 'A' },
      { type: 'text', text: 'B' },
    ]);
    expect(body.messages).toEqual([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
      { role: 'system', content: 'Now answer in French.' },
      { role: 'user', content: 'Bye' },
    ]);
  });
});

describe('toAnthropicRequest: turns', () => {
  it('puts tool results and the following user message in one user turn, results first', () => {
    const { body, report } = translate({
      messages: [
        hi,
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
            { type: 'tool_call', id: 'call_2', name: 'get_time', arguments: '' },
          ],
        },
        { role: 'tool', toolCallId: 'call_1', content: [{ type: 'text', text: '18°C' }] },
        { role: 'tool', toolCallId: 'call_2', content: [], isError: true },
        { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: 'Hi' },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'get_time', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: '18°C' },
          { type: 'tool_result', tool_use_id: 'call_2', is_error: true },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ]);
    expect(report).toEqual({ dropped: [], approximated: [] });
  });

  it('merges consecutive turns of the same role', () => {
    const { body } = translate({
      messages: [
        hi,
        { role: 'user', content: [{ type: 'text', text: 'Anyone?' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Yes.' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Here.' }] },
      ],
    });
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hi' },
          { type: 'text', text: 'Anyone?' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Yes.' },
          { type: 'text', text: 'Here.' },
        ],
      },
    ]);
  });

  it('leaves out empty text parts and messages left empty', () => {
    const { body } = translate({
      system: [{ type: 'text', text: '' }],
      messages: [
        hi,
        {
          role: 'assistant',
          content: [
            { type: 'text', text: '' },
            { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{}' },
          ],
        },
        { role: 'tool', toolCallId: 'call_1', content: [{ type: 'text', text: '' }] },
        { role: 'user', content: [{ type: 'text', text: '' }] },
      ],
    });
    expect(body).not.toHaveProperty('system');
    expect(body.messages).toEqual([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'f', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1' }] },
    ]);
  });

  it('makes tool ids acceptable to Anthropic, the same way on both sides', () => {
    const { body } = translate({
      messages: [
        hi,
        { role: 'assistant', content: [{ type: 'tool_call', id: 'functions.get_weather:0', name: 'get_weather', arguments: '{}' }] },
        { role: 'tool', toolCallId: 'functions.get_weather:0', content: [{ type: 'text', text: 'sunny' }] },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'functions_get_weather_0', name: 'get_weather', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'functions_get_weather_0', content: 'sunny' }] },
    ]);
  });

  it('reports tool arguments that are not a JSON object', () => {
    const { body, report } = translate({
      messages: [hi, { role: 'assistant', content: [{ type: 'tool_call', id: 'c', name: 'f', arguments: '[1,2' }] }],
    });
    expect((body.messages as { content: unknown }[])[1].content).toEqual([{ type: 'tool_use', id: 'c', name: 'f', input: {} }]);
    expect(report.approximated).toEqual(['messages[1].content[0].arguments']);
  });
});

describe('toAnthropicRequest: content parts', () => {
  it('maps images: data URLs to base64, http URLs to url sources', () => {
    const { body } = translate({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', source: { kind: 'url', url: 'data:image/png;base64,iVBORw0KGgo=' }, detail: 'high' },
            { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg' } },
            { type: 'image', source: { kind: 'base64', mediaType: 'image/webp', data: 'UklGR' } },
            { type: 'image', source: { kind: 'url', url: 'data:image/svg+xml,%3Csvg%2F%3E' } },
          ],
        },
      ],
    });
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          { type: 'image', source: { type: 'base64', media_type: 'image/webp', data: 'UklGR' } },
          { type: 'image', source: { type: 'base64', media_type: 'image/svg+xml', data: Buffer.from('<svg/>').toString('base64') } },
        ],
      },
    ]);
  });

  it('carries unknown parts from a messages client and drops those of other origins', () => {
    const document = { type: 'document', source: { type: 'url', url: 'https://x/a.pdf' } };
    const { body, report } = translate({
      messages: [
        {
          role: 'user',
          name: 'alice',
          content: [
            { type: 'unknown', origin: 'messages:document', raw: document },
            { type: 'unknown', origin: 'chat:input_audio', raw: { type: 'input_audio' } },
          ],
        },
      ],
    });
    expect(body.messages).toEqual([{ role: 'user', content: [document] }]);
    expect(report.dropped).toEqual(['messages[0].name', 'messages[0].content[1]']);
  });

  it('echoes signed and redacted thinking and drops unsigned thinking', () => {
    const { body, report } = translate({
      messages: [
        hi,
        {
          role: 'assistant',
          content: [
            { type: 'thinking', text: 'from another provider' },
            { type: 'thinking', text: 'signed', signature: 'sig' },
            { type: 'thinking', text: '', redactedData: 'opaque' },
            { type: 'text', text: 'Answer' },
          ],
        },
      ],
    });
    expect((body.messages as { content: unknown }[])[1].content).toEqual([
      { type: 'thinking', thinking: 'signed', signature: 'sig' },
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Answer' },
    ]);
    expect(report.dropped).toEqual(['messages[1].content[0]']);
  });
});

describe('toAnthropicRequest: tools', () => {
  const weather = { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: {} } };

  it('maps tool definitions (an empty schema gets type object)', () => {
    expect(translate({ tools: [weather, { name: 'ping', parameters: {}, strict: true }] }).body.tools).toEqual([
      { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: {} } },
      { name: 'ping', input_schema: { type: 'object' }, strict: true },
    ]);
  });

  it('maps tool choices and parallelToolCalls false', () => {
    const choice = (request: Partial<CanonicalRequest>) => translate({ tools: [weather], ...request }).body.tool_choice;
    expect(choice({ toolChoice: { type: 'auto' } })).toEqual({ type: 'auto' });
    expect(choice({ toolChoice: { type: 'none' } })).toEqual({ type: 'none' });
    expect(choice({ toolChoice: { type: 'required' } })).toEqual({ type: 'any' });
    expect(choice({ toolChoice: { type: 'tool', name: 'get_weather' } })).toEqual({ type: 'tool', name: 'get_weather' });
    expect(choice({ toolChoice: { type: 'required' }, parallelToolCalls: false })).toEqual({
      type: 'any',
      disable_parallel_tool_use: true,
    });
    expect(choice({ parallelToolCalls: false })).toEqual({ type: 'auto', disable_parallel_tool_use: true });
    expect(choice({ parallelToolCalls: true })).toBeUndefined();
  });

  it('appends Anthropic hosted tools from extra and drops other hosted tools', () => {
    const search = { type: 'web_search_20250305', name: 'web_search' };
    const { body, report } = translate({ tools: [weather], extra: { tools: [search, { type: 'web_search_preview' }] } });
    expect(body.tools).toEqual([
      { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: {} } },
      search,
    ]);
    expect(report.dropped).toEqual(['tools.web_search_preview']);
  });
});

describe('toAnthropicRequest: response format', () => {
  it('json_schema → output_config.format (approximated)', () => {
    const { body, report } = translate({
      responseFormat: { type: 'json_schema', name: 'weather', schema: { type: 'object' }, strict: true },
    });
    expect(body.output_config).toEqual({ format: { type: 'json_schema', schema: { type: 'object' } } });
    expect(report.approximated).toEqual(['response_format']);
  });

  it('json_object → an instruction at the end of system (approximated)', () => {
    const { body, report } = translate({ system: [{ type: 'text', text: 'Be brief.' }], responseFormat: { type: 'json_object' } });
    expect(body.system).toEqual([
      { type: 'text', text: 'Be brief.' },
      { type: 'text', text: JSON_OBJECT_INSTRUCTION },
    ]);
    expect(report.approximated).toEqual(['response_format']);
  });

  it('text needs nothing', () => {
    expect(translate({ responseFormat: { type: 'text' } })).toEqual(translate({}));
  });
});

describe('toAnthropicRequest: reasoning', () => {
  it('sends budgetTokens as given, and disabled as disabled', () => {
    expect(translate({ maxOutputTokens: 20000, reasoning: { budgetTokens: 10000 } }).body.thinking).toEqual({
      type: 'enabled',
      budget_tokens: 10000,
    });
    expect(translate({ reasoning: { disabled: true } }).body.thinking).toEqual({ type: 'disabled' });
  });

  it('raises a defaulted max_tokens above an explicit budget', () => {
    expect(translate({ maxOutputTokens: undefined, reasoning: { budgetTokens: 10000 } }).body).toMatchObject({
      max_tokens: 14096,
      thinking: { type: 'enabled', budget_tokens: 10000 },
    });
  });

  it('turns an effort into a budget, raising a defaulted max_tokens and dropping sampling thinking refuses', () => {
    const { body, report } = translate({
      maxOutputTokens: undefined,
      temperature: 0.5,
      topK: 10,
      topP: 0.8,
      reasoning: { effort: 'medium', summary: 'auto' },
    });
    expect(body).toMatchObject({ max_tokens: 8192 + 4096, thinking: { type: 'enabled', budget_tokens: 8192 } });
    expect(body).not.toHaveProperty('temperature');
    expect(body).not.toHaveProperty('top_k');
    expect(body).not.toHaveProperty('top_p');
    expect(report).toEqual({
      dropped: ['temperature', 'top_k', 'top_p', 'reasoning.summary'],
      approximated: ['max_tokens', 'reasoning.effort'],
    });
  });

  it('keeps the budget under an explicit max_tokens', () => {
    expect(translate({ maxOutputTokens: 3000, reasoning: { effort: 'high' } }).body.thinking).toEqual({
      type: 'enabled',
      budget_tokens: 2999,
    });
  });

  it('leaves thinking out when Anthropic would refuse it', () => {
    const dropped = (request: Partial<CanonicalRequest>) => {
      const { body, report } = translate({ reasoning: { effort: 'low' }, ...request });
      return [body.thinking, report.dropped];
    };
    expect(dropped({ maxOutputTokens: 1000 })).toEqual([undefined, ['reasoning.effort']]);
    expect(dropped({ tools: [{ name: 'f', parameters: { type: 'object' } }], toolChoice: { type: 'required' } })).toEqual([
      undefined,
      ['reasoning.effort'],
    ]);
    expect(
      dropped({
        messages: [
          hi,
          { role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'f', arguments: '{}' }] },
          { role: 'tool', toolCallId: 'c1', content: [{ type: 'text', text: 'ok' }] },
        ],
      }),
    ).toEqual([undefined, ['reasoning.effort']]);
  });
});

describe('toAnthropicRequest: extra', () => {
  it('carries the Anthropic fields of an Anthropic client and drops the rest', () => {
    const { body, report } = translate({
      extra: {
        thinking: { type: 'adaptive' },
        output_config: { effort: 'low' },
        service_tier: 'auto',
        container: 'container_1',
        mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'docs' }],
        context_management: { edits: [] },
        logit_bias: { 50256: -100 },
        store: true,
      },
    });
    expect(body).toMatchObject({
      thinking: { type: 'adaptive' },
      output_config: { effort: 'low' },
      service_tier: 'auto',
      container: 'container_1',
      mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'docs' }],
      context_management: { edits: [] },
    });
    expect(report.dropped).toEqual(['logit_bias', 'store']);
  });

  it('does not carry a same-named field of another format', () => {
    const { body, report } = translate({ extra: { service_tier: 'flex', context_management: [{ type: 'compaction' }] } });
    expect(body).not.toHaveProperty('service_tier');
    expect(body).not.toHaveProperty('context_management');
    expect(report.dropped).toEqual(['service_tier', 'context_management']);
  });
});
