import { describe, expect, it } from 'vitest';
import { fromAnthropicRequest } from './from-anthropic-request.js';
import { messagesRequestSchema } from './anthropic.wire.js';

/** Validates like the route does, then translates. */
function translate(body: Record<string, unknown>) {
  return fromAnthropicRequest(messagesRequestSchema.parse({ model: 'claude-x', max_tokens: 1000, ...body }));
}

const user = (content: unknown) => ({ role: 'user', content });
const assistant = (content: unknown) => ({ role: 'assistant', content });

describe('fromAnthropicRequest: basics', () => {
  it('maps the scalar settings', () => {
    expect(
      translate({
        messages: [user('Hi')],
        temperature: 0.3,
        top_p: 0.9,
        top_k: 40,
        stop_sequences: ['END'],
        stream: true,
        metadata: { user_id: 'user-7' },
      }),
    ).toEqual({
      request: {
        model: 'claude-x',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
        maxOutputTokens: 1000,
        temperature: 0.3,
        topP: 0.9,
        topK: 40,
        stop: ['END'],
        stream: true,
        user: 'user-7',
      },
      report: { dropped: [], approximated: [] },
    });
  });
});

describe('fromAnthropicRequest: system', () => {
  it('takes a string system prompt', () => {
    expect(translate({ system: 'Be brief.', messages: [user('Hi')] }).request.system).toEqual([{ type: 'text', text: 'Be brief.' }]);
  });

  it('keeps cache_control on system blocks', () => {
    const { request } = translate({
      system: [
        { type: 'text', text: 'Long context', cache_control: { type: 'ephemeral', ttl: '1h' } },
        { type: 'text', text: 'Rules' },
      ],
      messages: [user('Hi')],
    });
    expect(request.system).toEqual([
      { type: 'text', text: 'Long context', cacheControl: { type: 'ephemeral', ttl: '1h' } },
      { type: 'text', text: 'Rules' },
    ]);
  });

  it('joins leading system messages to the system prompt and keeps later ones in place', () => {
    const { request, report } = translate({
      system: 'A',
      messages: [
        { role: 'system', content: 'B' },
        user('q1'),
        assistant('a1'),
        { role: 'system', content: [{ type: 'text', text: 'C' }, { type: 'image', source: { type: 'url', url: 'https://x/y.png' } }] },
        user('q2'),
      ],
    });
    expect(request.system).toEqual([
      { type: 'text', text: 'A' },
      { type: 'text', text: 'B' },
    ]);
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'q1' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'a1' }] },
      { role: 'system', content: [{ type: 'text', text: 'C' }] },
      { role: 'user', content: [{ type: 'text', text: 'q2' }] },
    ]);
    expect(report.dropped).toEqual(['messages[3].content[1]']);
  });
});

describe('fromAnthropicRequest: user content', () => {
  it('maps text, images and unknown blocks', () => {
    const document = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'doc' } };
    const { request } = translate({
      messages: [
        user([
          { type: 'text', text: 'Look', cache_control: { type: 'ephemeral' } },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          { type: 'image', source: { type: 'file', file_id: 'file_01' } },
          document,
        ]),
      ],
    });
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look', cacheControl: { type: 'ephemeral' } },
          { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBOR' } },
          { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg' } },
          { type: 'unknown', origin: 'messages:image', raw: { type: 'image', source: { type: 'file', file_id: 'file_01' } } },
          { type: 'unknown', origin: 'messages:document', raw: document },
        ],
      },
    ]);
  });
});

describe('fromAnthropicRequest: tools in the conversation', () => {
  it('turns tool_use into tool calls and tool_result blocks into tool messages before the rest of the turn', () => {
    const { request } = translate({
      messages: [
        user('Weather in Paris and Rome?'),
        assistant([
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'toolu_2', name: 'get_weather', input: { city: 'Rome' } },
        ]),
        user([
          { type: 'text', text: 'Also, hurry.' },
          { type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C' },
          {
            type: 'tool_result',
            tool_use_id: 'toolu_2',
            content: [
              { type: 'text', text: 'unavailable' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAA' } },
            ],
            is_error: true,
          },
        ]),
        assistant([{ type: 'tool_use', id: 'toolu_3', name: 'noop', input: {} }]),
        user([{ type: 'tool_result', tool_use_id: 'toolu_3' }]),
      ],
    });
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { type: 'tool_call', id: 'toolu_2', name: 'get_weather', arguments: '{"city":"Rome"}' },
        ],
      },
      { role: 'tool', toolCallId: 'toolu_1', content: [{ type: 'text', text: '18°C' }] },
      {
        role: 'tool',
        toolCallId: 'toolu_2',
        content: [
          { type: 'text', text: 'unavailable' },
          { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAA' } },
        ],
        isError: true,
      },
      { role: 'user', content: [{ type: 'text', text: 'Also, hurry.' }] },
      { role: 'assistant', content: [{ type: 'tool_call', id: 'toolu_3', name: 'noop', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'toolu_3', content: [] },
    ]);
  });
});

describe('fromAnthropicRequest: thinking', () => {
  it('maps thinking blocks and settings', () => {
    const { request } = translate({
      max_tokens: 16000,
      thinking: { type: 'enabled', budget_tokens: 8000 },
      messages: [
        user('2+2?'),
        assistant([
          { type: 'thinking', thinking: 'Simple.', signature: 'sig-1' },
          { type: 'redacted_thinking', data: 'opaque' },
          { type: 'text', text: '4' },
        ]),
        user('Sure?'),
      ],
    });
    expect(request.reasoning).toEqual({ budgetTokens: 8000 });
    expect(request.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', text: 'Simple.', signature: 'sig-1' },
        { type: 'thinking', text: '', redactedData: 'opaque' },
        { type: 'text', text: '4' },
      ],
    });
  });

  it('disabled → reasoning.disabled; adaptive → extra', () => {
    expect(translate({ thinking: { type: 'disabled' }, messages: [user('x')] }).request.reasoning).toEqual({ disabled: true });
    const adaptive = translate({ thinking: { type: 'adaptive' }, messages: [user('x')] }).request;
    expect(adaptive.reasoning).toBeUndefined();
    expect(adaptive.extra).toEqual({ thinking: { type: 'adaptive' } });
  });

  it('reads output_config: effort and a JSON schema', () => {
    const { request, report } = translate({
      messages: [user('x')],
      output_config: { effort: 'max', format: { type: 'json_schema', schema: { type: 'object' } }, future: 1 },
    });
    expect(request.reasoning).toEqual({ effort: 'high' });
    expect(request.responseFormat).toEqual({ type: 'json_schema', name: 'output', schema: { type: 'object' } });
    expect(request.extra).toEqual({ output_config: { future: 1 } });
    expect(report.approximated).toEqual(['output_config.effort']);
  });
});

describe('fromAnthropicRequest: tool definitions and choice', () => {
  const weather = { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: {} } };

  it('maps custom tools and moves hosted tools to extra', () => {
    const search = { type: 'web_search_20250305', name: 'web_search', max_uses: 2 };
    const { request } = translate({
      messages: [user('x')],
      tools: [weather, { type: 'custom', name: 'strict_tool', input_schema: { type: 'object' }, strict: true }, search],
    });
    expect(request.tools).toEqual([
      { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: {} } },
      { name: 'strict_tool', parameters: { type: 'object' }, strict: true },
    ]);
    expect(request.extra).toEqual({ tools: [search] });
  });

  it('maps each tool choice and disable_parallel_tool_use', () => {
    const choice = (tool_choice: unknown) => {
      const { request } = translate({ messages: [user('x')], tools: [weather], tool_choice });
      return [request.toolChoice, request.parallelToolCalls];
    };
    expect(choice({ type: 'auto' })).toEqual([{ type: 'auto' }, undefined]);
    expect(choice({ type: 'none' })).toEqual([{ type: 'none' }, undefined]);
    expect(choice({ type: 'any', disable_parallel_tool_use: true })).toEqual([{ type: 'required' }, false]);
    expect(choice({ type: 'tool', name: 'get_weather', disable_parallel_tool_use: false })).toEqual([
      { type: 'tool', name: 'get_weather' },
      true,
    ]);
  });
});

describe('fromAnthropicRequest: unmodelled fields', () => {
  it('reads null as not given', () => {
    const { request } = translate({
      messages: [user('x')],
      system: null,
      temperature: null,
      tools: null,
      tool_choice: null,
      thinking: null,
      metadata: null,
      service_tier: null,
      output_config: null,
    });
    expect(request).toEqual({
      model: 'claude-x',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'x' }] }],
      maxOutputTokens: 1000,
      stream: false,
    });
  });

  it('keeps every other top-level field in extra', () => {
    const { request } = translate({
      messages: [user('x')],
      service_tier: 'auto',
      container: 'container_1',
      mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'docs' }],
      context_management: { edits: [] },
    });
    expect(request.extra).toEqual({
      service_tier: 'auto',
      container: 'container_1',
      mcp_servers: [{ type: 'url', url: 'https://mcp.example.com', name: 'docs' }],
      context_management: { edits: [] },
    });
  });
});
