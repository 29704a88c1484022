/**
 * The gateway's own SSE decoder before server/sse/sse-parser.ts moved onto
 * `eventsource-parser`, kept for bench/sse-parser.bench.ts to compare with.
 *
 * Incremental server-sent-events decoder: bytes in, `{ event, data }` out.
 * Follows the rules every official SDK applies (PROTOCOLS.md §1): lines end on
 * `\n`, `\r` or `\r\n`; one space after the colon is stripped; `:` lines are
 * comments; several `data` lines join with `\n`; a blank line dispatches.
 * Chunks may split anywhere, including inside a UTF-8 sequence or a CRLF.
 */

import type { SseEvent } from '../../server/sse/sse-parser.js';

export class CharacterLoopSseParser {
  private readonly decoder = new TextDecoder('utf-8');
  private buffer = '';
  private eventName: string | undefined = undefined;
  private dataLines: string[] = [];
  private sawField = false;
  /** A chunk ended on `\r`: a `\n` at the start of the next chunk belongs to it. */
  private pendingCr = false;

  /** Feeds bytes (or already decoded text) and returns the events completed by them. */
  push(chunk: Uint8Array | string): SseEvent[] {
    let text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    if (this.pendingCr) {
      this.pendingCr = false;
      if (text.startsWith('\n')) text = text.slice(1);
    }
    this.buffer += text;
    const events: SseEvent[] = [];
    let start = 0;
    const buffer = this.buffer;
    for (let i = 0; i < buffer.length; i++) {
      const ch = buffer.charCodeAt(i);
      if (ch !== 10 && ch !== 13) continue;
      const line = buffer.slice(start, i);
      if (ch === 13) {
        if (i + 1 < buffer.length) {
          if (buffer.charCodeAt(i + 1) === 10) i++;
        } else {
          this.pendingCr = true;
        }
      }
      start = i + 1;
      const event = this.processLine(line);
      if (event) events.push(event);
    }
    this.buffer = buffer.slice(start);
    return events;
  }

  /** Flushes at end of input: a final frame without its blank line still dispatches. */
  end(): SseEvent[] {
    const tail = this.decoder.decode();
    const events = tail ? this.push(tail) : [];
    if (this.buffer.length > 0) {
      const event = this.processLine(this.buffer);
      this.buffer = '';
      if (event) events.push(event);
    }
    const last = this.dispatch();
    if (last) events.push(last);
    return events;
  }

  private processLine(line: string): SseEvent | undefined {
    if (line.length === 0) return this.dispatch();
    if (line.charCodeAt(0) === 58 /* : */) return undefined;
    const colon = line.indexOf(':');
    let field: string;
    let value: string;
    if (colon === -1) {
      field = line;
      value = '';
    } else {
      field = line.slice(0, colon);
      value = line.charCodeAt(colon + 1) === 32 ? line.slice(colon + 2) : line.slice(colon + 1);
    }
    if (field === 'event') {
      this.eventName = value;
      this.sawField = true;
    } else if (field === 'data') {
      this.dataLines.push(value);
      this.sawField = true;
    }
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    if (!this.sawField) return undefined;
    const event: SseEvent = { event: this.eventName, data: this.dataLines.join('\n') };
    this.eventName = undefined;
    this.dataLines = [];
    this.sawField = false;
    return event;
  }
}
