/**
 * Gemini error answers → UpstreamError. Google answers `{error: {code,
 * message, status, details}}` (Vertex sometimes as a one-element array);
 * `status` is the canonical gRPC code name. 429 RESOURCE_EXHAUSTED is a rate
 * limit, 5xx (INTERNAL, UNAVAILABLE, DEADLINE_EXCEEDED) are retried and
 * fall over, 400 INVALID_ARGUMENT / FAILED_PRECONDITION are the request's.
 *
 * @see https://ai.google.dev/gemini-api/docs/troubleshooting#error-codes
 * @see https://cloud.google.com/apis/design/errors
 */
import { UpstreamError } from '../../errors.js';
import { geminiErrorWireSchema, type geminiErrorObjectWireSchema } from './gemini.wire.js';
import type { z } from 'zod';

/** What a credential is replaced with (the transport's and the logger's marker). */
export const REDACTED = '[redacted]';

/** Longest upstream message passed on. */
const MAX_MESSAGE_LENGTH = 1000;

type GeminiErrorObject = z.infer<typeof geminiErrorObjectWireSchema>;

function header(headers: Record<string, string | undefined>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name && value !== undefined) return value;
  return undefined;
}

/**
 * Credentials Google or a proxy may echo: an API key (`AIza…`), an OAuth
 * access token (`ya29.…`), a bearer header. None of them may reach a client.
 */
export function redactGoogleCredentials(text: string): string {
  return text
    .replace(/\bBearer\s+\S+/gi, `Bearer ${REDACTED}`)
    .replace(/\bAIza[0-9A-Za-z_-]{20,}/g, REDACTED)
    .replace(/\bya29\.[0-9A-Za-z._-]+/g, REDACTED)
    .replace(/\b(key=)[A-Za-z0-9_-]+/gi, `$1${REDACTED}`);
}

/** Seconds from `retry-after`, else from the `google.rpc.RetryInfo` detail (`"12s"`, `"0.5s"`). */
function readRetryAfter(error: GeminiErrorObject | undefined, headers: Record<string, string | undefined>): number | undefined {
  const retryAfter = Number(header(headers, 'retry-after') ?? Number.NaN);
  if (Number.isFinite(retryAfter) && retryAfter >= 0) return retryAfter;
  for (const detail of error?.details ?? []) {
    const match = /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay ?? '');
    if (match) return Number(match[1]);
  }
  return undefined;
}

/** 408, 429 and every 5xx are worth another try (Google's own clients retry UNAVAILABLE and RESOURCE_EXHAUSTED). */
function isRetryable(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/** An UpstreamError from a status and Google's error object (also used for an error inside a 200 stream). */
export function upstreamErrorOfGeminiStatus(status: number, error: GeminiErrorObject | undefined, headers: Record<string, string | undefined>): UpstreamError {
  const raw = error?.message?.trim();
  const message = raw
    ? redactGoogleCredentials(raw.length > MAX_MESSAGE_LENGTH ? `${raw.slice(0, MAX_MESSAGE_LENGTH)}…` : raw)
    : `Gemini answered HTTP ${status}${error?.status ? ` (${error.status})` : ''}.`;
  return new UpstreamError(message, {
    status,
    provider: 'gemini',
    upstreamRequestId: header(headers, 'x-request-id') ?? null,
    retryable: isRetryable(status),
    retryAfter: readRetryAfter(error, headers),
    upstreamType: error?.status ?? null,
  });
}

export function parseGeminiError(status: number, bodyText: string, headers: Record<string, string | undefined>): UpstreamError {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    body = undefined;
  }
  if (Array.isArray(body)) body = body[0];
  const parsed = geminiErrorWireSchema.safeParse(body);
  return upstreamErrorOfGeminiStatus(status, parsed.success ? parsed.data.error : undefined, headers);
}
