import type { Credentials } from './auth/authenticate.js';
import type { Services } from './services.js';

/**
 * What every procedure sees. compat/ fills it from the HTTP request; internal
 * callers (CLI, tests, workers) build it with {@link createContextInner}.
 */
export interface Context {
  services: Services;
  requestId: string;
  clientAddress: string;
  credentials: Credentials;
  /** Lower-cased request headers a procedure may forward or obey (anthropic-version, anthropic-beta, x-gateway-strict). */
  headers: Readonly<Record<string, string | undefined>>;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  receivedAt: number;
  /** Headers a procedure wants on the answer (e.g. x-gateway-dropped-params). */
  responseHeaders: Record<string, string>;
  /** Query string of the public route (e.g. `beta=true`), passed through to same-format providers. */
  query: string;
}

export interface ContextOptions {
  requestId?: string;
  clientAddress?: string;
  credentials?: Credentials;
  headers?: Record<string, string | undefined>;
  signal?: AbortSignal;
  query?: string;
}

let internalCounter = 0;

export function createContextInner(services: Services, options: ContextOptions = {}): Context {
  return {
    services,
    requestId: options.requestId ?? `internal-${process.pid}-${++internalCounter}`,
    clientAddress: options.clientAddress ?? '127.0.0.1',
    credentials: options.credentials ?? { kind: 'missing' },
    headers: options.headers ?? {},
    signal: options.signal ?? new AbortController().signal,
    receivedAt: performance.now(),
    responseHeaders: {},
    query: options.query ?? '',
  };
}
