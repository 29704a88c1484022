import { describe, expect, it } from 'vitest';
import { parseOrThrow } from '../../validation.js';
import { fromOpenAIChatRequest, readImageSource } from './from-openai-request.js';
import { chatCompletionRequestSchema } from './openai.wire.js';

/** Validates like the route does, then translates. */
function translate(body: Record<string, unknown>) {
  return fromOpenAIChatRequest(parseOrThrow(chatCompletionRequestSchema, { model: 'gpt-4o', ...body }));
}

const hello = [{ role: 'user', content: 'Hello' }];

describe('fromOpenAIChatRequest', () => {
  describe('system and developer messages', () => {
    it('moves leading system and developer messages into system, in order', () => {
      const { request, report } = translate({
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }, { type: 'text', text: 'No emoji.' }] },
          { role: 'user', content: 'Hi' },
        ],
      });
      expect(request).toEqual({
        model: 'gpt-4o',
        stream: false,
        system: [
          { type: 'text', text: 'You are terse.' },
          { type: 'text', text: 'Answer in French.' },
          { type: 'text', text: 'No emoji.' },
        ],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      });
      expect(report).toEqual({ dropped: [], approximated: [] });
    });

    it('keeps a system message in the middle of the conversation in place', () => {
      const { request } = translate({
        messages: [
          { role: 'user', content: 'Hi' },
          { role: 'developer', content: 'Switch to English.' },
        ],
      });
      expect(request.system).toBeUndefined();
      expect(request.messages).toEqual([
        { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
        { role: 'system', content: [{ type: 'text', text: 'Switch to English.' }] },
      ]);
    });

    it('reports a system name and non-text system parts as dropped', () => {
      const { request, report } = translate({
        messages: [
          { role: 'system', name: 'policy', content: [{ type: 'text', text: 'Rules.' }, { type: 'image_url', image_url: { url: 'https://x/y.png' } }] },
          ...hello,
        ],
      });
      expect(request.system).toEqual([{ type: 'text', text: 'Rules.' }]);
      expect(report.dropped).toEqual(['messages[0].content[1]', 'messages[0].name']);
    });
  });

  describe('user messages', () => {
    it('reads text, images by URL and by data URL, and keeps unknown parts', () => {
      const audio = { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } };
      const { request } = translate({
        messages: [
          {
            role: 'user',
            name: 'ada',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'high' } },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
              audio,
            ],
          },
        ],
      });
      expect(request.messages).toEqual([
        {
          role: 'user',
          name: 'ada',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.png' }, detail: 'high' },
            { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'unknown', origin: 'chat:input_audio', raw: audio },
          ],
        },
      ]);
    });
  });

  describe('assistant messages', () => {
    it('reads text and tool calls, with empty arguments as {}', () => {
      const { request } = translate({
        messages: [
          ...hello,
          {
            role: 'assistant',
            content: 'Let me check.',
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '' } },
            ],
          },
        ],
      });
      expect(request.messages[1]).toEqual({
        role: 'assistant',
        content: [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { type: 'tool_call', id: 'call_2', name: 'get_time', arguments: '{}' },
        ],
      });
    });

    it('reads null and empty content as no text, and keeps refusals as chat parts', () => {
      const { request } = translate({
        messages: [
          ...hello,
          { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
          { role: 'assistant', content: '', refusal: "I can't." },
          { role: 'assistant', content: [{ type: 'text', text: 'a' }, { type: 'refusal', refusal: 'b' }], name: 'bot' },
        ],
      });
      expect(request.messages.slice(1)).toEqual([
        { role: 'assistant', content: [{ type: 'tool_call', id: 'c', name: 'f', arguments: '{}' }] },
        { role: 'assistant', content: [{ type: 'unknown', origin: 'chat:refusal', raw: { type: 'refusal', refusal: "I can't." } }] },
        {
          role: 'assistant',
          name: 'bot',
          content: [
            { type: 'text', text: 'a' },
            { type: 'unknown', origin: 'chat:refusal', raw: { type: 'refusal', refusal: 'b' } },
          ],
        },
      ]);
    });

    it('reports assistant audio as dropped', () => {
      const { report } = translate({ messages: [...hello, { role: 'assistant', content: 'x', audio: { id: 'audio_1' } }] });
      expect(report.dropped).toEqual(['messages[1].audio']);
    });
  });

  describe('tool and function messages', () => {
    it('reads tool results with their call id', () => {
      const { request } = translate({
        messages: [
          ...hello,
          { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
          { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '12:00' }] },
        ],
      });
      expect(request.messages.slice(1)).toEqual([
        { role: 'tool', toolCallId: 'call_1', content: [{ type: 'text', text: '{"temp":21}' }] },
        { role: 'tool', toolCallId: 'call_2', content: [{ type: 'text', text: '12:00' }] },
      ]);
    });

    it('pairs the legacy function_call and function message by name', () => {
      const { request } = translate({
        messages: [
          ...hello,
          { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { role: 'function', name: 'get_weather', content: 'sunny' },
          { role: 'function', name: 'noop', content: null },
        ],
      });
      expect(request.messages.slice(1)).toEqual([
        { role: 'assistant', content: [{ type: 'tool_call', id: 'get_weather', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
        { role: 'tool', toolCallId: 'get_weather', name: 'get_weather', content: [{ type: 'text', text: 'sunny' }] },
        { role: 'tool', toolCallId: 'noop', name: 'noop', content: [] },
      ]);
    });
  });

  describe('sampling and limits', () => {
    it('reads every modelled parameter', () => {
      const { request } = translate({
        messages: hello,
        stream: true,
        stream_options: { include_usage: true },
        max_tokens: 100,
        max_completion_tokens: 200,
        temperature: 0.2,
        top_p: 0.9,
        stop: 'END',
        presence_penalty: 0.5,
        frequency_penalty: -0.5,
        seed: 42,
        reasoning_effort: 'low',
        user: 'user-1',
      });
      expect(request).toEqual({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
        stream: true,
        maxOutputTokens: 200,
        temperature: 0.2,
        topP: 0.9,
        stop: ['END'],
        presencePenalty: 0.5,
        frequencyPenalty: -0.5,
        seed: 42,
        reasoning: { effort: 'low' },
        user: 'user-1',
      });
    });

    it('falls back to max_tokens and prefers safety_identifier over user', () => {
      const { request } = translate({ messages: hello, max_tokens: 50, user: 'old', safety_identifier: 'new', stop: ['a', 'b'] });
      expect(request).toMatchObject({ maxOutputTokens: 50, user: 'new', stop: ['a', 'b'] });
    });

    it('reads null parameters as not given', () => {
      const { request } = translate({ messages: hello, temperature: null, stop: null, max_tokens: null, tools: null, n: null });
      expect(request).toEqual({ model: 'gpt-4o', messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }], stream: false });
    });
  });

  describe('tools', () => {
    const weather = {
      type: 'function',
      function: { name: 'get_weather', description: 'Weather now', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true },
    };

    it('reads tools, tool_choice and parallel_tool_calls', () => {
      const { request } = translate({
        messages: hello,
        tools: [weather, { type: 'function', function: { name: 'ping' } }],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        parallel_tool_calls: false,
      });
      expect(request).toMatchObject({
        tools: [
          { name: 'get_weather', description: 'Weather now', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: true },
          { name: 'ping', parameters: { type: 'object', properties: {} } },
        ],
        toolChoice: { type: 'tool', name: 'get_weather' },
        parallelToolCalls: false,
      });
    });

    it.each([
      ['auto', { type: 'auto' }],
      ['none', { type: 'none' }],
      ['required', { type: 'required' }],
    ])('reads tool_choice %s', (choice, expected) => {
      expect(translate({ messages: hello, tools: [weather], tool_choice: choice }).request.toolChoice).toEqual(expected);
    });

    it('approximates allowed_tools by its mode', () => {
      const { request, report } = translate({
        messages: hello,
        tools: [weather],
        tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'get_weather' } }] } },
      });
      expect(request.toolChoice).toEqual({ type: 'required' });
      expect(report.approximated).toEqual(['tool_choice']);
    });

    it('reads the legacy functions and function_call when tools are absent', () => {
      const { request } = translate({
        messages: hello,
        functions: [{ name: 'get_weather', parameters: { type: 'object' } }],
        function_call: { name: 'get_weather' },
      });
      expect(request).toMatchObject({
        tools: [{ name: 'get_weather', parameters: { type: 'object' } }],
        toolChoice: { type: 'tool', name: 'get_weather' },
      });
      expect(request.extra).toBeUndefined();
    });

    it('reports the legacy fields as dropped when their successors are present', () => {
      const { request, report } = translate({
        messages: hello,
        tools: [weather],
        tool_choice: 'auto',
        functions: [{ name: 'old' }],
        function_call: 'none',
      });
      expect(request.tools?.map((tool) => tool.name)).toEqual(['get_weather']);
      expect(request.toolChoice).toEqual({ type: 'auto' });
      expect(report.dropped).toEqual(['functions', 'function_call']);
    });
  });

  describe('response_format', () => {
    it.each([
      [{ type: 'text' }, { type: 'text' }],
      [{ type: 'json_object' }, { type: 'json_object' }],
      [
        { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
        { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true },
      ],
      [{ type: 'json_schema', json_schema: { name: 'free' } }, { type: 'json_schema', name: 'free', schema: {} }],
    ])('reads %j', (format, expected) => {
      expect(translate({ messages: hello, response_format: format }).request.responseFormat).toEqual(expected);
    });

    it('reports the schema description as dropped', () => {
      const { report } = translate({
        messages: hello,
        response_format: { type: 'json_schema', json_schema: { name: 'a', description: 'An answer', schema: {} } },
      });
      expect(report.dropped).toEqual(['response_format.json_schema.description']);
    });
  });

  describe('fields not modelled', () => {
    it('keeps them in extra by wire name, with n only above 1', () => {
      const { request } = translate({
        messages: hello,
        n: 3,
        logit_bias: { '50256': -100 },
        logprobs: true,
        top_logprobs: 2,
        service_tier: 'flex',
        metadata: { team: 'a' },
        store: true,
        prediction: { type: 'content', content: 'x' },
        modalities: ['text'],
        prompt_cache_key: 'k',
        future_parameter: { enabled: true },
        ignored_null: null,
      });
      expect(request.extra).toEqual({
        n: 3,
        logit_bias: { '50256': -100 },
        logprobs: true,
        top_logprobs: 2,
        service_tier: 'flex',
        metadata: { team: 'a' },
        store: true,
        prediction: { type: 'content', content: 'x' },
        modalities: ['text'],
        prompt_cache_key: 'k',
        future_parameter: { enabled: true },
      });
      expect(translate({ messages: hello, n: 1 }).request.extra).toBeUndefined();
    });

    it('does not let a __proto__ key reach extra', () => {
      const body = JSON.parse('{"model":"gpt-4o","messages":[{"role":"user","content":"Hi"}],"__proto__":{"polluted":true}}');
      const { request } = fromOpenAIChatRequest(parseOrThrow(chatCompletionRequestSchema, body));
      expect(request.extra).toBeUndefined();
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });
  });
});

describe('readImageSource', () => {
  it.each([
    ['data:image/jpeg;base64,/9j/4AAQ', { kind: 'base64', mediaType: 'image/jpeg', data: '/9j/4AAQ' }],
    ['data:image/webp;name=a.webp;base64,UklGR', { kind: 'base64', mediaType: 'image/webp', data: 'UklGR' }],
    ['data:;base64,AAAA', { kind: 'base64', mediaType: 'application/octet-stream', data: 'AAAA' }],
    ['data:image/svg+xml,%3Csvg%3E', { kind: 'url', url: 'data:image/svg+xml,%3Csvg%3E' }],
    ['http://example.com/a.png', { kind: 'url', url: 'http://example.com/a.png' }],
  ])('reads %s', (url, expected) => {
    expect(readImageSource(url)).toEqual(expected);
  });
});
