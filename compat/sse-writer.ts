import type { ServerResponse } from 'node:http';

/**
 * Writes SSE frames with backpressure: when the socket buffer is full it waits
 * for `drain`, or for `close` (the client left). Listeners are removed after
 * every wait so long streams do not accumulate them.
 */
export class SseWriter {
  private closed = false;
  /** When the last chunk was written (`Date.now()`), for keep-alives. */
  lastWrite = 0;

  constructor(private readonly res: ServerResponse) {
    res.once('close', () => {
      this.closed = true;
    });
  }

  get isClosed(): boolean {
    return this.closed || this.res.destroyed;
  }

  writeHead(status: number, headers: Record<string, string>): void {
    this.res.writeHead(status, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...headers,
    });
    // Not flushed: node:http sends the head together with the first frame, one socket write
    // instead of two. A stream whose first frame is slow still gets its head within the
    // keep-alive period (the keep-alive comment is a frame too).
  }

  /** Writes a chunk; resolves when it may be followed by more (false if the client left). */
  async write(chunk: string | Uint8Array): Promise<boolean> {
    if (this.isClosed) return false;
    this.lastWrite = Date.now();
    if (this.res.write(chunk)) return true;
    return new Promise<boolean>((resolve) => {
      const done = (open: boolean) => {
        this.res.off('drain', onDrain);
        this.res.off('close', onClose);
        resolve(open);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      this.res.on('drain', onDrain);
      this.res.on('close', onClose);
    });
  }

  /** Ends the response, with `last` (the closing frame) in the same socket write when given. */
  end(last?: string | Uint8Array): void {
    if (this.res.writableEnded) return;
    if (last !== undefined && !this.isClosed) {
      this.lastWrite = Date.now();
      this.res.end(last);
    } else {
      this.res.end();
    }
  }
}

export function formatEvent(data: unknown, event?: string): string {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  // A payload of several lines (re-framed from a provider) keeps one `data:` line each, as SSE requires.
  const lines = payload.includes('\n') ? payload.split(/\r\n|\r|\n/).map((line) => `data: ${line}`).join('\n') : `data: ${payload}`;
  return event === undefined ? `${lines}\n\n` : `event: ${event}\n${lines}\n\n`;
}
