/**
 * What one request did, gathered as it runs: the hook points deep in the
 * pipeline (routing, metering, the upstream transport) find the request's
 * observation through an AsyncLocalStorage instead of having it threaded
 * through every call, and compat/ reads it once the answer has ended (access
 * log, request metrics, the server span's last attributes).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
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

const storage = new AsyncLocalStorage<RequestObservation>();

/** The observation of the request this code runs for; undefined outside one (background jobs, the CLI). */
export function currentObservation(): RequestObservation | undefined {
  return storage.getStore();
}

export function runObserved<T>(observation: RequestObservation, run: () => T): T {
  return storage.run(observation, run);
}
