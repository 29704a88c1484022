/**
 * Anthropic error answers → UpstreamError, and the status → Anthropic error
 * type table the gateway uses to render its own errors on the messages routes.
 *
 * @see https://platform.claude.com/docs/en/api/errors
 */
import { UpstreamError } from '../../errors.js';
import { anthropicErrorWireSchema } from './anthropic-answer.wire.js';
import type { AnthropicErrorType } from './anthropic.wire.js';
import { ANTHROPIC_PROVIDER } from './from-anthropic-response.js';

/**
 * HTTP status → Anthropic `error.type` (PROTOCOLS.md §3). Other 4xx read as
 * `invalid_request_error`, other statuses as `api_error`.
 */
export function anthropicErrorType(status: number): AnthropicErrorType {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 504:
      return 'timeout_error';
    case 529:
      return 'overloaded_error';
    default:
      return status >= 400 && status < 500 ? 'invalid_request_error' : 'api_error';
  }
}

function header(headers: Record<string, string | undefined>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name && value !== undefined) return value;
  }
  return undefined;
}

/** `retry-after-ms`, else `retry-after` in seconds or as an HTTP date; in seconds. */
export function parseRetryAfter(headers: Record<string, string | undefined>, now = Date.now()): number | undefined {
  const milliseconds = header(headers, 'retry-after-ms');
  if (milliseconds !== undefined) {
    const value = Number(milliseconds);
    if (Number.isFinite(value) && value >= 0) return value / 1000;
  }
  const retryAfter = header(headers, 'retry-after');
  if (retryAfter === undefined || retryAfter.trim() === '') return undefined;
  const seconds = Number(retryAfter);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds : undefined;
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - now) / 1000);
}

/**
 * Whether the SDKs would retry this answer: `x-should-retry` decides when
 * present, otherwise 408, 409, 429 and every 5xx (529 overloaded included).
 */
function isRetryable(status: number, headers: Record<string, string | undefined>): boolean {
  const shouldRetry = header(headers, 'x-should-retry');
  if (shouldRetry === 'true') return true;
  if (shouldRetry === 'false') return false;
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * Reads `{type:"error", error:{type, message}, request_id}`. The message is
 * the provider's own text; a body that is not Anthropic's (a proxy's HTML
 * page) is not quoted.
 */
export function parseAnthropicError(
  status: number,
  bodyText: string,
  headers: Record<string, string | undefined>,
): UpstreamError {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    body = undefined;
  }
  const parsed = anthropicErrorWireSchema.safeParse(body);
  const error = parsed.success ? parsed.data.error : undefined;
  const type = error?.type ?? null;
  const message = error?.message || `Anthropic answered HTTP ${status}${type ? ` (${type})` : ''}.`;
  return new UpstreamError(message, {
    status,
    provider: ANTHROPIC_PROVIDER,
    upstreamRequestId: header(headers, 'request-id') ?? (parsed.success ? parsed.data.request_id : null) ?? null,
    retryable: isRetryable(status, headers),
    retryAfter: parseRetryAfter(headers),
    upstreamType: type,
  });
}
