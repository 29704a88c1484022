import type { TRPC_ERROR_CODE_KEY } from '@trpc/server/rpc';

/**
 * The gateway's error hierarchy. Domain code throws these; compat/ renders them
 * in the route family's shape (OpenAI or Anthropic). Messages never carry API
 * keys, upstream auth headers or prompt bodies.
 */
import { DATABASE_RETRY_AFTER_SECONDS, isDatabaseUnavailable } from '../db/errors.js';

export type GatewayErrorCode =
  | 'INVALID_REQUEST'
  | 'UNSUPPORTED_ENDPOINT'
  | 'UNSUPPORTED_FEATURE'
  | 'CONTENT_FILTERED'
  | 'MISSING_HEADER'
  | 'INVALID_FORMAT'
  | 'INVALID_KEY'
  | 'INSUFFICIENT_CREDITS'
  | 'DAILY_LIMIT_EXCEEDED'
  | 'ACCOUNT_DISABLED'
  | 'IP_ACCESS_DENIED'
  | 'PLAN_RESTRICTED'
  | 'ACCESS_NOT_GRANTED'
  | 'USAGE_CHECK_REJECTED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'MODEL_NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'VIDEO_NOT_READY'
  | 'VIDEO_EXPIRED'
  | 'REQUEST_TIMEOUT'
  | 'RANGE_NOT_SATISFIABLE'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'RATE_LIMITED'
  | 'UPSTREAM_ERROR'
  | 'UPSTREAM_TIMEOUT'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_ERROR'
  | 'UNAUTHORIZED_ADMIN'
  | 'INVALID_CREDENTIALS'
  | 'SESSION_REQUIRED'
  | 'CSRF_REJECTED';

/**
 * The one table of error codes: HTTP status (GAPS.md "Errors: status codes
 * and codes") and the tRPC code the `/trpc` endpoint answers with. compat/
 * renders every error shape from a GatewayError, whose status comes from here.
 */
export const ERROR_TABLE: Record<GatewayErrorCode, { status: number; trpc: TRPC_ERROR_CODE_KEY }> = {
  INVALID_REQUEST: { status: 400, trpc: 'BAD_REQUEST' },
  UNSUPPORTED_ENDPOINT: { status: 400, trpc: 'BAD_REQUEST' },
  UNSUPPORTED_FEATURE: { status: 400, trpc: 'BAD_REQUEST' },
  // Not in GAPS.md: the provider's content filter refused the prompt (Azure OpenAI's `content_filter` 400).
  CONTENT_FILTERED: { status: 400, trpc: 'BAD_REQUEST' },
  MISSING_HEADER: { status: 401, trpc: 'UNAUTHORIZED' },
  INVALID_FORMAT: { status: 401, trpc: 'UNAUTHORIZED' },
  INVALID_KEY: { status: 401, trpc: 'UNAUTHORIZED' },
  UNAUTHORIZED_ADMIN: { status: 401, trpc: 'UNAUTHORIZED' },
  INSUFFICIENT_CREDITS: { status: 402, trpc: 'PAYMENT_REQUIRED' },
  DAILY_LIMIT_EXCEEDED: { status: 402, trpc: 'PAYMENT_REQUIRED' },
  ACCOUNT_DISABLED: { status: 403, trpc: 'FORBIDDEN' },
  IP_ACCESS_DENIED: { status: 403, trpc: 'FORBIDDEN' },
  PLAN_RESTRICTED: { status: 403, trpc: 'FORBIDDEN' },
  ACCESS_NOT_GRANTED: { status: 403, trpc: 'FORBIDDEN' },
  USAGE_CHECK_REJECTED: { status: 403, trpc: 'FORBIDDEN' },
  FORBIDDEN: { status: 403, trpc: 'FORBIDDEN' },
  NOT_FOUND: { status: 404, trpc: 'NOT_FOUND' },
  MODEL_NOT_FOUND: { status: 404, trpc: 'NOT_FOUND' },
  METHOD_NOT_ALLOWED: { status: 405, trpc: 'METHOD_NOT_SUPPORTED' },
  REQUEST_TIMEOUT: { status: 408, trpc: 'TIMEOUT' },
  VIDEO_NOT_READY: { status: 409, trpc: 'CONFLICT' },
  // Not in GAPS.md: the content of a video whose files were deleted at its `expires_at` (the SDK's NotFoundError).
  VIDEO_EXPIRED: { status: 404, trpc: 'NOT_FOUND' },
  // Not in GAPS.md: a download's Range lies past the end of the file (RFC 9110 §15.5.17).
  RANGE_NOT_SATISFIABLE: { status: 416, trpc: 'BAD_REQUEST' },
  PAYLOAD_TOO_LARGE: { status: 413, trpc: 'PAYLOAD_TOO_LARGE' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, trpc: 'UNSUPPORTED_MEDIA_TYPE' },
  RATE_LIMITED: { status: 429, trpc: 'TOO_MANY_REQUESTS' },
  INTERNAL_ERROR: { status: 500, trpc: 'INTERNAL_SERVER_ERROR' },
  UPSTREAM_ERROR: { status: 502, trpc: 'BAD_GATEWAY' },
  SERVICE_UNAVAILABLE: { status: 503, trpc: 'SERVICE_UNAVAILABLE' },
  UPSTREAM_TIMEOUT: { status: 504, trpc: 'GATEWAY_TIMEOUT' },
  // The dashboard's sign-in (server/dashboard): wrong email or password, no or an expired session, a mutation without its CSRF token.
  INVALID_CREDENTIALS: { status: 401, trpc: 'UNAUTHORIZED' },
  SESSION_REQUIRED: { status: 401, trpc: 'UNAUTHORIZED' },
  CSRF_REJECTED: { status: 403, trpc: 'FORBIDDEN' },
};

/** tRPC code for a status a relayed provider error kept (a 4xx other than the code's own). */
export function trpcCodeForStatus(status: number): TRPC_ERROR_CODE_KEY {
  for (const entry of Object.values(ERROR_TABLE)) if (entry.status === status) return entry.trpc;
  if (status === 422) return 'UNPROCESSABLE_CONTENT';
  return status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST';
}

const AUTH_CODES = new Set<GatewayErrorCode>([
  'MISSING_HEADER',
  'INVALID_FORMAT',
  'INVALID_KEY',
  'ACCOUNT_DISABLED',
  'IP_ACCESS_DENIED',
]);

export interface GatewayErrorOptions {
  param?: string | null;
  /** Overrides the status of the code (a relayed provider 4xx keeps its status). */
  status?: number;
  /** Seconds, for 429 and 503 answers. */
  retryAfter?: number;
  /** Headers the error answer carries (lower-case names), e.g. `content-range` of a 416. */
  headers?: Record<string, string>;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly code: GatewayErrorCode;
  readonly status: number;
  readonly param: string | null;
  readonly retryAfter: number | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(code: GatewayErrorCode, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = options.status ?? ERROR_TABLE[code].status;
    this.param = options.param ?? null;
    this.retryAfter = options.retryAfter;
    this.headers = options.headers;
  }

  /** Authentication errors carry `reference_id` and `timestamp` (SPEC "Error object"). */
  get isAuthError(): boolean {
    return AUTH_CODES.has(this.code);
  }
}

export interface UpstreamErrorOptions {
  status: number;
  provider: string;
  upstreamRequestId?: string | null;
  retryable: boolean;
  /** Seconds the provider asked us to wait (retry-after). */
  retryAfter?: number;
  /** Provider's error type/code when it gave one (e.g. `invalid_request_error`). */
  upstreamType?: string | null;
  upstreamParam?: string | null;
  cause?: unknown;
}

/**
 * A failure of the provider, before or during its answer. `status` is the
 * provider's HTTP status (0 for connection failures, 504 for timeouts).
 */
export class UpstreamError extends Error {
  readonly status: number;
  readonly provider: string;
  readonly upstreamRequestId: string | null;
  readonly retryable: boolean;
  readonly retryAfter: number | undefined;
  readonly upstreamType: string | null;
  readonly upstreamParam: string | null;
  readonly timeout: boolean;

  constructor(message: string, options: UpstreamErrorOptions & { timeout?: boolean }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'UpstreamError';
    this.status = options.status;
    this.provider = options.provider;
    this.upstreamRequestId = options.upstreamRequestId ?? null;
    this.retryable = options.retryable;
    this.retryAfter = options.retryAfter;
    this.upstreamType = options.upstreamType ?? null;
    this.upstreamParam = options.upstreamParam ?? null;
    this.timeout = options.timeout ?? false;
  }

  /** How the client sees this failure (GAPS.md: relayed 4xx keep status; 5xx → 502; timeout → 504). */
  toGatewayError(): GatewayError {
    if (this.timeout) {
      return new GatewayError('UPSTREAM_TIMEOUT', `The provider did not answer in time: ${this.message}`, { cause: this });
    }
    if (this.status === 401 || this.status === 403) {
      // The provider refused the gateway's own credentials: not the client's key, so not a 401/403 for the client.
      return new GatewayError('UPSTREAM_ERROR', `The provider refused the gateway's credentials (${this.status}).`, { cause: this });
    }
    if (this.status >= 400 && this.status < 500) {
      if (this.status === 429) {
        return new GatewayError('RATE_LIMITED', `The provider is rate limiting requests: ${this.message}`, {
          cause: this,
          retryAfter: this.retryAfter,
        });
      }
      if (this.status === 400 && this.upstreamType === 'content_filter') {
        return new GatewayError('CONTENT_FILTERED', this.message, { param: this.upstreamParam, cause: this });
      }
      const code = this.status === 400 || this.status === 422 ? 'UNSUPPORTED_FEATURE' : 'INVALID_REQUEST';
      return new GatewayError(code, this.message, { status: this.status, param: this.upstreamParam, cause: this });
    }
    return new GatewayError('UPSTREAM_ERROR', `The provider failed: ${this.message}`, { cause: this });
  }
}

/** Any thrown value as a GatewayError (a database outage becomes SERVICE_UNAVAILABLE; other unknown errors INTERNAL_ERROR, without leaking details). */
export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  if (error instanceof UpstreamError) return error.toGatewayError();
  if (isDatabaseUnavailable(error)) {
    // An outage, not a bug: the client may retry, and the gateway recovers without a restart when the database is back.
    return new GatewayError('SERVICE_UNAVAILABLE', 'The service is temporarily unavailable; retry shortly.', { retryAfter: DATABASE_RETRY_AFTER_SECONDS, cause: error });
  }
  return new GatewayError('INTERNAL_ERROR', 'The gateway failed to process the request.', { cause: error });
}

/** The client went away; nothing is to be answered. */
export class ClientAbortedError extends Error {
  constructor() {
    super('The client closed the connection.');
    this.name = 'ClientAbortedError';
  }
}
