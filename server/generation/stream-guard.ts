/**
 * A streamed answer (SSE parts, or the bytes of a binary one) holds credit
 * and an upstream connection until it is read. compat reads or closes every stream it gets; this guard covers any
 * other path (an internal caller that drops the answer, a failure between
 * the answer and its first write): a stream closed before its first read, or
 * not read within {@link UNREAD_STREAM_MS}, is settled as abandoned and its
 * upstream released. (An unstarted generator's own `finally` never runs.)
 */
import type { Meter } from '../operations/metering.js';

export const UNREAD_STREAM_MS = 30_000;

export function guardStream<Item>(
  parts: AsyncGenerator<Item>,
  meter: Meter,
  upstream: AbortController,
  timeoutMs = UNREAD_STREAM_MS,
): AsyncIterable<Item> {
  let started = false;
  const abandon = () => {
    if (started) return;
    started = true;
    meter.settle({ usage: { inputTokens: 0, outputTokens: 0 }, status: 499, errorCode: 'ABANDONED', aborted: false, provider: null });
    upstream.abort();
  };
  const timer = setTimeout(abandon, timeoutMs);
  timer.unref();
  const iterator: AsyncIterator<Item> = {
    next() {
      if (!started) {
        started = true;
        clearTimeout(timer);
      }
      return parts.next();
    },
    async return(value?: unknown) {
      if (!started) {
        clearTimeout(timer);
        abandon();
      }
      return parts.return(value as undefined);
    },
  };
  return { [Symbol.asyncIterator]: () => iterator };
}
