import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CanonicalStreamEvent } from '../../providers/canonical.js';
import { SseParser, formatSseFrame, type SseEvent } from '../../sse/sse-parser.js';
import { ResponsesStreamDecoder } from './responses-stream-decoder.js';
import { decodeSse } from '../../../test/support/stream-replay.js';

function fixture(name: string): Uint8Array {
  return readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url));
}

/** Bytes, in the given chunks, through the SSE parser and the decoder. */
const decode = (chunks: Iterable<Uint8Array | string>): CanonicalStreamEvent[] => decodeSse(() => new ResponsesStreamDecoder(), chunks);

function sseEvents(chunks: Iterable<Uint8Array>): SseEvent[] {
  const parser = new SseParser();
  const events: SseEvent[] = [];
  for (const chunk of chunks) events.push(...parser.push(chunk));
  return [...events, ...parser.end()];
}

function* splitAt(bytes: Uint8Array, position: number): Generator<Uint8Array> {
  yield bytes.subarray(0, position);
  yield bytes.subarray(position);
}

function* byteByByte(bytes: Uint8Array): Generator<Uint8Array> {
  for (let i = 0; i < bytes.length; i++) yield bytes.subarray(i, i + 1);
}

function frames(...events: Record<string, unknown>[]): string {
  return events.map((event) => formatSseFrame(JSON.stringify(event), String(event.type))).join('');
}

const expectedText: CanonicalStreamEvent[] = [
  { type: 'start', id: 'resp_67ca09c5efe0819096d0511c92b8c890096610f474011cc0', model: 'gpt-4.1-2025-04-14' },
  { type: 'text-start', index: 0 },
  { type: 'text-delta', index: 0, text: 'Hi' },
  { type: 'text-delta', index: 0, text: ' there' },
  { type: 'text-delta', index: 0, text: '! Ça' },
  { type: 'text-delta', index: 0, text: ' va' },
  { type: 'text-delta', index: 0, text: ' 👋' },
  { type: 'text-delta', index: 0, text: ' — how can I help' },
  { type: 'text-delta', index: 0, text: '?' },
  { type: 'part-end', index: 0 },
  {
    type: 'finish',
    finishReason: 'stop',
    usage: { inputTokens: 12, outputTokens: 14, cachedInputTokens: 0, reasoningTokens: 0 },
  },
];

const expectedFunctionCall: CanonicalStreamEvent[] = [
  { type: 'start', id: 'resp_68b1f0a2c4d08190a3e5c1f0b7d2e94a0c7f2b1d9e8a6c53', model: 'o4-mini-2025-04-16' },
  { type: 'thinking-start', index: 0 },
  { type: 'thinking-delta', index: 0, text: '**Planning weather lookups**' },
  { type: 'thinking-delta', index: 0, text: '\n\nThe user wants weather for Paris' },
  { type: 'thinking-delta', index: 0, text: " and Tokyo, so I'll call get_weather for each." },
  { type: 'part-end', index: 0 },
  { type: 'tool-call-start', index: 1, id: 'call_5SDfhT0hWnR3LzUq1VJxN2eA', name: 'get_weather' },
  { type: 'tool-call-delta', index: 1, argumentsDelta: '{"' },
  { type: 'tool-call-delta', index: 1, argumentsDelta: 'city' },
  { type: 'tool-call-delta', index: 1, argumentsDelta: '":"' },
  { type: 'tool-call-delta', index: 1, argumentsDelta: 'Paris' },
  { type: 'tool-call-delta', index: 1, argumentsDelta: '"}' },
  { type: 'part-end', index: 1 },
  { type: 'tool-call-start', index: 2, id: 'call_9kQwE2rTzX7mB4nV6cY1pL0s', name: 'get_weather' },
  { type: 'tool-call-delta', index: 2, argumentsDelta: '{"city":' },
  { type: 'tool-call-delta', index: 2, argumentsDelta: '"Tokyo"}' },
  { type: 'part-end', index: 2 },
  {
    type: 'finish',
    finishReason: 'tool_calls',
    usage: { inputTokens: 81, outputTokens: 156, cachedInputTokens: 64, reasoningTokens: 128 },
  },
];

describe.each([
  ['responses-text.1.sse', expectedText],
  ['responses-function-call.1.sse', expectedFunctionCall],
])('replaying %s', (name, expected) => {
  const bytes = fixture(name);

  it('gives the canonical events', () => {
    expect(decode([bytes])).toEqual(expected);
  });

  it('gives the same events fed one byte at a time', () => {
    expect(decode(byteByByte(bytes))).toEqual(expected);
  });

  // Quadratic in the fixture size: allow for a loaded machine.
  it('gives the same events split in two at every byte boundary', { timeout: 120_000 }, () => {
    // The decoder is deterministic in its SSE input, so a split that yields the same
    // SSE events yields the same canonical events; comparing SSE events keeps the
    // sweep fast, and a split that differs is decoded to show the difference.
    const whole = sseEvents([bytes]);
    for (let position = 1; position < bytes.length; position++) {
      const split = sseEvents(splitAt(bytes, position));
      const same =
        split.length === whole.length &&
        split.every((event, i) => event.event === whole[i].event && event.data === whole[i].data);
      if (!same) expect({ position, events: decode(splitAt(bytes, position)) }).toEqual({ position, events: expected });
    }
    expect(decode(splitAt(bytes, Math.floor(bytes.length / 2)))).toEqual(expected);
  });
});

describe('ResponsesStreamDecoder edge cases', () => {
  it('ignores [DONE] and unknown events', () => {
    const sse = frames(
      { type: 'response.created', response: { id: 'resp_1', model: 'm' } },
      { type: 'response.web_search_call.searching', output_index: 0 },
      { type: 'response.completed', response: { status: 'completed', usage: { input_tokens: 1, output_tokens: 2 } } },
    );
    expect(decode([sse, 'data: [DONE]\n\n'])).toEqual([
      { type: 'start', id: 'resp_1', model: 'm' },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 2 } },
    ]);
  });

  it('reads servers that only send output_item.done with whole items', () => {
    const sse = frames(
      { type: 'response.created', response: { id: 'resp_1', model: 'm' } },
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: { type: 'message', content: [{ type: 'output_text', text: 'Hello' }] },
      },
      {
        type: 'response.output_item.done',
        output_index: 1,
        item: { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{"a":1}' },
      },
      { type: 'response.completed', response: { status: 'completed' } },
    );
    expect(decode([sse])).toEqual([
      { type: 'start', id: 'resp_1', model: 'm' },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Hello' },
      { type: 'part-end', index: 0 },
      { type: 'tool-call-start', index: 1, id: 'call_1', name: 'f' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"a":1}' },
      { type: 'part-end', index: 1 },
      { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 0, outputTokens: 0 } },
    ]);
  });

  it('sends text a .done carries that the deltas did not', () => {
    const sse = frames(
      { type: 'response.output_item.added', output_index: 0, item: { type: 'message', content: [] } },
      { type: 'response.content_part.added', output_index: 0, content_index: 0, part: { type: 'output_text', text: '' } },
      { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'Hel' },
      { type: 'response.output_text.done', output_index: 0, content_index: 0, text: 'Hello' },
      { type: 'response.incomplete', response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } },
    );
    expect(decode([sse])).toEqual([
      { type: 'start', id: '', model: '' },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Hel' },
      { type: 'text-delta', index: 0, text: 'lo' },
      { type: 'part-end', index: 0 },
      { type: 'finish', finishReason: 'length', usage: { inputTokens: 0, outputTokens: 0 } },
    ]);
  });

  it('opens a part for deltas that came without content_part.added, and does not replay it at output_item.done', () => {
    const sse = frames(
      { type: 'response.output_text.delta', output_index: 0, content_index: 0, delta: 'Hi' },
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: { type: 'message', content: [{ type: 'output_text', text: 'Hi' }] },
      },
      { type: 'response.completed', response: { status: 'completed' } },
    );
    expect(decode([sse])).toEqual([
      { type: 'start', id: '', model: '' },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Hi' },
      { type: 'part-end', index: 0 },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 0, outputTokens: 0 } },
    ]);
  });

  it('reads raw reasoning_text parts as thinking', () => {
    const sse = frames(
      { type: 'response.output_item.added', output_index: 0, item: { type: 'reasoning', summary: [] } },
      { type: 'response.content_part.added', output_index: 0, content_index: 0, part: { type: 'reasoning_text', text: '' } },
      { type: 'response.reasoning_text.delta', output_index: 0, content_index: 0, delta: 'think' },
      { type: 'response.content_part.done', output_index: 0, content_index: 0, part: { type: 'reasoning_text', text: 'think' } },
      { type: 'response.completed', response: { status: 'completed' } },
    );
    expect(decode([sse])).toEqual([
      { type: 'start', id: '', model: '' },
      { type: 'thinking-start', index: 0 },
      { type: 'thinking-delta', index: 0, text: 'think' },
      { type: 'part-end', index: 0 },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 0, outputTokens: 0 } },
    ]);
  });

  it.each([
    ['the flat error event', { type: 'error', code: 'rate_limit_exceeded', message: 'Slow down', param: null }, 'rate_limit_exceeded', 'Slow down'],
    ['the nested error event', { type: 'error', error: { type: 'server_error', message: 'Boom' } }, 'server_error', 'Boom'],
    [
      'response.failed',
      { type: 'response.failed', response: { status: 'failed', error: { code: 'server_error', message: 'Failed' } } },
      'server_error',
      'Failed',
    ],
  ])('turns %s into a canonical error and stops', (_name, event, errorType, message) => {
    const sse = frames({ type: 'response.created', response: { id: 'resp_1', model: 'm' } }, event, {
      type: 'response.completed',
      response: {},
    });
    expect(decode([sse])).toEqual([
      { type: 'start', id: 'resp_1', model: 'm' },
      { type: 'error', message, errorType },
    ]);
  });

  it('reports bad JSON as an error', () => {
    expect(decode(['event: response.created\ndata: {not json\n\n'])).toEqual([
      { type: 'start', id: '', model: '' },
      { type: 'error', message: 'The provider sent a stream event that is not JSON.', errorType: 'server_error' },
    ]);
  });

  it('finishes a cut-off stream with error, closing open parts', () => {
    const sse = frames(
      { type: 'response.created', response: { id: 'resp_1', model: 'm' } },
      { type: 'response.output_item.added', output_index: 0, item: { type: 'function_call', call_id: 'c', name: 'f', arguments: '' } },
      { type: 'response.function_call_arguments.delta', output_index: 0, delta: '{"a"' },
    );
    expect(decode([sse])).toEqual([
      { type: 'start', id: 'resp_1', model: 'm' },
      { type: 'tool-call-start', index: 0, id: 'c', name: 'f' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"a"' },
      { type: 'part-end', index: 0 },
      { type: 'finish', finishReason: 'error', usage: { inputTokens: 0, outputTokens: 0 } },
    ]);
  });
});
