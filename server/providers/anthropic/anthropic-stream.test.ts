import { describe, expect, it } from 'vitest';
import type { CanonicalStreamEvent } from '../canonical.js';
import { UpstreamError } from '../../errors.js';
import { decodeAtEverySplit, decodeSse, readFixture } from '../../../test/support/stream-replay.js';
import { AnthropicStreamDecoder } from './anthropic-stream.js';

const decode = (chunks: Uint8Array[]): CanonicalStreamEvent[] => decodeSse(() => new AnthropicStreamDecoder(), chunks);
const fixture = (name: string): Uint8Array => readFixture(import.meta.url, name);
/** Replays a fixture whole, split in two at every byte boundary, and one byte at a time. */
const replay = (name: string): CanonicalStreamEvent[] => decodeAtEverySplit(decode, fixture(name));

const MODEL = 'claude-sonnet-4-5-20250929';

describe('AnthropicStreamDecoder: recorded streams', () => {
  it('text (multi-byte characters, a ping)', () => {
    expect(replay('anthropic-text.1.sse')).toEqual([
      {
        type: 'start',
        id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
        model: MODEL,
        usage: { inputTokens: 25, outputTokens: 1, cachedInputTokens: 0, cacheWriteInputTokens: 0 },
      },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Grüße aus ' },
      { type: 'text-delta', index: 0, text: 'Paris! 🗼 Wie kann' },
      { type: 'text-delta', index: 0, text: ' ich helfen?' },
      { type: 'part-end', index: 0 },
      {
        type: 'finish',
        finishReason: 'stop',
        stopSequence: null,
        usage: { inputTokens: 25, outputTokens: 15, cachedInputTokens: 0, cacheWriteInputTokens: 0 },
      },
    ]);
  });

  it('tool use (split JSON, an empty input, cache reads in the prompt total)', () => {
    const usage = { inputTokens: 1496, cachedInputTokens: 1024, cacheWriteInputTokens: 0 };
    expect(replay('anthropic-tool-use.1.sse')).toEqual([
      { type: 'start', id: 'msg_014p7gG3wDgGV9EUtLvnow3U', model: MODEL, usage: { ...usage, outputTokens: 2 } },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Let me check the weather.' },
      { type: 'part-end', index: 0 },
      { type: 'tool-call-start', index: 1, id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6', name: 'get_weather' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"city": "Pa' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: 'ris", "unit": "celsius"}' },
      { type: 'part-end', index: 1 },
      { type: 'tool-call-start', index: 2, id: 'toolu_01Nq3bHcWbUMsw8fGzP4Zm2K', name: 'get_time' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: '{}' },
      { type: 'part-end', index: 2 },
      { type: 'finish', finishReason: 'tool_calls', stopSequence: null, usage: { ...usage, outputTokens: 89 } },
    ]);
  });

  it('thinking with its signature, then text', () => {
    expect(replay('anthropic-thinking.1.sse')).toEqual([
      {
        type: 'start',
        id: 'msg_01Aq9w938a90dw8q',
        model: MODEL,
        usage: { inputTokens: 58, outputTokens: 3, cachedInputTokens: 0, cacheWriteInputTokens: 0 },
      },
      { type: 'thinking-start', index: 0 },
      { type: 'thinking-delta', index: 0, text: 'The user asks for 27 × 453. ' },
      { type: 'thinking-delta', index: 0, text: '27 × 453 = 12231.' },
      {
        type: 'thinking-signature',
        index: 0,
        signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds0l2X7tEM0Xy+LKJq3Pa5mGLcA==',
      },
      { type: 'part-end', index: 0 },
      { type: 'text-start', index: 1 },
      { type: 'text-delta', index: 1, text: '27 × 453 = 12,231.' },
      { type: 'part-end', index: 1 },
      {
        type: 'finish',
        finishReason: 'stop',
        stopSequence: null,
        usage: { inputTokens: 58, outputTokens: 142, cachedInputTokens: 0, cacheWriteInputTokens: 0, reasoningTokens: 120 },
      },
    ]);
  });

  it('an error event mid-stream ends the stream', () => {
    expect(replay('anthropic-error-midstream.1.sse')).toEqual([
      {
        type: 'start',
        id: 'msg_01Bx8Zp5cV2k',
        model: MODEL,
        usage: { inputTokens: 12, outputTokens: 1, cachedInputTokens: 0, cacheWriteInputTokens: 0 },
      },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Once upon a' },
      { type: 'error', message: 'Overloaded', errorType: 'overloaded_error' },
    ]);
  });

  it('server tool blocks are skipped and later parts renumbered', () => {
    expect(replay('anthropic-server-tool.1.sse')).toEqual([
      {
        type: 'start',
        id: 'msg_01WebSearch',
        model: MODEL,
        usage: { inputTokens: 2679, outputTokens: 3, cachedInputTokens: 0, cacheWriteInputTokens: 0 },
      },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: "I'll search for that." },
      { type: 'part-end', index: 0 },
      { type: 'text-start', index: 1 },
      { type: 'text-delta', index: 1, text: 'It is sunny.' },
      { type: 'part-end', index: 1 },
      {
        type: 'finish',
        finishReason: 'stop',
        stopSequence: null,
        usage: { inputTokens: 10682, outputTokens: 510, cachedInputTokens: 0, cacheWriteInputTokens: 0 },
      },
    ]);
  });
});

describe('AnthropicStreamDecoder: edge cases', () => {
  const event = (data: unknown, name?: string) => ({ event: name, data: JSON.stringify(data) });

  it('closes open parts and finishes with an error reason when the stream stops early', () => {
    const decoder = new AnthropicStreamDecoder();
    decoder.push(event({ type: 'message_start', message: { id: 'msg_1', model: 'm', usage: { input_tokens: 5, output_tokens: 1 } } }));
    decoder.push(event({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 't', name: 'f', input: {} } }));
    expect(decoder.end()).toEqual([
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{}' },
      { type: 'part-end', index: 0 },
      {
        type: 'finish',
        finishReason: 'error',
        stopSequence: null,
        usage: { inputTokens: 5, outputTokens: 1, cachedInputTokens: 0, cacheWriteInputTokens: 0 },
      },
    ]);
    expect(decoder.end()).toEqual([]);
  });

  it('reads the stop sequence and redacted thinking', () => {
    const decoder = new AnthropicStreamDecoder();
    expect(decoder.push(event({ type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking', data: 'opaque' } }))).toEqual([
      { type: 'thinking-start', index: 0, redactedData: 'opaque' },
    ]);
    decoder.push(event({ type: 'content_block_stop', index: 0 }));
    expect(
      decoder.push(event({ type: 'message_delta', delta: { stop_reason: 'stop_sequence', stop_sequence: 'END' }, usage: { output_tokens: 7 } })),
    ).toEqual([
      {
        type: 'finish',
        finishReason: 'stop_sequence',
        stopSequence: 'END',
        usage: { inputTokens: 0, outputTokens: 7, cachedInputTokens: 0, cacheWriteInputTokens: 0 },
      },
    ]);
    expect(decoder.push(event({ type: 'message_stop' }))).toEqual([]);
    expect(decoder.end()).toEqual([]);
  });

  it('ignores pings, comments and unknown events, and uses the event name when data has no type', () => {
    const decoder = new AnthropicStreamDecoder();
    expect(decoder.push(event({ type: 'ping' }, 'ping'))).toEqual([]);
    expect(decoder.push(event({ type: 'some_future_event', x: 1 }, 'some_future_event'))).toEqual([]);
    expect(decoder.push(event({ index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'))).toEqual([
      { type: 'text-start', index: 0 },
    ]);
  });

  it('throws a 502 UpstreamError on unreadable events', () => {
    const decoder = new AnthropicStreamDecoder();
    expect(() => decoder.push({ event: 'message_start', data: '{not json' })).toThrow(UpstreamError);
    try {
      decoder.push(event({ type: 'content_block_delta', index: 'zero', delta: {} }));
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(UpstreamError);
      expect((error as UpstreamError).status).toBe(502);
      expect((error as UpstreamError).retryable).toBe(false);
    }
  });
});
