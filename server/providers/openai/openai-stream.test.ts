import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CanonicalStreamEvent } from '../canonical.js';
import type { SseEvent } from '../../sse/sse-parser.js';
import { OpenAIChatStreamDecoder } from './openai-stream.js';
import { decodeAtEverySplit, decodeSse } from '../../../test/support/stream-replay.js';

const fixturesDirectory = new URL('./__fixtures__/', import.meta.url);

function readFixture(name: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL(name, fixturesDirectory)));
}

/** Bytes → SseParser → decoder, the way the upstream client feeds it. */
const decodeChunks = (chunks: Uint8Array[]): CanonicalStreamEvent[] => decodeSse(() => new OpenAIChatStreamDecoder(), chunks);

function decodeEvents(events: SseEvent[]): CanonicalStreamEvent[] {
  const decoder = new OpenAIChatStreamDecoder();
  return [...events.flatMap((event) => decoder.push(event)), ...decoder.end()];
}

function data(payload: unknown): SseEvent {
  return { event: undefined, data: typeof payload === 'string' ? payload : JSON.stringify(payload) };
}

function chunk(delta: Record<string, unknown>, finishReason: string | null = null): SseEvent {
  return data({
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1700000000,
    model: 'gpt-4o',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
}

const expectedByFixture: Record<string, CanonicalStreamEvent[]> = {
  'openai-text.1.sse': [
    { type: 'start', id: 'chatcmpl-BkT2f8mXhQ4nR0aVYc1LpZs9eJwUu', model: 'gpt-4o-2024-08-06' },
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, text: 'Bonjour' },
    { type: 'text-delta', index: 0, text: ' à' },
    { type: 'text-delta', index: 0, text: ' vous' },
    { type: 'text-delta', index: 0, text: ' 👋' },
    { type: 'text-delta', index: 0, text: '!' },
    { type: 'part-end', index: 0 },
    // No usage chunk (the request had no include_usage): totals are unknown, finish comes at [DONE].
    { type: 'finish', finishReason: 'stop', usage: { inputTokens: 0, outputTokens: 0 } },
  ],
  'openai-tool-calls.1.sse': [
    { type: 'start', id: 'chatcmpl-BkT3aL0qWv7yE2nHs5RcX1mGdKfPo', model: 'gpt-4.1-2025-04-14' },
    { type: 'tool-call-start', index: 0, id: 'call_Xq3uV9bN2mKcP7tR1sYwZ0aD', name: 'get_weather' },
    { type: 'tool-call-start', index: 1, id: 'call_Hf8eL4jQ6oWs0gTb5nAzR2cM', name: 'get_local_time' },
    { type: 'tool-call-delta', index: 0, argumentsDelta: '{"ci' },
    { type: 'tool-call-delta', index: 1, argumentsDelta: '{"time' },
    { type: 'tool-call-delta', index: 0, argumentsDelta: 'ty": "Pa' },
    { type: 'tool-call-delta', index: 1, argumentsDelta: 'zone": "Eu' },
    { type: 'tool-call-delta', index: 0, argumentsDelta: 'ris"}' },
    { type: 'tool-call-delta', index: 1, argumentsDelta: 'rope/Paris"}' },
    { type: 'part-end', index: 0 },
    { type: 'part-end', index: 1 },
    {
      type: 'finish',
      finishReason: 'tool_calls',
      usage: { inputTokens: 82, outputTokens: 51, cachedInputTokens: 0, reasoningTokens: 0 },
    },
  ],
  'openai-usage.1.sse': [
    { type: 'start', id: 'chatcmpl-BkT4cY9sDn3pW1xKe6QjU0rVbHgLa', model: 'o4-mini-2025-04-16' },
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, text: 'The capital' },
    { type: 'text-delta', index: 0, text: ' of France' },
    { type: 'text-delta', index: 0, text: ' is Paris ✓.' },
    { type: 'part-end', index: 0 },
    {
      type: 'finish',
      finishReason: 'stop',
      usage: { inputTokens: 1432, outputTokens: 212, cachedInputTokens: 1280, reasoningTokens: 192 },
    },
  ],
  'openai-error-midstream.1.sse': [
    { type: 'start', id: 'chatcmpl-BkT5eQ2wHm8zV4cNa7LtY3oXpSjRi', model: 'gpt-4o-mini-2024-07-18' },
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, text: 'Once upon' },
    { type: 'text-delta', index: 0, text: ' a time' },
    {
      type: 'error',
      message: 'The server had an error while processing your request. Sorry about that!',
      errorType: 'server_error',
    },
  ],
  'openai-reasoning-content.1.sse': [
    { type: 'start', id: '0f5c1e3a-7b2d-4c8e-9a61-2d4b8e0f7c13', model: 'deepseek-reasoner' },
    { type: 'thinking-start', index: 0 },
    { type: 'thinking-delta', index: 0, text: 'The user asks' },
    { type: 'thinking-delta', index: 0, text: ' for 2 + 2.' },
    { type: 'part-end', index: 0 },
    { type: 'text-start', index: 1 },
    { type: 'text-delta', index: 1, text: '2 + 2 = 4.' },
    { type: 'part-end', index: 1 },
    // DeepSeek sends usage on the finish_reason chunk itself, so finish comes before [DONE].
    {
      type: 'finish',
      finishReason: 'stop',
      usage: { inputTokens: 12, outputTokens: 25, cachedInputTokens: 0, reasoningTokens: 18 },
    },
  ],
};

const fixtureNames = readdirSync(fixturesDirectory).filter((name) => name.endsWith('.sse'));

describe('recorded streams', () => {
  it('has an expectation for every .sse fixture', () => {
    expect(fixtureNames.sort()).toEqual(Object.keys(expectedByFixture).sort());
  });

  describe.each(fixtureNames)('%s', (name) => {
    const bytes = readFixture(name);

    it('decodes to the expected canonical events', () => {
      expect(decodeChunks([bytes])).toEqual(expectedByFixture[name]);
    });

    it('decodes the same split in two at every byte boundary, and fed byte by byte', () => {
      expect(decodeAtEverySplit(decodeChunks, bytes)).toEqual(expectedByFixture[name]);
    });
  });
});

describe('OpenAIChatStreamDecoder', () => {
  describe('finish and usage', () => {
    it('emits finish at the usage chunk that follows the finish_reason chunk', () => {
      const decoder = new OpenAIChatStreamDecoder();
      decoder.push(chunk({ role: 'assistant', content: 'Hi' }));
      expect(decoder.push(chunk({}, 'stop'))).toEqual([{ type: 'part-end', index: 0 }]);
      const usageChunk = data({ id: 'chatcmpl-1', choices: [], usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 } });
      expect(decoder.push(usageChunk)).toEqual([
        { type: 'finish', finishReason: 'stop', usage: { inputTokens: 5, outputTokens: 1 } },
      ]);
      expect(decoder.push(data('[DONE]'))).toEqual([]);
      expect(decoder.end()).toEqual([]);
    });

    it('reads Groq usage from x_groq on the last chunk', () => {
      const events = decodeEvents([
        chunk({ role: 'assistant', content: 'Hi' }),
        chunk({}, 'stop'),
        data({ id: 'chatcmpl-1', choices: [], x_groq: { id: 'req_1', usage: { prompt_tokens: 7, completion_tokens: 2 } } }),
        data('[DONE]'),
      ]);
      expect(events.at(-1)).toEqual({ type: 'finish', finishReason: 'stop', usage: { inputTokens: 7, outputTokens: 2 } });
    });

    it('closes with the error finish reason when the stream is cut before any finish_reason', () => {
      expect(decodeEvents([chunk({ role: 'assistant', content: 'Hel' })])).toEqual([
        { type: 'start', id: 'chatcmpl-1', model: 'gpt-4o' },
        { type: 'text-start', index: 0 },
        { type: 'text-delta', index: 0, text: 'Hel' },
        { type: 'part-end', index: 0 },
        { type: 'finish', finishReason: 'error', usage: { inputTokens: 0, outputTokens: 0 } },
      ]);
    });

    it('keeps the finish_reason when the stream ends without [DONE]', () => {
      expect(decodeEvents([chunk({ content: 'ok' }), chunk({}, 'length')]).at(-1)).toEqual({
        type: 'finish',
        finishReason: 'length',
        usage: { inputTokens: 0, outputTokens: 0 },
      });
    });

    it('reports an empty stream as an error', () => {
      expect(decodeEvents([data('[DONE]')])).toEqual([
        { type: 'error', message: 'The provider ended the stream without an answer.' },
      ]);
      expect(decodeEvents([])).toEqual([{ type: 'error', message: 'The provider ended the stream without an answer.' }]);
    });

    it('ignores content after finish_reason', () => {
      const events = decodeEvents([chunk({ content: 'a' }, 'stop'), chunk({ content: 'late' }), data('[DONE]')]);
      expect(events.filter((event) => event.type === 'text-delta')).toEqual([{ type: 'text-delta', index: 0, text: 'a' }]);
    });
  });

  describe('chunks without content', () => {
    it("skips Azure's leading prompt_filter_results chunk", () => {
      const events = decodeEvents([
        data({ id: '', object: '', created: 0, model: '', choices: [], prompt_filter_results: [{ prompt_index: 0 }] }),
        chunk({ role: 'assistant', content: 'Hi' }, 'stop'),
        data('[DONE]'),
      ]);
      expect(events[0]).toEqual({ type: 'start', id: 'chatcmpl-1', model: 'gpt-4o' });
    });

    it('ignores empty data lines', () => {
      expect(decodeEvents([data(''), chunk({ content: 'x' }, 'stop'), data('[DONE]')])[0]).toEqual({
        type: 'start',
        id: 'chatcmpl-1',
        model: 'gpt-4o',
      });
    });
  });

  describe('errors in the stream', () => {
    it('turns an `event: error` frame into an error event', () => {
      const decoder = new OpenAIChatStreamDecoder();
      expect(decoder.push({ event: 'error', data: JSON.stringify({ message: 'Overloaded', type: 'overloaded_error' }) })).toEqual([
        { type: 'error', message: 'Overloaded', errorType: 'overloaded_error' },
      ]);
      expect(decoder.push(chunk({ content: 'after' }))).toEqual([]);
      expect(decoder.end()).toEqual([]);
    });

    it('accepts an error given as a string and redacts keys in it', () => {
      expect(decodeEvents([data({ error: 'Invalid key sk-proj-abcdefgh1234' })])).toEqual([
        { type: 'error', message: 'Invalid key [redacted]' },
      ]);
    });

    it('reports data that is not JSON', () => {
      expect(decodeEvents([chunk({ content: 'a' }), data('{"choices": [')]).at(-1)).toEqual({
        type: 'error',
        message: 'The provider sent a stream event that is not valid JSON.',
      });
    });
  });

  describe('parts', () => {
    it('numbers parts across kinds and ends each before the next kind starts', () => {
      expect(
        decodeEvents([
          chunk({ role: 'assistant', reasoning: 'Think' }),
          chunk({ content: 'Answer' }),
          chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] }),
          chunk({}, 'tool_calls'),
          data('[DONE]'),
        ]),
      ).toEqual([
        { type: 'start', id: 'chatcmpl-1', model: 'gpt-4o' },
        { type: 'thinking-start', index: 0 },
        { type: 'thinking-delta', index: 0, text: 'Think' },
        { type: 'part-end', index: 0 },
        { type: 'text-start', index: 1 },
        { type: 'text-delta', index: 1, text: 'Answer' },
        { type: 'part-end', index: 1 },
        { type: 'tool-call-start', index: 2, id: 'call_1', name: 'f' },
        { type: 'tool-call-delta', index: 2, argumentsDelta: '{}' },
        { type: 'part-end', index: 2 },
        { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 0, outputTokens: 0 } },
      ]);
    });

    it('reads a refusal delta as text', () => {
      const events = decodeEvents([chunk({ role: 'assistant', content: null, refusal: "I can't help with that." }, 'stop')]);
      expect(events.filter((event) => event.type === 'text-delta')).toEqual([
        { type: 'text-delta', index: 0, text: "I can't help with that." },
      ]);
    });

    it('follows tool calls without an index by their id', () => {
      const events = decodeEvents([
        chunk({ tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'a', arguments: '{"x"' } }] }),
        chunk({ tool_calls: [{ function: { arguments: ':1}' } }] }),
        chunk({ tool_calls: [{ id: 'call_b', type: 'function', function: { name: 'b', arguments: '{}' } }] }),
        chunk({}, 'tool_calls'),
      ]);
      expect(events.filter((event) => event.type.startsWith('tool-call'))).toEqual([
        { type: 'tool-call-start', index: 0, id: 'call_a', name: 'a' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: '{"x"' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: ':1}' },
        { type: 'tool-call-start', index: 1, id: 'call_b', name: 'b' },
        { type: 'tool-call-delta', index: 1, argumentsDelta: '{}' },
      ]);
    });

    it('gives a tool call without id a generated one', () => {
      const events = decodeEvents([chunk({ tool_calls: [{ index: 0, function: { name: 'f', arguments: '' } }] }, 'tool_calls')]);
      const start = events.find((event) => event.type === 'tool-call-start');
      expect(start).toMatchObject({ type: 'tool-call-start', index: 0, name: 'f', id: expect.stringMatching(/^call_[0-9a-f]{24}$/) });
    });

    it('reads only the first choice when n > 1', () => {
      const events = decodeEvents([
        data({ id: 'c', model: 'm', choices: [{ index: 1, delta: { content: 'second' } }, { index: 0, delta: { content: 'first' } }] }),
        data({ id: 'c', model: 'm', choices: [{ index: 1, delta: {}, finish_reason: 'length' }] }),
        data({ id: 'c', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }),
        data('[DONE]'),
      ]);
      expect(events).toEqual([
        { type: 'start', id: 'c', model: 'm' },
        { type: 'text-start', index: 0 },
        { type: 'text-delta', index: 0, text: 'first' },
        { type: 'part-end', index: 0 },
        { type: 'finish', finishReason: 'stop', usage: { inputTokens: 0, outputTokens: 0 } },
      ]);
    });
  });
});
