import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../server/errors.js';
import type { BodyBudget } from './body-budget.js';

export interface BodyLimits {
  /** Largest body (413 past it). */
  maxBytes: number;
  /** Longest pause between two pieces of the body (408 past it). */
  idleTimeoutMs: number;
  /** Deepest JSON nesting (400 past it). */
  maxDepth: number;
  /** The instance-wide budget of bodies in memory; the bytes are given back by `release`. */
  budget: BodyBudget;
}

export interface ReadBody {
  raw: Buffer;
  /** Gives the body's bytes back to the budget (when the request ends). */
  release(): void;
}

/**
 * Reads a request body up to `maxBytes` (413 past it, at once when
 * Content-Length says so), reserving its bytes in the instance budget as
 * they arrive (503 when it is spent), and giving up on a body that pauses
 * longer than `idleTimeoutMs` (408). Events, not an async iterator: cheaper per request.
 */
export function readRawBody(req: IncomingMessage, limits: Omit<BodyLimits, 'maxDepth'>): Promise<ReadBody> {
  const { maxBytes, budget } = limits;
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    req.resume();
    return Promise.reject(new GatewayError('PAYLOAD_TOO_LARGE', `The request body is larger than ${maxBytes} bytes.`));
  }
  return new Promise<ReadBody>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const release = () => budget.give(size);
    const finish = (error?: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (error) {
        release();
        // The rest is read and dropped, so the client sees the answer.
        req.resume();
        reject(error);
      } else {
        resolve({ raw: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), release });
      }
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => finish(new GatewayError('REQUEST_TIMEOUT', `The request body stalled for more than ${limits.idleTimeoutMs} ms.`)), limits.idleTimeoutMs);
      timer.unref();
    };
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > maxBytes) return finish(new GatewayError('PAYLOAD_TOO_LARGE', `The request body is larger than ${maxBytes} bytes.`));
      if (!budget.take(chunk.length)) return finish(new GatewayError('SERVICE_UNAVAILABLE', 'The gateway is reading too many request bodies; retry shortly.', { retryAfter: 1 }));
      size += chunk.length;
      chunks.push(chunk);
      arm();
    };
    const onEnd = () => finish();
    const onError = (error: Error) => finish(error);
    const onClose = () => finish(new GatewayError('INVALID_REQUEST', 'The client closed the connection before the body was read.'));
    arm();
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return true;
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

/** Whether a parsed JSON value nests deeper than `maxDepth` (walked without recursion). */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  const stack: Array<{ value: unknown; depth: number }> = [{ value, depth: 1 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (typeof current !== 'object' || current === null) continue;
    if (depth > maxDepth) return true;
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Whether the quote at `index` follows an odd run of backslashes. */
function isEscaped(bytes: Buffer, index: number): boolean {
  let backslashes = 0;
  while (index - backslashes - 1 >= 0 && bytes[index - backslashes - 1] === BACKSLASH) backslashes++;
  return backslashes % 2 === 1;
}

/**
 * Whether JSON text nests deeper than `maxDepth`, told from its brackets
 * without parsing it (those inside strings do not count), for bodies another
 * parser reads after us (tRPC's). Text that is not JSON is left to that parser.
 */
export function jsonTextNestsDeeperThan(text: Buffer | string, maxDepth: number): boolean {
  // Fewer characters than levels cannot nest past them.
  if (text.length <= maxDepth) return false;
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  let depth = 0;
  for (let index = 0; index < bytes.length; index++) {
    const byte = bytes[index]!;
    if (byte === QUOTE) {
      // Strings are most of a body: jump to the quote that ends this one (native search), past escaped ones.
      let end = bytes.indexOf(QUOTE, index + 1);
      while (end > 0 && isEscaped(bytes, end)) end = bytes.indexOf(QUOTE, end + 1);
      if (end < 0) return false;
      index = end;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > maxDepth) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/** A JSON object body: 415 for another content type, 400 for broken, non-object or too deeply nested JSON. */
export async function readJsonBody(req: IncomingMessage, limits: BodyLimits): Promise<{ value: Record<string, unknown>; release(): void }> {
  if (!isJsonContentType(req.headers['content-type'])) {
    req.resume();
    throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', `Expected an application/json body, got "${req.headers['content-type']}".`);
  }
  const { raw, release } = await readRawBody(req, limits);
  try {
    if (raw.length === 0) throw new GatewayError('INVALID_REQUEST', 'The request body is empty; a JSON object is required.');
    let value: unknown;
    try {
      value = JSON.parse(raw.toString('utf8'));
    } catch (error) {
      throw new GatewayError('INVALID_REQUEST', `The request body is not valid JSON: ${(error as Error).message}`);
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new GatewayError('INVALID_REQUEST', 'The request body must be a JSON object.');
    }
    if (nestsDeeperThan(value, limits.maxDepth)) {
      throw new GatewayError('INVALID_REQUEST', `The request body nests deeper than ${limits.maxDepth} levels.`);
    }
    return { value: value as Record<string, unknown>, release };
  } catch (error) {
    release();
    throw error;
  }
}
