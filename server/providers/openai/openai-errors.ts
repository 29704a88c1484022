/**
 * An OpenAI-format upstream's error answer → UpstreamError, with the retry
 * rules of the official SDKs (PROTOCOLS.md §5).
 *
 * @see https://platform.openai.com/docs/guides/error-codes
 */
import { UpstreamError } from '../../errors.js';
import { isRecord, readString } from './json-values.js';

/** Longest upstream message passed on; bodies can be long and are shown to clients. */
const MAX_MESSAGE_LENGTH = 1000;

/** Retried by every official SDK when `x-should-retry` does not decide. */
const RETRYABLE_STATUSES = new Set([408, 409, 429]);

export function parseOpenAIError(
  status: number,
  bodyText: string,
  headers: Record<string, string | undefined>,
): UpstreamError {
  const error = readErrorObject(bodyText);
  const upstreamMessage = error ? readString(error.message) : undefined;
  const message = upstreamMessage?.trim()
    ? truncate(redactSecrets(upstreamMessage.trim()))
    : `The provider answered with HTTP status ${status}.`;
  return new UpstreamError(message, {
    status,
    provider: 'openai',
    upstreamRequestId: readHeader(headers, 'x-request-id') ?? null,
    retryable: readRetryable(status, headers),
    retryAfter: readRetryAfter(headers),
    upstreamType: (error && (readString(error.type) ?? readString(error.code))) ?? null,
    upstreamParam: (error && readString(error.param)) ?? null,
    // The body, never the headers: logs must not see the provider key.
    cause: { status, body: truncate(bodyText) },
  });
}

/**
 * `{error:{message,type,param,code}}` (OpenAI), `{error:"text"}`, a top-level
 * `message`/`detail` (FastAPI-based servers) or a one-element array of these
 * (Google's OpenAI endpoint). Anything else reads as no error object.
 */
function readErrorObject(bodyText: string): Record<string, unknown> | undefined {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return undefined;
  }
  if (Array.isArray(body)) body = body[0];
  if (!isRecord(body)) return undefined;
  if (isRecord(body.error)) return body.error;
  if (typeof body.error === 'string') return { message: body.error };
  if (typeof body.message === 'string') return body;
  if (typeof body.detail === 'string') return { message: body.detail };
  return undefined;
}

function readRetryable(status: number, headers: Record<string, string | undefined>): boolean {
  // The SDKs let the server decide outright with x-should-retry.
  const shouldRetry = readHeader(headers, 'x-should-retry');
  if (shouldRetry === 'true') return true;
  if (shouldRetry === 'false') return false;
  return RETRYABLE_STATUSES.has(status) || status >= 500;
}

/** Seconds from `retry-after-ms`, else `retry-after` (seconds or an HTTP date). */
function readRetryAfter(headers: Record<string, string | undefined>): number | undefined {
  const milliseconds = Number.parseFloat(readHeader(headers, 'retry-after-ms') ?? '');
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds / 1000;
  const value = readHeader(headers, 'retry-after');
  if (value === undefined) return undefined;
  let seconds = Number(value);
  if (value.trim() === '' || !Number.isFinite(seconds)) {
    const date = Date.parse(value);
    if (Number.isNaN(date)) return undefined;
    seconds = Math.max(0, (date - Date.now()) / 1000);
  }
  // Passed on as given: whoever retries decides how long a wait is worth it (the SDKs cap it at 60 s).
  return seconds >= 0 ? seconds : undefined;
}

function readHeader(headers: Record<string, string | undefined>, name: string): string | undefined {
  const exact = headers[name];
  if (exact !== undefined) return exact;
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
  return undefined;
}

/**
 * Removes credentials a provider may echo in an error message (OpenAI's 401
 * names the masked key it received). That key is the gateway's, not the
 * client's, so none of it may reach the client.
 */
export function redactSecrets(message: string): string {
  return message
    .replace(/\bBearer\s+\S+/gi, 'Bearer [redacted]')
    .replace(/\b(?:sk|rk|pk)-[A-Za-z0-9_*-]{4,}/g, '[redacted]')
    .replace(/\b(api[_-]?key\s*[:=]\s*)\S+/gi, '$1[redacted]');
}

function truncate(text: string): string {
  return text.length > MAX_MESSAGE_LENGTH ? `${text.slice(0, MAX_MESSAGE_LENGTH)}…` : text;
}
