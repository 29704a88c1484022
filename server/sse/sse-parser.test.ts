import { describe, expect, it } from 'vitest';
import { SseParser, formatSseFrame, type SseEvent } from './sse-parser.js';

/** Parses `text` fed as the given chunks of its UTF-8 bytes. */
function parseChunks(chunks: Uint8Array[]): SseEvent[] {
  const parser = new SseParser();
  const events = chunks.flatMap((chunk) => parser.push(chunk));
  return [...events, ...parser.end()];
}

/** Every way to cut the bytes in two, and one byte at a time. */
function everySplit(text: string): Uint8Array[][] {
  const bytes = new TextEncoder().encode(text);
  const splits: Uint8Array[][] = [[bytes], Array.from(bytes, (_, index) => bytes.subarray(index, index + 1))];
  for (let cut = 1; cut < bytes.length; cut++) splits.push([bytes.subarray(0, cut), bytes.subarray(cut)]);
  return splits;
}

const CASES: Array<[string, string, SseEvent[]]> = [
  ['named events', 'event: message_start\ndata: {"a":1}\n\nevent: ping\ndata: {}\n\n', [{ event: 'message_start', data: '{"a":1}' }, { event: 'ping', data: '{}' }]],
  ['CRLF', 'event: a\r\ndata: one\r\n\r\ndata: two\r\ndata: lines\r\n\r\n', [{ event: 'a', data: 'one' }, { event: undefined, data: 'two\nlines' }]],
  ['CR only', 'event: a\rdata: one\r\rdata: two\r\r', [{ event: 'a', data: 'one' }, { event: undefined, data: 'two' }]],
  ['split UTF-8', 'data: café ☕ 東京 😀\n\n', [{ event: undefined, data: 'café ☕ 東京 😀' }]],
  ['comments and unused fields', ': keep-alive\n\nid: 7\nretry: 10\nfoo: bar\ndata: x\n\n', [{ event: undefined, data: 'x' }]],
  ['one space stripped', 'data:a\n\ndata:  b\n\ndata\n\n', [{ event: undefined, data: 'a' }, { event: undefined, data: ' b' }, { event: undefined, data: '' }]],
  ['byte order mark', '\uFEFFdata: x\n\n', [{ event: undefined, data: 'x' }]],
  ['unterminated last frame', 'data: one\n\ndata: two', [{ event: undefined, data: 'one' }, { event: undefined, data: 'two' }]],
  ['ends on a CR', 'data: one\r\rdata: two\r', [{ event: undefined, data: 'one' }, { event: undefined, data: 'two' }]],
];

describe('SseParser', () => {
  it.each(CASES)('%s: the same events however the bytes are cut', (_name, text, expected) => {
    for (const chunks of everySplit(text)) expect(parseChunks(chunks)).toEqual(expected);
  });

  it('returns the events as soon as their frame is complete', () => {
    const parser = new SseParser();
    expect(parser.push(new TextEncoder().encode('data: a\n'))).toEqual([]);
    expect(parser.push(new TextEncoder().encode('\ndata: b\n\n'))).toEqual([
      { event: undefined, data: 'a' },
      { event: undefined, data: 'b' },
    ]);
    expect(parser.end()).toEqual([]);
  });

  it('takes text as well as bytes, and reads back what formatSseFrame writes', () => {
    const parser = new SseParser();
    expect(parser.push(formatSseFrame('{"x":1}') + formatSseFrame('{"y":2}', 'delta'))).toEqual([
      { event: undefined, data: '{"x":1}' },
      { event: 'delta', data: '{"y":2}' },
    ]);
  });
});
