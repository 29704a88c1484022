/**
 * What one request did, gathered as it runs: compat/ creates it, the request's context
 * carries it to the hook points deep in the pipeline (authorisation, the credit hold, each
 * upstream attempt, the usage row), and compat/ reads it once the answer has ended (access
 * log, request metrics, the server span's last attributes). It travels as an argument, not
 * through an AsyncLocalStorage: on Node 20 one storage in use makes every promise of the
 * process pay async hooks.
 */
import type { Span } from '@opentelemetry/api';

export class RequestObservation {
  /** `performance.now()` at arrival. */
  readonly startedAt = performance.now();
  /** `performance.now()` of the first body byte written. */
  firstByteAt: number | undefined;
  bytesOut = 0;
  /** The route template (`/v1/chat/completions`, `/v1/files/:id`), never the raw path. */
  route = 'unmatched';
  accountId: string | null = null;
  keyId: string | null = null;
  /** The catalog model id, once the request resolved one. */
  model: string | null = null;
  provider: string | null = null;
  /** The deployment that answered (`provider/upstream model`). */
  deployment: string | null = null;
  attempts = 0;
  inputTokens = 0;
  outputTokens = 0;
  /** Micro-credits charged. */
  cost = 0;
  /** The error code the client saw, or that ended a started stream. */
  errorCode: string | null = null;
  /** An SSE answer is being written (counted in the open-streams gauge until it ends). */
  streaming = false;
  /** The server span (tracing on only). */
  span: Span | undefined;
  /** The span of the upstream attempt under way (its context goes upstream as `traceparent`). */
  attemptSpan: Span | undefined;

  constructor(
    readonly requestId: string,
    readonly method: string,
  ) {}
}

