import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CanonicalStreamEvent } from '../canonical.js';
import { UpstreamError } from '../../errors.js';
import { BedrockEventStreamFramer, BedrockStreamDecoder } from './bedrock-stream.js';
import { fromBedrockResponse } from './from-bedrock-response.js';
import { decodeAtEverySplit } from '../../../test/support/stream-replay.js';

function fixture(name: string): Buffer {
  return readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url));
}

/** Feeds the bytes in the given pieces through framer and decoder, as the adapter does. */
function decode(pieces: readonly Uint8Array[]): CanonicalStreamEvent[] {
  const framer = new BedrockEventStreamFramer();
  const decoder = new BedrockStreamDecoder('req-1', 'anthropic.claude-sonnet-4-5');
  const events: CanonicalStreamEvent[] = [];
  for (const piece of pieces) for (const message of framer.push(piece)) events.push(...decoder.push(message));
  framer.end();
  events.push(...decoder.end());
  return events;
}

/** The same bytes decoded whole, one byte at a time, and cut in two at every position: all must agree. */
const decodeEverySplit = (bytes: Uint8Array): CanonicalStreamEvent[] => decodeAtEverySplit(decode, bytes);

describe('ConverseStream text', () => {
  it('decodes text, split at every byte (multi-byte characters included), with usage from metadata', () => {
    expect(decodeEverySplit(fixture('bedrock-text.1.eventstream'))).toEqual([
      { type: 'start', id: 'req-1', model: 'anthropic.claude-sonnet-4-5' },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Grüße ' },
      { type: 'text-delta', index: 0, text: 'aus 東京 🌸' },
      { type: 'part-end', index: 0 },
      {
        type: 'finish',
        finishReason: 'stop',
        stopSequence: null,
        // 12 uncached + 20 read + 10 written: the canonical input is the whole prompt.
        usage: { inputTokens: 42, outputTokens: 7, cachedInputTokens: 20, cacheWriteInputTokens: 10 },
      },
    ]);
  });
});

describe('ConverseStream reasoning and tool use', () => {
  it('decodes reasoning with its signature, text and a streamed tool call, split at every byte', () => {
    expect(decodeEverySplit(fixture('bedrock-tool.1.eventstream'))).toEqual([
      { type: 'start', id: 'req-1', model: 'anthropic.claude-sonnet-4-5' },
      { type: 'thinking-start', index: 0 },
      { type: 'thinking-delta', index: 0, text: 'The user wants the weather.' },
      { type: 'thinking-signature', index: 0, signature: 'sig-abc123' },
      { type: 'part-end', index: 0 },
      { type: 'text-start', index: 1 },
      { type: 'text-delta', index: 1, text: 'Let me check.' },
      { type: 'part-end', index: 1 },
      { type: 'tool-call-start', index: 2, id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', name: 'get_weather' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: '{"city":' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: '"Paris"}' },
      { type: 'part-end', index: 2 },
      { type: 'finish', finishReason: 'tool_calls', stopSequence: null, usage: { inputTokens: 120, outputTokens: 31, cachedInputTokens: 0, cacheWriteInputTokens: 0 } },
    ]);
  });
});

describe('ConverseStream faults', () => {
  it('turns an exception message inside the stream into an in-band error, split at every byte', () => {
    const events = decodeEverySplit(fixture('bedrock-exception.1.eventstream'));
    expect(events).toEqual([
      { type: 'start', id: 'req-1', model: 'anthropic.claude-sonnet-4-5' },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Partial' },
      { type: 'part-end', index: 0 },
      { type: 'error', message: 'The model stopped responding.', errorType: 'ModelStreamErrorException' },
    ]);
  });

  it('ends with an error finish when the stream stops before messageStop', () => {
    const bytes = fixture('bedrock-text.1.eventstream');
    const framer = new BedrockEventStreamFramer();
    const decoder = new BedrockStreamDecoder('req-1', 'm');
    const events: CanonicalStreamEvent[] = [];
    // The first three whole messages: start and two text deltas.
    let offset = 0;
    for (let i = 0; i < 3; i++) offset += bytes.readUInt32BE(offset);
    for (const message of framer.push(bytes.subarray(0, offset))) events.push(...decoder.push(message));
    events.push(...decoder.end());
    expect(events.at(-2)).toEqual({ type: 'part-end', index: 0 });
    expect(events.at(-1)).toMatchObject({ type: 'finish', finishReason: 'error' });
  });

  it('refuses a stream cut inside a message, and a message whose checksum is wrong', () => {
    const bytes = fixture('bedrock-text.1.eventstream');
    const cut = new BedrockEventStreamFramer();
    cut.push(bytes.subarray(0, bytes.length - 3));
    expect(() => cut.end()).toThrow(UpstreamError);

    const corrupted = Buffer.from(bytes);
    corrupted[20] = corrupted[20]! ^ 0x01;
    expect(() => new BedrockEventStreamFramer().push(corrupted)).toThrow(/does not decode/);
    const impossible = Buffer.alloc(12);
    impossible.writeUInt32BE(3, 0);
    expect(() => new BedrockEventStreamFramer().push(impossible)).toThrow(/impossible length/);
  });

  it('ignores event types it does not know and keeps the finish for metadata', () => {
    const decoder = new BedrockStreamDecoder('r', 'm');
    expect(decoder.push({ messageType: 'event', type: 'messageStart', payload: { role: 'assistant' } })).toEqual([{ type: 'start', id: 'r', model: 'm' }]);
    expect(decoder.push({ messageType: 'event', type: 'someFutureEvent', payload: {} })).toEqual([]);
    expect(decoder.push({ messageType: 'event', type: 'messageStop', payload: { stopReason: 'max_tokens' } })).toEqual([]);
    // A stop without metadata: whole, usage unknown.
    expect(decoder.end()).toEqual([{ type: 'finish', finishReason: 'length', stopSequence: null, usage: { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteInputTokens: 0 } }]);
  });

  it('reads an error message (`:message-type: error`) by its headers', () => {
    const decoder = new BedrockStreamDecoder('r', 'm');
    expect(decoder.push({ messageType: 'error', type: 'InternalFailure', payload: undefined, errorMessage: 'Something broke.' })).toEqual([
      { type: 'error', message: 'Something broke.', errorType: 'InternalFailure' },
    ]);
    expect(decoder.end()).toEqual([]);
  });
});

describe('Converse JSON answers', () => {
  it('reads text with cache usage', () => {
    const body: unknown = JSON.parse(fixture('bedrock-text.1.json').toString('utf8'));
    expect(fromBedrockResponse(body, 'req-9', 'amazon.nova-pro-v1:0')).toEqual({
      id: 'req-9',
      model: 'amazon.nova-pro-v1:0',
      content: [{ type: 'text', text: 'Bonjour, Paris.' }],
      finishReason: 'stop',
      stopSequence: null,
      usage: { inputTokens: 40, outputTokens: 5, cachedInputTokens: 20, cacheWriteInputTokens: 6 },
    });
  });

  it('reads reasoning, text and a tool call, and ignores fields it does not know', () => {
    const body: unknown = JSON.parse(fixture('bedrock-tool.1.json').toString('utf8'));
    const response = fromBedrockResponse(body, 'req-9', 'm');
    expect(response.content).toEqual([
      { type: 'thinking', text: 'Weather needs the tool.', signature: 'sig-xyz' },
      { type: 'text', text: "I'll look that up." },
      { type: 'tool_call', id: 'tooluse_a1B2c3', name: 'get_weather', arguments: '{"city":"Paris"}' },
    ]);
    expect(response.finishReason).toBe('tool_calls');
  });

  it('reads the stop sequence Claude names in additionalModelResponseFields, in answers and streams', () => {
    const body = { output: { message: { content: [{ text: 'x' }] } }, stopReason: 'stop_sequence', additionalModelResponseFields: { stop_sequence: 'END' } };
    expect(fromBedrockResponse(body, 'r', 'm')).toMatchObject({ finishReason: 'stop_sequence', stopSequence: 'END' });
    const decoder = new BedrockStreamDecoder('r', 'm');
    decoder.push({ messageType: 'event', type: 'messageStop', payload: { stopReason: 'stop_sequence', additionalModelResponseFields: { stop_sequence: 'END' } } });
    expect(decoder.push({ messageType: 'event', type: 'metadata', payload: { usage: { inputTokens: 3, outputTokens: 1 } } })).toEqual([
      { type: 'finish', finishReason: 'stop_sequence', stopSequence: 'END', usage: { inputTokens: 3, outputTokens: 1, cachedInputTokens: 0, cacheWriteInputTokens: 0 } },
    ]);
  });

  it('maps every stop reason', () => {
    const reasons: Record<string, string> = {
      end_turn: 'stop',
      stop_sequence: 'stop_sequence',
      max_tokens: 'length',
      model_context_window_exceeded: 'length',
      tool_use: 'tool_calls',
      guardrail_intervened: 'content_filter',
      content_filtered: 'content_filter',
    };
    for (const [stopReason, finishReason] of Object.entries(reasons)) {
      const body = { output: { message: { role: 'assistant', content: [{ text: 'x' }] } }, stopReason, usage: { inputTokens: 1, outputTokens: 1 } };
      expect(fromBedrockResponse(body, 'r', 'm').finishReason, stopReason).toBe(finishReason);
    }
  });

  it('refuses a body that is not a Converse answer with a 502', () => {
    const error = (() => {
      try {
        fromBedrockResponse({ Output: { __type: 'com.amazon.coral.service#UnknownOperationException' } }, 'r', 'm');
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(UpstreamError);
    expect((error as UpstreamError).status).toBe(502);
  });
});
