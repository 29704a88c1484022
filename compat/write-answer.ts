import type Koa from 'koa';
import type { Answer, StreamAnswer, StreamPart } from '../server/answers.js';
import { renderStreamError } from '../server/error-types.js';
import type { Logger } from '../server/logger.js';
import { asGatewayError } from '../server/trpc.js';
import { formatSseFrame } from '../server/sse/sse-parser.js';
import { SseWriter } from './sse-writer.js';

const KEEPALIVE_MS = 10_000;

/** Writes an operation's answer as HTTP: its headers, then JSON, text, bytes or server-sent events. */
export async function writeAnswer(ctx: Koa.Context, answer: Answer, log: Logger): Promise<void> {
  // A stream holds credit and an upstream until it is read: it sets its headers inside its own try/finally.
  if (answer.kind === 'stream') return writeStream(ctx, answer, log);
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

/** One SSE frame of a typed event (data that is a string, such as `[DONE]`, is written as is). */
function frameOf(data: unknown, event?: string): string {
  return formatSseFrame(typeof data === 'string' ? data : JSON.stringify(data), event);
}

async function writeStream(ctx: Koa.Context, answer: StreamAnswer<unknown>, log: Logger): Promise<void> {
  const iterator = answer.parts[Symbol.asyncIterator]();
  let keepalive: NodeJS.Timeout | undefined;
  let writer: SseWriter | undefined;
  try {
    ctx.set(answer.meta.headers);
    ctx.respond = false;
    writer = new SseWriter(ctx.res);
    keepalive = startKeepalive(writer, answer.format);
    await relayParts(ctx, writer, iterator, answer.format, log);
  } finally {
    clearInterval(keepalive);
    // Whatever stopped it, the stream's own `finally` settles it; a stream never read is settled as abandoned.
    await iterator.return?.(undefined);
    if (writer) writer.end();
    else if (!ctx.res.headersSent) ctx.respond = true;
  }
}

/** Keeps an idle stream open through proxies: a comment (or Anthropic's ping) after 10 s of silence. */
function startKeepalive(writer: SseWriter, format: StreamAnswer<unknown>['format']): NodeJS.Timeout {
  writer.lastWrite = Date.now();
  return setInterval(() => {
    if (Date.now() - writer.lastWrite < KEEPALIVE_MS) return;
    void writer.write(format === 'messages' ? frameOf({ type: 'ping' }, 'ping') : ': keepalive\n\n');
  }, KEEPALIVE_MS / 2);
}

/**
 * Whether a chunk may be the stream's last (it holds a closing frame: `[DONE]`, `message_stop`,
 * `response.completed`/`failed`/`incomplete`). Such a chunk is held until the next part or the
 * end, so that the last frame leaves in one socket write with the end of the response. A false
 * positive (a closing word inside content) only holds a chunk until the next one.
 */
function mayBeLast(chunk: string | Uint8Array): boolean {
  const text = chunk as string & Buffer;
  if (typeof chunk !== 'string' && !Buffer.isBuffer(chunk)) return mayBeLast(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
  return text.includes('[DONE]') || text.includes('message_stop') || text.includes('response.completed') || text.includes('response.failed') || text.includes('response.incomplete');
}

async function relayParts(ctx: Koa.Context, writer: SseWriter, iterator: AsyncIterator<StreamPart<unknown>>, format: StreamAnswer<unknown>['format'], log: Logger): Promise<void> {
  /** A chunk that may be the last one, not yet written (see mayBeLast). */
  let held: string | Uint8Array | undefined;
  try {
    // The request ids and the answer's headers are already set on the response; writeHead keeps them.
    writer.writeHead(200, {});
    while (true) {
      const step = await iterator.next();
      if (step.done) break;
      const part = step.value;
      const chunk = part.bytes ?? part.events.map((event) => frameOf(event.data, event.event)).join('');
      if (held !== undefined) {
        const previous = held;
        held = undefined;
        if (!(await writer.write(previous))) break;
      }
      if (mayBeLast(chunk)) {
        held = chunk;
        continue;
      }
      if (!(await writer.write(chunk))) break;
    }
    if (held !== undefined) {
      // The stream is over: its last frame and the end of the response in one write.
      writer.end(held);
      held = undefined;
    }
  } catch (error) {
    const gatewayError = asGatewayError(error);
    log.warn('stream.failed', { requestId: ctx.state.requestId as string, code: gatewayError.code, message: gatewayError.message });
    if (held !== undefined && !(await writer.write(held))) return;
    if (format !== 'images') {
      const frame = renderStreamError(format, gatewayError);
      await writer.write(frameOf(frame.data, frame.event));
    }
  }
}
