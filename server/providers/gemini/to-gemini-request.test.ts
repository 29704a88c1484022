import { describe, expect, it } from 'vitest';
import type { CanonicalRequest } from '../canonical.js';
import { toGeminiRequest } from './to-gemini-request.js';

function request(overrides: Partial<CanonicalRequest>): CanonicalRequest {
  return { model: 'gemini-2.5-flash', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }], stream: false, ...overrides };
}

describe('toGeminiRequest: messages', () => {
  it('system instruction, alternating turns, consecutive turns of one role joined', () => {
    const { body, report } = toGeminiRequest(
      request({
        system: [{ type: 'text', text: 'Be brief.' }],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'One' }] },
          { role: 'user', content: [{ type: 'text', text: 'Two' }] },
          { role: 'assistant', content: [{ type: 'text', text: 'Three' }] },
          { role: 'system', content: [{ type: 'text', text: 'Mid-way rule' }] },
          { role: 'user', content: [{ type: 'text', text: 'Four' }] },
        ],
      }),
    );
    expect(body).toEqual({
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      contents: [
        { role: 'user', parts: [{ text: 'One' }, { text: 'Two' }] },
        { role: 'model', parts: [{ text: 'Three' }] },
        { role: 'user', parts: [{ text: 'Mid-way rule' }, { text: 'Four' }] },
      ],
    });
    expect(report).toEqual({ dropped: [], approximated: ['messages.system'] });
  });

  it('images: base64 and data URLs inline, other URLs as fileData with a guessed type', () => {
    const { body } = toGeminiRequest(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { kind: 'base64', mediaType: 'image/webp', data: 'AAAA' } },
              { type: 'image', source: { kind: 'url', url: 'data:image/png;base64,iVBO' } },
              { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.png?size=2' } },
            ],
          },
        ],
      }),
    );
    expect(body.contents).toEqual([
      {
        role: 'user',
        parts: [
          { inlineData: { mimeType: 'image/webp', data: 'AAAA' } },
          { inlineData: { mimeType: 'image/png', data: 'iVBO' } },
          { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/cat.png?size=2' } },
        ],
      },
    ]);
  });

  it('tool calls and results: functionCall args, functionResponse named after the call, results of one turn together', () => {
    const { body, report } = toGeminiRequest(
      request({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather and time?' }] },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', text: '', signature: 'gemini:SIG' },
              { type: 'tool_call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
              { type: 'tool_call', id: 'toolu_2', name: 'get_time', arguments: '' },
            ],
          },
          { role: 'tool', toolCallId: 'toolu_1', content: [{ type: 'text', text: 'Sunny' }] },
          { role: 'tool', toolCallId: 'toolu_2', content: [{ type: 'text', text: 'no clock' }], isError: true },
        ],
      }),
    );
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather and time?' }] },
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'SIG' },
          { functionCall: { name: 'get_time', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { output: 'Sunny' } } },
          { functionResponse: { name: 'get_time', response: { error: 'no clock' } } },
        ],
      },
    ]);
    expect(report).toEqual({ dropped: [], approximated: [] });
  });

  it('thinking: Gemini\'s thoughts go back as thoughts, another provider\'s are dropped and reported', () => {
    const { body, report } = toGeminiRequest(
      request({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Q' }] },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', text: 'Anthropic reasoning', signature: 'EqQBCkYIBxgCKkA' },
              { type: 'thinking', text: 'Gemini summary', signature: 'gemini:ABC' },
              { type: 'text', text: 'A' },
            ],
          },
          { role: 'user', content: [{ type: 'text', text: 'Q2' }] },
        ],
      }),
    );
    expect((body.contents as unknown[])[1]).toEqual({ role: 'model', parts: [{ text: 'Gemini summary', thought: true, thoughtSignature: 'ABC' }, { text: 'A' }] });
    expect(report.dropped).toEqual(['thinking']);
  });

  it('reports what Gemini cannot carry: cache_control, unknown parts, hosted tools, user, extra fields', () => {
    const { report } = toGeminiRequest(
      request({
        system: [{ type: 'text', text: 'S', cacheControl: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }, { type: 'unknown', origin: 'messages:document', raw: {} }] }],
        user: 'u1',
        extra: { tools: [{ type: 'web_search_20250305', name: 'web_search' }], context_management: {} },
      }),
    );
    expect(report.dropped).toEqual(['messages:document', 'cache_control', 'user', 'tools.web_search', 'context_management']);
  });
});

describe('toGeminiRequest: generation config', () => {
  it('sampling, limits and stop sequences (at most five)', () => {
    const { body, report } = toGeminiRequest(
      request({ maxOutputTokens: 100, temperature: 0.5, topP: 0.9, topK: 40, seed: 7, presencePenalty: 0.1, frequencyPenalty: 0.2, stop: ['a', 'b', 'c', 'd', 'e', 'f'] }),
    );
    expect(body.generationConfig).toEqual({
      maxOutputTokens: 100,
      temperature: 0.5,
      topP: 0.9,
      topK: 40,
      stopSequences: ['a', 'b', 'c', 'd', 'e'],
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      seed: 7,
    });
    expect(report.approximated).toEqual(['stop']);
  });

  it('JSON mode and JSON schema', () => {
    expect(toGeminiRequest(request({ responseFormat: { type: 'json_object' } })).body.generationConfig).toEqual({ responseMimeType: 'application/json' });
    const schema = { type: 'object', properties: { a: { type: 'string' } } };
    expect(toGeminiRequest(request({ responseFormat: { type: 'json_schema', name: 'x', schema } })).body.generationConfig).toEqual({ responseMimeType: 'application/json', responseJsonSchema: schema });
  });

  it('thinking: a budget as is, an effort approximated, disabled as a zero budget', () => {
    expect(toGeminiRequest(request({ reasoning: { budgetTokens: 2048 } })).body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } });
    const effort = toGeminiRequest(request({ reasoning: { effort: 'high' } }));
    expect(effort.body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 24576, includeThoughts: true } });
    expect(effort.report.approximated).toEqual(['reasoning.effort']);
    expect(toGeminiRequest(request({ reasoning: { disabled: true } })).body.generationConfig).toEqual({ thinkingConfig: { thinkingBudget: 0 } });
  });

  it('tools: function declarations with their JSON schema, tool choice as functionCallingConfig', () => {
    const parameters = { type: 'object', properties: { q: { type: 'string' } }, additionalProperties: false };
    const { body, report } = toGeminiRequest(
      request({ tools: [{ name: 'search', description: 'Searches', parameters }], toolChoice: { type: 'tool', name: 'search' }, parallelToolCalls: false }),
    );
    expect(body.tools).toEqual([{ functionDeclarations: [{ name: 'search', description: 'Searches', parametersJsonSchema: parameters }] }]);
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['search'] } });
    expect(report.dropped).toEqual(['parallel_tool_calls']);
    expect(toGeminiRequest(request({ tools: [{ name: 's', parameters }], toolChoice: { type: 'none' } })).body.toolConfig).toEqual({ functionCallingConfig: { mode: 'NONE' } });
    expect(toGeminiRequest(request({ toolChoice: { type: 'required' } })).report.dropped).toEqual(['tool_choice']);
  });
});
