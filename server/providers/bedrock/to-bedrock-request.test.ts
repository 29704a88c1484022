import { describe, expect, it } from 'vitest';
import type { CanonicalRequest } from '../canonical.js';
import { toBedrockRequest } from './to-bedrock-request.js';

const CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const NOVA = 'amazon.nova-pro-v1:0';

function request(extra: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return { model: NOVA, messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }], stream: false, ...extra };
}

describe('system prompts and turns', () => {
  it('puts system parts and leading system messages in `system`, and merges consecutive turns', () => {
    const { body, report } = toBedrockRequest(
      request({
        system: [{ type: 'text', text: 'Be brief.' }],
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'Speak French.' }] },
          { role: 'user', content: [{ type: 'text', text: 'Hello' }] },
          { role: 'user', content: [{ type: 'text', text: 'Anyone?' }] },
          { role: 'assistant', content: [{ type: 'text', text: 'Bonjour' }] },
        ],
      }),
    );
    expect(body).toEqual({
      system: [{ text: 'Be brief.' }, { text: 'Speak French.' }],
      messages: [
        { role: 'user', content: [{ text: 'Hello' }, { text: 'Anyone?' }] },
        { role: 'assistant', content: [{ text: 'Bonjour' }] },
      ],
    });
    expect(report).toEqual({ dropped: [], approximated: [] });
  });

  it('moves a system message from the middle of the conversation to `system`, approximated', () => {
    const { body, report } = toBedrockRequest(
      request({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'A' }] },
          { role: 'assistant', content: [{ type: 'text', text: 'B' }] },
          { role: 'system', content: [{ type: 'text', text: 'Auto-accept is on.' }] },
          { role: 'user', content: [{ type: 'text', text: 'C' }] },
        ],
      }),
    );
    expect(body.system).toEqual([{ text: 'Auto-accept is on.' }]);
    expect((body.messages as unknown[]).length).toBe(3);
    expect(report.approximated).toEqual(['system']);
  });

  it('follows a text part marked for caching with a cache point', () => {
    const { body } = toBedrockRequest(
      request({
        system: [{ type: 'text', text: 'Long rules', cacheControl: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Doc', cacheControl: { type: 'ephemeral' } }, { type: 'text', text: '' }] }],
      }),
    );
    expect(body.system).toEqual([{ text: 'Long rules' }, { cachePoint: { type: 'default' } }]);
    expect(body.messages).toEqual([{ role: 'user', content: [{ text: 'Doc' }, { cachePoint: { type: 'default' } }] }]);
  });
});

describe('inference parameters', () => {
  it('maps max tokens, temperature, top_p and stop sequences, and names what Converse has no field for', () => {
    const { body, report } = toBedrockRequest(
      request({ maxOutputTokens: 300, temperature: 0.2, topP: 0.9, stop: ['END'], seed: 7, presencePenalty: 1, frequencyPenalty: 1, topK: 5, user: 'u-1' }),
    );
    expect(body.inferenceConfig).toEqual({ maxTokens: 300, temperature: 0.2, topP: 0.9, stopSequences: ['END'] });
    expect(body.additionalModelRequestFields).toBeUndefined();
    expect(report.dropped).toEqual(['top_k', 'presence_penalty', 'frequency_penalty', 'seed', 'user']);
  });

  it("asks Claude models for the stop sequence that matched, Claude's own response field", () => {
    expect(toBedrockRequest(request({ model: CLAUDE, stop: ['END'] })).body.additionalModelResponseFieldPaths).toEqual(['/stop_sequence']);
    expect(toBedrockRequest(request({ stop: ['END'] })).body.additionalModelResponseFieldPaths).toBeUndefined();
  });

  it('gives Claude models top_k through additionalModelRequestFields', () => {
    const { body, report } = toBedrockRequest(request({ model: CLAUDE, topK: 5 }));
    expect(body.additionalModelRequestFields).toEqual({ top_k: 5 });
    expect(report.dropped).toEqual([]);
  });

  it('asks Claude models for thinking from a budget or an effort, with room for it under maxTokens', () => {
    const budget = toBedrockRequest(request({ model: CLAUDE, maxOutputTokens: 32000, reasoning: { budgetTokens: 2048 }, temperature: 0.5 }));
    expect(budget.body.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(budget.body.inferenceConfig).toEqual({ maxTokens: 32000 });
    expect(budget.report.dropped).toEqual(['temperature']);

    const effort = toBedrockRequest(request({ model: CLAUDE, reasoning: { effort: 'low' } }));
    expect(effort.body.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(effort.body.inferenceConfig).toEqual({ maxTokens: 2048 + 4096 });
    expect(effort.report.approximated).toEqual(['reasoning.effort', 'max_tokens']);

    const other = toBedrockRequest(request({ reasoning: { effort: 'high' } }));
    expect(other.body.additionalModelRequestFields).toBeUndefined();
    expect(other.report.dropped).toEqual(['reasoning.effort']);
  });

  it('leaves effort-derived thinking out in a tool loop whose call came without reasoning', () => {
    const loop = (assistantContent: CanonicalRequest['messages'][number]['content']): CanonicalRequest =>
      request({
        model: CLAUDE,
        reasoning: { effort: 'medium' },
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'ls' }] },
          { role: 'assistant', content: assistantContent } as CanonicalRequest['messages'][number],
          { role: 'tool', toolCallId: 'c1', content: [{ type: 'text', text: 'a b' }] },
        ],
      });
    const without = toBedrockRequest(loop([{ type: 'tool_call', id: 'c1', name: 'shell', arguments: '{}' }]));
    expect(without.body.additionalModelRequestFields).toBeUndefined();
    expect(without.report.dropped).toEqual(['reasoning.effort']);
    const withReasoning = toBedrockRequest(loop([{ type: 'thinking', text: 't', signature: 's' }, { type: 'tool_call', id: 'c1', name: 'shell', arguments: '{}' }]));
    expect(withReasoning.body.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 8192 } });
  });

  it('leaves thinking out when Claude would refuse it with a forced tool', () => {
    const { body, report } = toBedrockRequest(
      request({ model: CLAUDE, reasoning: { budgetTokens: 2048 }, tools: [{ name: 't', parameters: { type: 'object' } }], toolChoice: { type: 'required' } }),
    );
    expect(body.additionalModelRequestFields).toBeUndefined();
    expect(report.dropped).toEqual(['thinking']);
  });

  it('turns JSON mode into an instruction, approximated', () => {
    const { body, report } = toBedrockRequest(request({ responseFormat: { type: 'json_schema', name: 'x', schema: { type: 'object', properties: { a: { type: 'string' } } } } }));
    expect(body.system).toEqual([{ text: 'Respond with a single JSON value that matches this JSON schema, and nothing else: {"type":"object","properties":{"a":{"type":"string"}}}' }]);
    expect(report.approximated).toEqual(['response_format']);
  });
});

describe('tools', () => {
  const weather = { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

  it('declares tools as toolSpec with the JSON schema, and maps each tool choice', () => {
    const choices = [
      [{ type: 'auto' }, undefined],
      [{ type: 'required' }, { any: {} }],
      [{ type: 'tool', name: 'get_weather' }, { tool: { name: 'get_weather' } }],
    ] as const;
    for (const [choice, expected] of choices) {
      const { body } = toBedrockRequest(request({ tools: [weather], toolChoice: choice }));
      expect(body.toolConfig).toEqual({
        tools: [{ toolSpec: { name: 'get_weather', description: 'Weather', inputSchema: { json: weather.parameters } } }],
        ...(expected ? { toolChoice: expected } : {}),
      });
    }
    const none = toBedrockRequest(request({ tools: [weather], toolChoice: { type: 'none' }, parallelToolCalls: false }));
    expect(none.report).toEqual({ dropped: ['parallel_tool_calls'], approximated: ['tool_choice'] });
  });

  it('carries a tool loop: toolUse in the assistant turn, toolResult first in the next user turn', () => {
    const { body, report } = toBedrockRequest(
      request({
        tools: [weather],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', text: 'Need the tool', signature: 'sig-1' },
              { type: 'thinking', text: 'unsigned, from elsewhere' },
              { type: 'tool_call', id: 'call.1:a', name: 'get_weather', arguments: '{"city":"Paris"}' },
            ],
          },
          { role: 'tool', toolCallId: 'call.1:a', content: [{ type: 'text', text: '18C' }] },
          { role: 'tool', toolCallId: 'call_2', content: [{ type: 'text', text: 'failed' }], isError: true },
          { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
        ],
      }),
    );
    expect(body.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: [
          { reasoningContent: { reasoningText: { text: 'Need the tool', signature: 'sig-1' } } },
          { toolUse: { toolUseId: 'call_1_a', name: 'get_weather', input: { city: 'Paris' } } },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'call_1_a', content: [{ text: '18C' }] } },
          { toolResult: { toolUseId: 'call_2', content: [{ text: 'failed' }], status: 'error' } },
          { text: 'Thanks' },
        ],
      },
    ]);
    expect(report.dropped).toEqual(['thinking']);
  });

  it('names hosted tools of another format as dropped', () => {
    const { report } = toBedrockRequest(request({ tools: [weather], extra: { tools: [{ type: 'web_search_20250305', name: 'web_search' }], context_management: {} } }));
    expect(report.dropped).toEqual(['tools.web_search', 'context_management']);
  });
});

describe('images', () => {
  it('sends base64 and data-URL images as bytes, s3 locations as such, and drops http URLs', () => {
    const { body, report } = toBedrockRequest(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
              { type: 'image', source: { kind: 'url', url: 'data:image/jpeg;base64,/9j/4AAQ' } },
              { type: 'image', source: { kind: 'url', url: 's3://bucket/cat.webp' } },
              { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.png' } },
              { type: 'unknown', origin: 'messages:document', raw: {} },
            ],
          },
        ],
      }),
    );
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } },
          { image: { format: 'jpeg', source: { bytes: '/9j/4AAQ' } } },
          { image: { format: 'webp', source: { s3Location: { uri: 's3://bucket/cat.webp' } } } },
        ],
      },
    ]);
    expect(report.dropped).toEqual(['image_url', 'messages:document']);
  });
});
