import type { AuthContext, Credentials } from './auth/authenticate.js';
import type { RequestObservation } from './observability/observation.js';
import type { WebRequest } from './dashboard/sessions.js';
import type { Services } from './services.js';

export type { WebRequest } from './dashboard/sessions.js';

/**
 * What every procedure sees. compat/ fills it from the HTTP request; internal
 * callers (CLI, tests, workers) build it with {@link createContextInner}.
 */
export interface Context {
  services: Services;
  requestId: string;
  clientAddress: string;
  credentials: Credentials;
  /** Set when the caller was already authorised from the headers (compat does so before reading a body). */
  auth?: AuthContext;
  /** Lower-cased request headers a procedure may forward or obey (anthropic-version, anthropic-beta, x-gateway-strict). */
  headers: Readonly<Record<string, string | undefined>>;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** `performance.now()` when the request arrived. */
  receivedAt: number;
  /** Whether the caller can read a streamed answer: compat and in-process callers can, the plain `/trpc` HTTP endpoint cannot. */
  canStream: boolean;
  /** Query string of the public route (e.g. `beta=true`), passed through to same-format providers. */
  query: string;
  /** The browser side of a `/trpc` request (the dashboard's cookies); absent for other callers. */
  web?: WebRequest;
  /** What the request did, for metrics, the access log and spans (compat's requests only). */
  observation?: RequestObservation;
}

export interface ContextOptions {
  requestId?: string;
  clientAddress?: string;
  credentials?: Credentials;
  auth?: AuthContext;
  headers?: Record<string, string | undefined>;
  signal?: AbortSignal;
  query?: string;
  canStream?: boolean;
  web?: WebRequest;
  observation?: RequestObservation;
}

let internalCounter = 0;

export function createContextInner(services: Services, options: ContextOptions = {}): Context {
  return {
    services,
    requestId: options.requestId ?? `internal-${process.pid}-${++internalCounter}`,
    clientAddress: options.clientAddress ?? '127.0.0.1',
    credentials: options.credentials ?? { kind: 'missing' },
    ...(options.auth ? { auth: options.auth } : {}),
    headers: options.headers ?? {},
    signal: options.signal ?? new AbortController().signal,
    receivedAt: performance.now(),
    canStream: options.canStream ?? true,
    query: options.query ?? '',
    ...(options.web ? { web: options.web } : {}),
    observation: options.observation,
  };
}
