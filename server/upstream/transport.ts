import type { UpstreamTimeouts } from '../config.js';
import { ClientAbortedError, GatewayError, UpstreamError } from '../errors.js';
import { providerSecrets, type ResolvedProvider } from '../catalog/catalog.js';
import type { ParseUpstreamError, UpstreamResponse, UpstreamTransport } from '../providers/types.js';
import { SseParser, type SseEvent } from '../sse/sse-parser.js';
import { toTransportError, type UpstreamClient } from './upstream-client.js';
import { withTraceContext } from '../observability/observability.js';
import type { RequestObservation } from '../observability/observation.js';
import { redactionModeOf, SecretRedactor } from './secret-redactor.js';

/** The largest JSON answer read from a provider. */
export const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export interface TransportOptions {
  client: UpstreamClient;
  provider: ResolvedProvider;
  signal: AbortSignal;
  /** The gateway's defaults; the provider's catalog entry overrides them. */
  timeouts: UpstreamTimeouts;
  /** Retries per call for this operation, over the provider's own setting (count_tokens: none). */
  maxRetries?: number;
  /** Called before each retry (logs and tests observe retries through it). */
  onRetry?: (attempt: number, error: UpstreamError) => void;
  /** The request's observation (its attempt span's trace context goes upstream). */
  observation?: RequestObservation;
}

function isAbortError(error: unknown): boolean {
  return (error as Error)?.name === 'AbortError' || (error as { code?: string })?.code === 'UND_ERR_ABORTED';
}

/** The provider's timeouts and retries: the gateway's, overridden by its catalog entry. */
export function timeoutsFor(provider: ResolvedProvider, defaults: UpstreamTimeouts): UpstreamTimeouts {
  const entry = provider.entry;
  return {
    ...defaults,
    ...(entry.connectTimeoutMs ? { connectTimeoutMs: entry.connectTimeoutMs } : {}),
    ...(entry.firstByteTimeoutMs ? { firstByteTimeoutMs: entry.firstByteTimeoutMs } : {}),
    ...(entry.idleTimeoutMs ? { idleTimeoutMs: entry.idleTimeoutMs } : {}),
    ...(entry.maxRetries !== undefined ? { maxRetries: entry.maxRetries } : {}),
  };
}

/** One redactor per provider object (a catalog reload makes new ones). */
const redactors = new WeakMap<ResolvedProvider, SecretRedactor>();

/** The redactor of a provider's secrets, built on its first request. */
export function redactorOf(provider: ResolvedProvider): SecretRedactor {
  let redactor = redactors.get(provider);
  if (!redactor) {
    redactor = new SecretRedactor(providerSecrets(provider));
    redactors.set(provider, redactor);
  }
  return redactor;
}

/**
 * HTTP to one deployment's provider for one request (see {@link UpstreamTransport}).
 * Every body the provider answers, 2xx or error, reaches its reader with the
 * provider's secrets redacted (secret-redactor.ts): no operation reads a
 * provider's bytes any other way.
 */
export function createTransport(options: TransportOptions): UpstreamTransport {
  const { client, provider, signal } = options;
  const redactor = redactorOf(provider);
  const timeouts = timeoutsFor(provider, options.timeouts);
  if (options.maxRetries !== undefined) timeouts.maxRetries = options.maxRetries;
  const mapReadError = (error: unknown): Error => {
    if (signal.aborted || isAbortError(error)) return new ClientAbortedError();
    if (error instanceof UpstreamError || error instanceof GatewayError || error instanceof ClientAbortedError) return error;
    return toTransportError(error, provider.id, 'stream');
  };
  async function readBytes(response: UpstreamResponse, limit: number): Promise<Buffer> {
    const declared = Number(response.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      response.body.destroy();
      throw new UpstreamError('the provider answer is too large', { status: 502, provider: provider.id, retryable: false });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of response.body) {
        size += chunk.length;
        if (size > limit) throw new UpstreamError('the provider answer is too large', { status: 502, provider: provider.id, retryable: false });
        chunks.push(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
      }
    } catch (error) {
      response.body.destroy();
      throw mapReadError(error);
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
  }
  return {
    providerId: provider.id,
    signal,
    async send(request, parseError) {
      const redactedError: ParseUpstreamError = redactor.isEmpty ? parseError : (status, text, headers) => parseError(status, redactor.redactText(text), headers);
      const response = await client.send(withTraceContext(request, options.observation), { providerId: provider.id, signal, timeouts, parseError: redactedError, onRetry: options.onRetry });
      if (redactor.isEmpty) return response;
      return { ...response, body: redactor.redactBody(response.body, redactionModeOf(response.headers['content-type'])) };
    },
    readBytes,
    async readJson(response) {
      // Decoded once, whole: a character split across chunks stays whole.
      const text = (await readBytes(response, MAX_RESPONSE_BYTES)).toString('utf8');
      try {
        return { value: JSON.parse(text), text };
      } catch (error) {
        throw new UpstreamError('the provider answered with invalid JSON', { status: 502, provider: provider.id, retryable: false, cause: error });
      }
    },
    readEvents: (response) => readEvents(response, mapReadError),
    readChunks: (response) => readChunks(response, mapReadError),
  };
}

async function* readChunks(response: UpstreamResponse, mapReadError: (error: unknown) => Error): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of response.body) yield chunk;
  } catch (error) {
    throw mapReadError(error);
  } finally {
    response.body.destroy();
  }
}

async function* readEvents(response: UpstreamResponse, mapReadError: (error: unknown) => Error): AsyncGenerator<SseEvent> {
  const parser = new SseParser();
  try {
    for await (const chunk of response.body) yield* parser.push(chunk);
    yield* parser.end();
  } catch (error) {
    throw mapReadError(error);
  } finally {
    response.body.destroy();
  }
}
