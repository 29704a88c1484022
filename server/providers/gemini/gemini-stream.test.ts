import { describe, expect, it } from 'vitest';
import type { CanonicalStreamEvent } from '../canonical.js';
import { UpstreamError } from '../../errors.js';
import { decodeAtEverySplit, decodeSse, readFixture } from '../../../test/support/stream-replay.js';
import { GeminiStreamDecoder } from './gemini-stream.js';

const decode = (chunks: Uint8Array[]): CanonicalStreamEvent[] => decodeSse(() => new GeminiStreamDecoder(), chunks);
const fixture = (name: string): Uint8Array => readFixture(import.meta.url, name);
/** Replays a fixture whole, split in two at every byte boundary, and one byte at a time. */
const replay = (name: string): CanonicalStreamEvent[] => decodeAtEverySplit(decode, fixture(name));

describe('GeminiStreamDecoder: streams in Google\'s wire format (CRLF frames)', () => {
  it('text in pieces (multi-byte characters), usage with cached and thought tokens from the last chunk', () => {
    expect(replay('gemini-text.1.sse')).toEqual([
      { type: 'start', id: 'mFAnacKpLJq2nsEP_dW-wQ4', model: 'gemini-2.5-flash' },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Grüße aus ' },
      { type: 'text-delta', index: 0, text: 'Paris! 🗼 Wie kann' },
      { type: 'text-delta', index: 0, text: ' ich helfen?' },
      { type: 'part-end', index: 0 },
      { type: 'finish', finishReason: 'stop', stopSequence: null, usage: { inputTokens: 12, outputTokens: 19, cachedInputTokens: 4, reasoningTokens: 8 } },
    ]);
  });

  it('a thought, then two whole function calls (the first signed): tool_calls', () => {
    expect(replay('gemini-tool-calls.1.sse')).toEqual([
      { type: 'start', id: 'tool-stream-1', model: 'gemini-2.5-pro' },
      { type: 'thinking-start', index: 0 },
      { type: 'thinking-delta', index: 0, text: '**Checking the weather**\n\nThe user wants Paris.' },
      { type: 'part-end', index: 0 },
      { type: 'thinking-start', index: 1 },
      { type: 'thinking-signature', index: 1, signature: 'gemini:CiQB0e2Kb1+sig/AA==' },
      { type: 'part-end', index: 1 },
      { type: 'tool-call-start', index: 2, id: 'call_tool-stream-1_0', name: 'get_weather' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: '{"city":"Paris","unit":"celsius"}' },
      { type: 'part-end', index: 2 },
      { type: 'tool-call-start', index: 3, id: 'call_tool-stream-1_1', name: 'get_time' },
      { type: 'tool-call-delta', index: 3, argumentsDelta: '{"zone":"Europe/Paris"}' },
      { type: 'part-end', index: 3 },
      { type: 'finish', finishReason: 'tool_calls', stopSequence: null, usage: { inputTokens: 40, outputTokens: 55, cachedInputTokens: 0, reasoningTokens: 25 } },
    ]);
  });

  it('an error chunk mid-stream ends the answer with an error event', () => {
    expect(replay('gemini-error-midstream.1.sse')).toEqual([
      { type: 'start', id: 'err-1', model: 'gemini-2.5-flash' },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Once upon' },
      { type: 'part-end', index: 0 },
      { type: 'error', message: 'The model is overloaded. Please try again later.', errorType: 'UNAVAILABLE' },
    ]);
  });

  it('a stream cut before its finishReason finishes as an error', () => {
    const bytes = fixture('gemini-text.1.sse');
    const cut = Buffer.from(bytes).toString('utf8').split('\r\n\r\n').slice(0, 2).join('\r\n\r\n') + '\r\n\r\n';
    const events = decode([new TextEncoder().encode(cut)]);
    expect(events.at(-1)).toEqual({ type: 'finish', finishReason: 'error', stopSequence: null, usage: { inputTokens: 12, outputTokens: 0, cachedInputTokens: 0 } });
  });

  it('a prompt blocked before any candidate finishes as content_filter', () => {
    const frame = 'data: {"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":7},"responseId":"b"}\r\n\r\n';
    expect(decode([new TextEncoder().encode(frame)]).at(-1)).toMatchObject({ type: 'finish', finishReason: 'content_filter', usage: { inputTokens: 7 } });
  });

  it('a chunk that is not JSON is an UpstreamError (502)', () => {
    const frame = new TextEncoder().encode('data: {"candidates": [{"content": \r\n\r\n');
    expect(() => decode([frame])).toThrow(UpstreamError);
  });
});
