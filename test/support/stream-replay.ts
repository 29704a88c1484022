/**
 * A provider's stream reaches its decoder in whatever pieces the network
 * gives. The decoders' fixture tests feed each recorded stream whole, cut in
 * two at every byte boundary, and one byte at a time, and expect the same
 * events every time: this is that harness, shared by every provider kind.
 */
import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { SseParser, type SseEvent } from '../../server/sse/sse-parser.js';

/** What every stream decoder is: frames in, events out, and what is left at the end. */
export interface StreamDecoder<Frame, Event> {
  push(frame: Frame): Event[];
  end(): Event[];
}

/** A fixture file's bytes, from the `__fixtures__` folder beside the test (`import.meta.url`). */
export function readFixture(testUrl: string, name: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL(`./__fixtures__/${name}`, testUrl)));
}

/** Bytes → SSE parser → a new decoder, the way the transport feeds it. */
export function decodeSse<Event>(createDecoder: () => StreamDecoder<SseEvent, Event>, chunks: Iterable<Uint8Array | string>): Event[] {
  const parser = new SseParser();
  const decoder = createDecoder();
  const events: Event[] = [];
  for (const chunk of chunks) for (const event of parser.push(chunk)) events.push(...decoder.push(event));
  for (const event of parser.end()) events.push(...decoder.push(event));
  events.push(...decoder.end());
  return events;
}

/**
 * Decodes `bytes` whole, then cut in two at every byte boundary, then one byte
 * at a time; every way must give the whole's events, which are returned.
 */
export function decodeAtEverySplit<Event>(decode: (chunks: Uint8Array[]) => Event[], bytes: Uint8Array): Event[] {
  const whole = decode([bytes]);
  for (let at = 0; at <= bytes.length; at++) {
    const events = decode([bytes.subarray(0, at), bytes.subarray(at)]);
    // Compared as text first: a full toEqual per cut is slow on long fixtures.
    if (JSON.stringify(events) !== JSON.stringify(whole)) expect({ cutAt: at, events }).toEqual({ cutAt: at, events: whole });
  }
  expect(decode(Array.from({ length: bytes.length }, (_, index) => bytes.subarray(index, index + 1))), 'fed one byte at a time').toEqual(whole);
  return whole;
}
