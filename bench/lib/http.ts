/** One timed HTTP request over node:http: status, time to first body byte, time to first SSE event, total time. */
import { request, type Agent } from 'node:http';

export interface TimedResponse {
  status: number;
  contentType: string;
  /** ms from sending to the response head. */
  headersMs: number;
  /** ms from sending to the first byte of the body (NaN if the body was empty). */
  firstByteMs: number;
  /** ms from sending to the first `data:` line of an event stream (NaN if none). */
  firstEventMs: number;
  totalMs: number;
  bytes: number;
  /** The start of the body (up to `keepBytes`), and its end, for checks and error messages. */
  head: string;
  end: string;
}

export interface TimedRequestOptions {
  url: string;
  headers: Record<string, string>;
  body: string | Buffer;
  agent?: Agent;
  timeoutMs: number;
  keepBytes?: number;
  /** Called once the first body byte has arrived. */
  onFirstByte?: () => void;
}

/** Only loopback targets: the bench never sends a request anywhere else. */
export function assertLoopback(url: string): void {
  const host = new URL(url).hostname;
  if (host !== '127.0.0.1') throw new Error(`bench: refusing a non-loopback address ${url}`);
}

export function timedRequest(options: TimedRequestOptions): Promise<TimedResponse> {
  assertLoopback(options.url);
  const keepBytes = options.keepBytes ?? 2048;
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(error);
    };
    const timer = setTimeout(() => {
      fail(new Error(`no complete answer within ${options.timeoutMs} ms`));
      req.destroy();
    }, options.timeoutMs);
    const body = typeof options.body === 'string' ? Buffer.from(options.body) : options.body;
    const req = request(options.url, {
      method: 'POST',
      agent: options.agent,
      headers: { ...options.headers, 'content-length': String(body.length) },
    });
    req.on('error', fail);
    req.on('response', (res) => {
      const headersMs = performance.now() - started;
      let firstByteMs = Number.NaN;
      let firstEventMs = Number.NaN;
      let bytes = 0;
      let head = '';
      let end = '';
      let scan = '';
      res.on('data', (chunk: Buffer) => {
        const now = performance.now() - started;
        if (bytes === 0) {
          firstByteMs = now;
          options.onFirstByte?.();
        }
        bytes += chunk.length;
        const text = chunk.toString('utf8');
        if (head.length < keepBytes) head += text.slice(0, keepBytes - head.length);
        end = (end + text).slice(-256);
        if (Number.isNaN(firstEventMs)) {
          scan = (scan + text).slice(-4096);
          if (/(^|\n)data:/.test(scan)) firstEventMs = now;
        }
      });
      res.on('error', fail);
      res.on('end', () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          contentType: String(res.headers['content-type'] ?? ''),
          headersMs,
          firstByteMs,
          firstEventMs,
          totalMs: performance.now() - started,
          bytes,
          head,
          end,
        });
      });
    });
    req.end(body);
  });
}
