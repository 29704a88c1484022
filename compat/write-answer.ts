import type Koa from 'koa';
import type { Answer, StreamAnswer } from '../server/answers.js';
import { renderStreamError } from '../server/error-types.js';
import type { Logger } from '../server/logger.js';
import { asGatewayError } from '../server/trpc.js';
import { formatSseFrame } from '../server/sse/sse-parser.js';
import { SseWriter } from './sse-writer.js';

const KEEPALIVE_MS = 10_000;

/** Writes an operation's answer as HTTP: its headers, then JSON, text, bytes or server-sent events. */
export async function writeAnswer(ctx: Koa.Context, answer: Answer, log: Logger): Promise<void> {
  ctx.set(answer.meta.headers);
  switch (answer.kind) {
    case 'json':
      ctx.status = 200;
      if (answer.raw !== undefined) {
        // A provider's answer passed through: its bytes as they came.
        ctx.type = 'application/json';
        ctx.body = answer.raw;
      } else {
        ctx.body = answer.body;
      }
      return;
    case 'text':
      ctx.status = 200;
      ctx.type = answer.contentType;
      ctx.body = answer.body;
      return;
    case 'binary':
      await writeBinary(ctx, answer, log);
      return;
    case 'stream':
      await writeStream(ctx, answer, log);
      return;
  }
}

async function writeBinary(ctx: Koa.Context, answer: Extract<Answer, { kind: 'binary' }>, log: Logger): Promise<void> {
  ctx.respond = false;
  const res = ctx.res;
  const writer = new SseWriter(res);
  const headers: Record<string, string> = { 'content-type': answer.contentType };
  if (answer.contentLength !== undefined) headers['content-length'] = String(answer.contentLength);
  res.writeHead(answer.status ?? 200, headers);
  // A body produced as it goes (speech): the client learns at once that it is coming.
  res.flushHeaders();
  const iterator = answer.body[Symbol.asyncIterator]();
  try {
    while (true) {
      const step = await iterator.next();
      if (step.done) break;
      if (!(await writer.write(step.value))) break;
    }
  } catch (error) {
    // The status is out: cutting the connection is how the client learns the
    // body is incomplete (a clean end of a chunked body would look whole).
    const gatewayError = asGatewayError(error);
    log.warn('binary.failed', { requestId: ctx.state.requestId as string, code: gatewayError.code, message: gatewayError.message });
    res.destroy();
    return;
  } finally {
    if (writer.isClosed) await iterator.return?.(undefined);
    if (!res.destroyed) writer.end();
  }
}

/** The in-band error frame of a format (keep-alive pings too) — the relay writes its own; this is compat's last resort. */
function frameOf(format: StreamAnswer<unknown>['format'], data: unknown, event?: string): string {
  return formatSseFrame(typeof data === 'string' ? data : JSON.stringify(data), event);
}

async function writeStream(ctx: Koa.Context, answer: StreamAnswer<unknown>, log: Logger): Promise<void> {
  const iterator = answer.parts[Symbol.asyncIterator]();
  ctx.respond = false;
  const writer = new SseWriter(ctx.res);
  let lastWrite = Date.now();
  const keepalive = setInterval(() => {
    if (Date.now() - lastWrite < KEEPALIVE_MS) return;
    lastWrite = Date.now();
    void writer.write(answer.format === 'messages' ? frameOf(answer.format, { type: 'ping' }, 'ping') : ': keepalive\n\n');
  }, KEEPALIVE_MS / 2);
  try {
    // The request ids and the answer's headers are already set on the response; writeHead keeps them.
    writer.writeHead(200, {});
    while (true) {
      const step = await iterator.next();
      if (step.done) break;
      const part = step.value;
      const chunk = part.bytes ?? part.events.map((event) => frameOf(answer.format, event.data, event.event)).join('');
      const open = await writer.write(chunk);
      lastWrite = Date.now();
      if (!open) break;
    }
  } catch (error) {
    const gatewayError = asGatewayError(error);
    log.warn('stream.failed', { requestId: ctx.state.requestId as string, code: gatewayError.code, message: gatewayError.message });
    if (answer.format !== 'images') {
      const frame = renderStreamError(answer.format, gatewayError);
      await writer.write(frameOf(answer.format, frame.data, frame.event));
    }
  } finally {
    clearInterval(keepalive);
    // Whatever stopped the loop, the stream's own `finally` settles it (a stream never started is settled too).
    await iterator.return?.(undefined);
    writer.end();
  }
}
