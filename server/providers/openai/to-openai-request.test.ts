import { describe, expect, it } from 'vitest';
import type { CanonicalMessage, CanonicalRequest } from '../canonical.js';
import { mapBudgetToEffort, toOpenAIChatRequest } from './to-openai-request.js';

const hello: CanonicalMessage = { role: 'user', content: [{ type: 'text', text: 'Hello' }] };

function request(fields: Partial<CanonicalRequest> = {}): CanonicalRequest {
  return { model: 'gpt-4o', messages: [hello], stream: false, ...fields };
}

describe('toOpenAIChatRequest', () => {
  describe('system', () => {
    it('writes the system prompt first, as a string when it is one part', () => {
      const { body } = toOpenAIChatRequest(request({ system: [{ type: 'text', text: 'Be terse.' }] }));
      expect(body).toEqual({
        model: 'gpt-4o',
        messages: [
          { role: 'system', content: 'Be terse.' },
          { role: 'user', content: 'Hello' },
        ],
      });
    });

    it('writes several system parts as text parts and drops cache_control', () => {
      const { body, report } = toOpenAIChatRequest(
        request({
          system: [
            { type: 'text', text: 'A', cacheControl: { type: 'ephemeral' } },
            { type: 'text', text: 'B', cacheControl: { type: 'ephemeral' } },
          ],
          messages: [hello, { role: 'system', content: [{ type: 'text', text: 'Mid' }] }],
        }),
      );
      expect(body.messages).toEqual([
        { role: 'system', content: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }] },
        { role: 'user', content: 'Hello' },
        { role: 'system', content: 'Mid' },
      ]);
      expect(report.dropped).toEqual(['cache_control']);
    });
  });

  describe('user messages', () => {
    it('writes text, images and chat parts, and drops parts from other formats', () => {
      const audio = { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } };
      const { body, report } = toOpenAIChatRequest(
        request({
          messages: [
            {
              role: 'user',
              name: 'ada',
              content: [
                { type: 'text', text: 'Look' },
                { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.png' }, detail: 'low' },
                { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
                { type: 'unknown', origin: 'chat:input_audio', raw: audio },
                { type: 'unknown', origin: 'messages:document', raw: { type: 'document' } },
              ],
            },
          ],
        }),
      );
      expect(body.messages).toEqual([
        {
          role: 'user',
          name: 'ada',
          content: [
            { type: 'text', text: 'Look' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'low' } },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            audio,
          ],
        },
      ]);
      expect(report.dropped).toEqual(['messages:document']);
    });
  });

  describe('assistant messages', () => {
    it('writes tool calls with null content when there is no text', () => {
      const { body } = toOpenAIChatRequest(
        request({
          messages: [
            hello,
            { role: 'assistant', content: [{ type: 'tool_call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
          ],
        }),
      );
      expect((body.messages as unknown[])[1]).toEqual({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
      });
    });

    it('writes text beside tool calls, drops thinking and keeps refusal parts', () => {
      const { body, report } = toOpenAIChatRequest(
        request({
          messages: [
            hello,
            {
              role: 'assistant',
              name: 'bot',
              content: [
                { type: 'thinking', text: 'Let me think', signature: 'sig' },
                { type: 'text', text: 'Checking.' },
                { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{}' },
              ],
            },
            { role: 'assistant', content: [{ type: 'unknown', origin: 'chat:refusal', raw: { type: 'refusal', refusal: 'No.' } }] },
            { role: 'assistant', content: [] },
          ],
        }),
      );
      expect((body.messages as unknown[]).slice(1)).toEqual([
        {
          role: 'assistant',
          content: 'Checking.',
          name: 'bot',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] },
        { role: 'assistant', content: '' },
      ]);
      expect(report.dropped).toEqual(['thinking']);
    });
  });

  describe('tool messages', () => {
    it('writes tool results and moves returned images into a user message after the run of tool messages', () => {
      const { body, report } = toOpenAIChatRequest(
        request({
          messages: [
            hello,
            {
              role: 'assistant',
              content: [
                { type: 'tool_call', id: 'a', name: 'screenshot', arguments: '{}' },
                { type: 'tool_call', id: 'b', name: 'clock', arguments: '{}' },
              ],
            },
            {
              role: 'tool',
              toolCallId: 'a',
              content: [
                { type: 'text', text: 'Here it is' },
                { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAAA' } },
              ],
            },
            { role: 'tool', toolCallId: 'b', content: [{ type: 'text', text: 'noon' }], isError: true },
            { role: 'user', content: [{ type: 'text', text: 'Thanks' }] },
          ],
        }),
      );
      expect((body.messages as unknown[]).slice(2)).toEqual([
        { role: 'tool', tool_call_id: 'a', content: 'Here it is' },
        { role: 'tool', tool_call_id: 'b', content: 'noon' },
        { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] },
        { role: 'user', content: 'Thanks' },
      ]);
      expect(report).toEqual({ dropped: ['is_error'], approximated: ['tool_result.image'] });
    });

    it('writes an empty tool result as an empty string and leaves out the tool name', () => {
      const { body } = toOpenAIChatRequest(request({ messages: [hello, { role: 'tool', toolCallId: 'x', name: 'f', content: [] }] }));
      expect((body.messages as unknown[])[1]).toEqual({ role: 'tool', tool_call_id: 'x', content: '' });
    });
  });

  describe('parameters', () => {
    it('writes every parameter chat carries under its wire name', () => {
      const { body, report } = toOpenAIChatRequest(
        request({
          maxOutputTokens: 256,
          temperature: 0.3,
          topP: 0.8,
          stop: ['END'],
          presencePenalty: 0.1,
          frequencyPenalty: 0.2,
          seed: 7,
          tools: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object' }, strict: true }],
          toolChoice: { type: 'tool', name: 'get_weather' },
          parallelToolCalls: false,
          responseFormat: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true },
          reasoning: { effort: 'high' },
          user: 'user-1',
          stream: true,
        }),
      );
      expect(body).toEqual({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'Hello' }],
        max_completion_tokens: 256,
        temperature: 0.3,
        top_p: 0.8,
        stop: ['END'],
        presence_penalty: 0.1,
        frequency_penalty: 0.2,
        seed: 7,
        tools: [{ type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object' }, strict: true } }],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        parallel_tool_calls: false,
        response_format: { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
        reasoning_effort: 'high',
        user: 'user-1',
        stream: true,
        stream_options: { include_usage: true },
      });
      expect(report).toEqual({ dropped: [], approximated: [] });
    });

    it('can write the limit as max_tokens for servers that know only that', () => {
      expect(toOpenAIChatRequest(request({ maxOutputTokens: 10 }), { maxTokensField: 'max_tokens' }).body).toMatchObject({ max_tokens: 10 });
    });

    it('reports top_k as dropped and more than 4 stop sequences as approximated', () => {
      const { body, report } = toOpenAIChatRequest(request({ topK: 40, stop: ['1', '2', '3', '4', '5'] }));
      expect(body.stop).toEqual(['1', '2', '3', '4']);
      expect(report).toEqual({ dropped: ['top_k'], approximated: ['stop'] });
    });

    it('leaves out tool_choice and parallel_tool_calls without tools', () => {
      const { body, report } = toOpenAIChatRequest(request({ tools: [], toolChoice: { type: 'required' }, parallelToolCalls: true }));
      expect(body).toEqual({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Hello' }] });
      expect(report.dropped).toEqual(['tool_choice']);
      expect(toOpenAIChatRequest(request({ toolChoice: { type: 'none' } })).report.dropped).toEqual([]);
    });

    it('gives a json_schema without a name the name "response"', () => {
      expect(toOpenAIChatRequest(request({ responseFormat: { type: 'json_schema', name: '', schema: {} } })).body.response_format).toEqual({
        type: 'json_schema',
        json_schema: { name: 'response', schema: {} },
      });
    });
  });

  describe('reasoning', () => {
    it('approximates a thinking budget by an effort', () => {
      const { body, report } = toOpenAIChatRequest(request({ reasoning: { budgetTokens: 10000 } }));
      expect(body.reasoning_effort).toBe('medium');
      expect(report.approximated).toEqual(['reasoning.budget_tokens']);
    });

    it('prefers an effort to a budget and reports the budget and summary as dropped', () => {
      const { body, report } = toOpenAIChatRequest(request({ reasoning: { effort: 'low', budgetTokens: 2000, summary: 'auto' } }));
      expect(body.reasoning_effort).toBe('low');
      expect(report.dropped).toEqual(['reasoning.summary', 'reasoning.budget_tokens']);
    });

    it('cannot switch reasoning off and says so', () => {
      const { body, report } = toOpenAIChatRequest(request({ reasoning: { disabled: true } }));
      expect(body).not.toHaveProperty('reasoning_effort');
      expect(report.approximated).toEqual(['reasoning.disabled']);
    });

    it.each([
      [1024, 'low'],
      [4095, 'low'],
      [4096, 'medium'],
      [16383, 'medium'],
      [16384, 'high'],
      [64000, 'high'],
    ] as const)('maps a budget of %i tokens to %s', (budget, effort) => {
      expect(mapBudgetToEffort(budget)).toBe(effort);
    });
  });

  describe('extra', () => {
    it('carries chat fields with chat values and reports the rest', () => {
      const { body, report } = toOpenAIChatRequest(
        request({
          extra: {
            logprobs: true,
            n: 2,
            service_tier: 'standard_only',
            prompt_cache_key: 'k',
            anthropic_beta: ['x'],
            model: 'other',
          },
        }),
      );
      expect(body).toEqual({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'Hello' }],
        logprobs: true,
        n: 2,
        prompt_cache_key: 'k',
      });
      expect(report.dropped).toEqual(['service_tier', 'anthropic_beta']);
    });
  });
});
