import { Agent, errors as undiciErrors, type Dispatcher } from 'undici';
import { ClientAbortedError, UpstreamError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ParseUpstreamError, UpstreamBody, UpstreamHttpRequest, UpstreamResponse } from '../providers/types.js';
import type { UpstreamTimeouts } from '../config.js';

export interface UpstreamCallOptions {
  providerId: string;
  signal: AbortSignal;
  timeouts: UpstreamTimeouts;
  parseError: ParseUpstreamError;
  /** Called before each retry (tests and logs observe retries through it). */
  onRetry?: (attempt: number, error: UpstreamError) => void;
}

export type { UpstreamBody, UpstreamResponse };
export { ClientAbortedError };

const MAX_ERROR_BODY = 64 * 1024;
/** A provider asking us to wait longer than this is not retried here (the deployment is failed over instead). */
const MAX_RETRY_AFTER_SECONDS = 10;

function flattenHeaders(headers: Dispatcher.ResponseData['headers']): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(headers)) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

/** An error answer's text, at most MAX_ERROR_BODY bytes (the rest is not read). */
async function readBounded(body: UpstreamBody): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(Buffer.from(chunk));
    size += chunk.length;
    if (size >= MAX_ERROR_BODY) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, MAX_ERROR_BODY).toString('utf8');
}

/** Maps a transport failure to an UpstreamError that never mentions headers or secrets. */
export function toTransportError(error: unknown, providerId: string, phase: 'connect' | 'first-byte' | 'stream'): UpstreamError {
  const code = (error as { code?: string }).code;
  if (code === 'UND_ERR_CONNECT_TIMEOUT') {
    return new UpstreamError('connecting to the provider timed out', { status: 504, provider: providerId, retryable: true, timeout: true, cause: error });
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT') {
    return new UpstreamError('the provider sent no answer in time', { status: 504, provider: providerId, retryable: false, timeout: true, cause: error });
  }
  if (code === 'UND_ERR_BODY_TIMEOUT') {
    return new UpstreamError('the provider stopped sending', { status: 504, provider: providerId, retryable: false, timeout: true, cause: error });
  }
  const description = phase === 'stream' ? 'the provider connection failed during the answer' : 'could not reach the provider';
  return new UpstreamError(`${description} (${code ?? (error as Error).name ?? 'error'})`, {
    status: 0,
    provider: providerId,
    retryable: phase !== 'stream',
    cause: error,
  });
}

function isAbort(error: unknown, signal: AbortSignal): boolean {
  return signal.aborted || error instanceof undiciErrors.RequestAbortedError || (error as Error)?.name === 'AbortError';
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(new ClientAbortedError());
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(new ClientAbortedError());
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * HTTP to providers over undici keep-alive pools (one Agent per connect
 * timeout), with first-byte and idle timeouts, abort on client disconnect, and
 * retries with backoff on connection errors, 429 and 5xx before the first byte.
 */
export class UpstreamClient {
  private readonly agents = new Map<number, Agent>();
  /** Provider URLs repeat: each is parsed once (undici's top-level `request` parses the URL on every call). */
  private readonly splitUrls = new Map<string, { origin: string; path: string }>();

  constructor(private readonly log: Logger) {}

  private agentFor(connectTimeoutMs: number): Agent {
    let agent = this.agents.get(connectTimeoutMs);
    if (!agent) {
      // No cap on connections per origin: every open stream holds one, and a cap would queue streams behind each other.
      agent = new Agent({ connect: { timeout: connectTimeoutMs }, keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, pipelining: 1 });
      this.agents.set(connectTimeoutMs, agent);
    }
    return agent;
  }

  /** Sends one request; answers a 2xx response with its body unread, or throws UpstreamError / ClientAbortedError. */
  async send(upstreamRequest: UpstreamHttpRequest, options: UpstreamCallOptions): Promise<UpstreamResponse> {
    const { timeouts, signal } = options;
    let attempt = 0;
    while (true) {
      let response: Dispatcher.ResponseData;
      try {
        const target = this.splitUrl(upstreamRequest.url);
        response = await this.agentFor(timeouts.connectTimeoutMs).request({
          origin: target.origin,
          path: target.path,
          method: upstreamRequest.method,
          headers: upstreamRequest.headers,
          body: upstreamRequest.method === 'GET' ? undefined : (upstreamRequest.body as Dispatcher.DispatchOptions['body']),
          headersTimeout: timeouts.firstByteTimeoutMs,
          bodyTimeout: timeouts.idleTimeoutMs,
          signal,
        });
      } catch (error) {
        if (isAbort(error, signal)) throw new ClientAbortedError();
        const upstreamError = toTransportError(error, options.providerId, 'connect');
        if (upstreamError.retryable && attempt < timeouts.maxRetries) {
          attempt++;
          options.onRetry?.(attempt, upstreamError);
          await sleep(this.backoff(attempt, timeouts.retryBaseDelayMs), signal);
          continue;
        }
        throw upstreamError;
      }
      const headers = flattenHeaders(response.headers);
      const body = response.body as unknown as UpstreamBody;
      if (response.statusCode >= 200 && response.statusCode < 300) return { status: response.statusCode, headers, body };
      let text = '';
      try {
        text = await readBounded(body);
      } catch (error) {
        if (isAbort(error, signal)) throw new ClientAbortedError();
      }
      const upstreamError = options.parseError(response.statusCode, text, headers);
      const waitSeconds = upstreamError.retryAfter;
      const retryable = upstreamError.retryable && (waitSeconds === undefined || waitSeconds <= MAX_RETRY_AFTER_SECONDS);
      if (retryable && attempt < timeouts.maxRetries) {
        attempt++;
        options.onRetry?.(attempt, upstreamError);
        this.log.info('upstream.retry', { provider: options.providerId, status: response.statusCode, attempt });
        const delay = waitSeconds !== undefined ? waitSeconds * 1000 : this.backoff(attempt, timeouts.retryBaseDelayMs);
        await sleep(delay, signal);
        continue;
      }
      throw upstreamError;
    }
  }

  private splitUrl(url: string): { origin: string; path: string } {
    let split = this.splitUrls.get(url);
    if (!split) {
      const parsed = new URL(url);
      split = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
      if (this.splitUrls.size > 10_000) this.splitUrls.clear();
      this.splitUrls.set(url, split);
    }
    return split;
  }

  private backoff(attempt: number, baseMs: number): number {
    const delay = Math.min(baseMs * 2 ** (attempt - 1), 8_000);
    return delay * (0.75 + Math.random() * 0.25);
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((agent) => agent.close().catch(() => undefined)));
  }
}
