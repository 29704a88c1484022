/**
 * The access log: one JSON line per request (`http.access`), written once the
 * answer has ended — a stream's last byte, or the client leaving. It names
 * who (account and key ids, never the key), what (route template, model,
 * the provider and deployment that answered, attempts), the outcome (status,
 * error code, tokens, cost) and the times and sizes; never a body, a prompt,
 * a query string or a header value.
 */
import type { Logger } from '../logger.js';
import type { RequestObservation } from './observation.js';

export type AccessLogLevel = 'info' | 'debug' | 'off';

export interface AccessLogEntry {
  requestId: string;
  method: string;
  route: string;
  status: number;
  code: string | null;
  aborted: boolean;
  accountId: string | null;
  keyId: string | null;
  model: string | null;
  provider: string | null;
  deployment: string | null;
  attempts: number;
  /** Field names avoid "token": the logger masks fields named like secrets. */
  usage: { input: number; output: number };
  /** Micro-credits charged. */
  costMicrocredits: number;
  durationMs: number;
  ttfbMs: number | null;
  bytesIn: number;
  bytesOut: number;
  clientAddress: string;
}

const round = (ms: number): number => Math.round(ms * 1000) / 1000;

export function accessLogEntry(
  observation: RequestObservation,
  outcome: { status: number; code: string | null; aborted: boolean; endedAt: number; bytesIn: number; clientAddress: string },
): AccessLogEntry {
  return {
    requestId: observation.requestId,
    method: observation.method,
    route: observation.route,
    status: outcome.status,
    code: outcome.code,
    aborted: outcome.aborted,
    accountId: observation.accountId,
    keyId: observation.keyId,
    model: observation.model,
    provider: observation.provider,
    deployment: observation.deployment,
    attempts: observation.attempts,
    usage: { input: observation.inputTokens, output: observation.outputTokens },
    costMicrocredits: observation.cost,
    durationMs: round(outcome.endedAt - observation.startedAt),
    ttfbMs: observation.firstByteAt === undefined ? null : round(observation.firstByteAt - observation.startedAt),
    bytesIn: outcome.bytesIn,
    bytesOut: observation.bytesOut,
    clientAddress: outcome.clientAddress,
  };
}

/** Probes and scrapes come every few seconds: their lines are debug, so that they do not drown the traffic. */
const PROBE_ROUTES = new Set(['/healthz', '/readyz', '/metrics']);

export function writeAccessLog(log: Logger, level: AccessLogLevel, entry: AccessLogEntry): void {
  if (level === 'off') return;
  // Flat fields of known names: masked strings, no generic walk (see Logger.flat).
  log.flat(PROBE_ROUTES.has(entry.route) ? 'debug' : level, 'http.access', entry as unknown as Parameters<Logger['flat']>[2]);
}
