import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { CanonicalStreamEvent } from '../canonical.js';
import { SseParser, formatSseFrame } from '../../sse/sse-parser.js';
import { ChatStreamEncoder, type ChatStreamEncoderOptions, type ChatStreamFrame } from './chat-stream-encoder.js';
import { OpenAIChatStreamDecoder } from './openai-stream.js';

const base = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1700000000, model: 'gpt-4o' } as const;

const toolCallEvents: CanonicalStreamEvent[] = [
  { type: 'start', id: 'msg_01A', model: 'claude-x', usage: { inputTokens: 20, outputTokens: 1 } },
  { type: 'text-start', index: 0 },
  { type: 'text-delta', index: 0, text: 'Let me check.' },
  { type: 'part-end', index: 0 },
  { type: 'tool-call-start', index: 1, id: 'toolu_01B', name: 'get_weather' },
  { type: 'tool-call-delta', index: 1, argumentsDelta: '{"city":' },
  { type: 'tool-call-delta', index: 1, argumentsDelta: ' "Paris"}' },
  { type: 'part-end', index: 1 },
  { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 20, outputTokens: 9 } },
];

function encode(events: CanonicalStreamEvent[], options: Partial<ChatStreamEncoderOptions> = {}): ChatStreamFrame[] {
  const encoder = new ChatStreamEncoder({ id: base.id, model: base.model, created: base.created, includeUsage: false, ...options });
  return [...events.flatMap((event) => encoder.push(event)), ...encoder.end()];
}

/** The bytes the compat layer would write for these frames. */
function writeSse(frames: ChatStreamFrame[]): string {
  const body = frames.map((frame) => formatSseFrame(JSON.stringify(frame))).join('');
  return 'error' in (frames.at(-1) ?? {}) ? body : `${body}${formatSseFrame('[DONE]')}`;
}

describe('ChatStreamEncoder', () => {
  describe('frame sequence', () => {
    it('writes role, content, tool calls, finish and usage chunks as OpenAI does', () => {
      expect(encode(toolCallEvents, { includeUsage: true })).toEqual([
        { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }], usage: null },
        { ...base, choices: [{ index: 0, delta: { content: 'Let me check.' }, logprobs: null, finish_reason: null }], usage: null },
        {
          ...base,
          choices: [
            {
              index: 0,
              delta: { tool_calls: [{ index: 0, id: 'toolu_01B', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
              logprobs: null,
              finish_reason: null,
            },
          ],
          usage: null,
        },
        {
          ...base,
          choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }, logprobs: null, finish_reason: null }],
          usage: null,
        },
        {
          ...base,
          choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: ' "Paris"}' } }] }, logprobs: null, finish_reason: null }],
          usage: null,
        },
        { ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }], usage: null },
        {
          ...base,
          choices: [],
          usage: {
            prompt_tokens: 20,
            completion_tokens: 9,
            total_tokens: 29,
            prompt_tokens_details: { cached_tokens: 0 },
            completion_tokens_details: { reasoning_tokens: 0 },
          },
        },
      ]);
    });

    it('leaves out the usage key and the usage chunk when the client did not ask for usage', () => {
      const frames = encode(toolCallEvents);
      expect(frames).toHaveLength(6);
      for (const frame of frames) expect(frame).not.toHaveProperty('usage');
      expect(frames.at(-1)).toEqual({ ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: 'tool_calls' }] });
    });

    it('numbers tool calls among tool calls only, interleaved or not', () => {
      const frames = encode([
        { type: 'start', id: 'x', model: 'y' },
        { type: 'thinking-start', index: 0 },
        { type: 'thinking-delta', index: 0, text: 'hmm' },
        { type: 'part-end', index: 0 },
        { type: 'tool-call-start', index: 1, id: 'call_a', name: 'a' },
        { type: 'tool-call-start', index: 2, id: 'call_b', name: 'b' },
        { type: 'tool-call-delta', index: 2, argumentsDelta: '{}' },
        { type: 'tool-call-delta', index: 1, argumentsDelta: '{}' },
        { type: 'part-end', index: 1 },
        { type: 'part-end', index: 2 },
        { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 1, outputTokens: 1 } },
      ]);
      const toolCalls = frames.flatMap((frame) => ('choices' in frame ? frame.choices.flatMap((choice) => choice.delta.tool_calls ?? []) : []));
      expect(toolCalls).toEqual([
        { index: 0, id: 'call_a', type: 'function', function: { name: 'a', arguments: '' } },
        { index: 1, id: 'call_b', type: 'function', function: { name: 'b', arguments: '' } },
        { index: 1, function: { arguments: '{}' } },
        { index: 0, function: { arguments: '{}' } },
      ]);
    });

    it.each([
      ['stop', 'stop'],
      ['stop_sequence', 'stop'],
      ['pause', 'stop'],
      ['error', 'stop'],
      ['length', 'length'],
      ['content_filter', 'content_filter'],
    ] as const)('writes finish reason %s as %s', (canonical, chat) => {
      const frames = encode([{ type: 'finish', finishReason: canonical, usage: { inputTokens: 0, outputTokens: 0 } }]);
      expect(frames.at(-1)).toMatchObject({ choices: [{ finish_reason: chat }] });
    });
  });

  describe('thinking', () => {
    const thinkingEvents: CanonicalStreamEvent[] = [
      { type: 'start', id: 'x', model: 'y' },
      { type: 'thinking-start', index: 0 },
      { type: 'thinking-delta', index: 0, text: 'Let me think.' },
      { type: 'thinking-signature', index: 0, signature: 'sig' },
      { type: 'part-end', index: 0 },
      { type: 'text-start', index: 1 },
      { type: 'text-delta', index: 1, text: '4' },
      { type: 'part-end', index: 1 },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 3, outputTokens: 5, reasoningTokens: 4 } },
    ];

    it('is dropped by default', () => {
      expect(encode(thinkingEvents).map((frame) => ('choices' in frame ? frame.choices[0]?.delta : frame))).toEqual([
        { role: 'assistant', content: '' },
        { content: '4' },
        {},
      ]);
    });

    it('is sent as reasoning_content when asked for', () => {
      expect(encode(thinkingEvents, { includeReasoning: true }).map((frame) => ('choices' in frame ? frame.choices[0]?.delta : frame))).toEqual([
        { role: 'assistant', content: '' },
        { reasoning_content: 'Let me think.' },
        { content: '4' },
        {},
      ]);
    });
  });

  describe('errors and incomplete streams', () => {
    it('answers an error event with the in-band error payload and nothing after it', () => {
      const encoder = new ChatStreamEncoder({ ...base, includeUsage: true });
      encoder.push({ type: 'start', id: 'x', model: 'y' });
      expect(encoder.push({ type: 'error', message: 'Overloaded', errorType: 'overloaded_error' })).toEqual([
        { error: { message: 'Overloaded', type: 'server_error', param: null, code: null } },
      ]);
      expect(encoder.failed).toBe(true);
      expect(encoder.push({ type: 'text-delta', index: 0, text: 'late' })).toEqual([]);
      expect(encoder.end()).toEqual([]);
    });

    it('closes a stream that ended without finish with a finish chunk', () => {
      const frames = encode([{ type: 'start', id: 'x', model: 'y' }, { type: 'text-delta', index: 0, text: 'partial' }], { includeUsage: true });
      expect(frames.map((frame) => ('choices' in frame ? (frame.choices.length === 0 ? 'usage' : frame.choices[0].finish_reason) : 'error'))).toEqual([
        null,
        null,
        'stop',
        'usage',
      ]);
    });

    it('writes the role chunk even when the first event is not start', () => {
      expect(encode([{ type: 'text-delta', index: 0, text: 'Hi' }])[0]).toEqual({
        ...base,
        choices: [{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }],
      });
    });
  });

  describe('usage', () => {
    it('tracks the totals for billing', () => {
      const encoder = new ChatStreamEncoder({ ...base, includeUsage: false });
      encoder.push({ type: 'start', id: 'x', model: 'y', usage: { inputTokens: 20, cachedInputTokens: 5 } });
      expect(encoder.usage).toEqual({ inputTokens: 20, outputTokens: 0, cachedInputTokens: 5 });
      encoder.push({ type: 'finish', finishReason: 'stop', usage: { inputTokens: 20, outputTokens: 9, cachedInputTokens: 5 } });
      expect(encoder.usage).toEqual({ inputTokens: 20, outputTokens: 9, cachedInputTokens: 5 });
      expect(encoder.finished).toBe(true);
    });
  });

  describe('contract with the decoder and the official SDK', () => {
    it('decodes back to the same canonical events', () => {
      const parser = new SseParser();
      const decoder = new OpenAIChatStreamDecoder();
      const decoded = [...parser.push(writeSse(encode(toolCallEvents, { includeUsage: true }))), ...parser.end()].flatMap((event) =>
        decoder.push(event),
      );
      expect(decoded).toEqual([
        { type: 'start', id: 'chatcmpl-1', model: 'gpt-4o' },
        ...toolCallEvents.slice(1, -1),
        {
          type: 'finish',
          finishReason: 'tool_calls',
          usage: { inputTokens: 20, outputTokens: 9, cachedInputTokens: 0, reasoningTokens: 0 },
        },
      ]);
    });

    function createClient(body: string): OpenAI {
      return new OpenAI({
        apiKey: 'test',
        baseURL: 'http://gateway.test/v1',
        maxRetries: 0,
        fetch: async () => new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
      });
    }

    it("is accepted by openai-node's stream helper", async () => {
      const stream = createClient(writeSse(encode(toolCallEvents, { includeUsage: true }))).chat.completions.stream({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
        stream_options: { include_usage: true },
      });
      const completion = await stream.finalChatCompletion();
      expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
      expect(completion.choices[0]?.message.content).toBe('Let me check.');
      expect(completion.choices[0]?.message.tool_calls).toEqual([
        expect.objectContaining({ id: 'toolu_01B', type: 'function', function: expect.objectContaining({ name: 'get_weather', arguments: '{"city": "Paris"}' }) }),
      ]);
      expect(completion.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 });
    });

    it('surfaces the in-band error in openai-node as an APIError', async () => {
      const frames = encode([
        { type: 'start', id: 'x', model: 'y' },
        { type: 'text-delta', index: 0, text: 'Once' },
        { type: 'error', message: 'The provider failed.' },
      ]);
      const stream = await createClient(writeSse(frames)).chat.completions.create({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
      });
      const read = async () => {
        for await (const _chunk of stream) {
          // Drain until the SDK throws.
        }
      };
      await expect(read()).rejects.toThrow('The provider failed.');
    });
  });
});
