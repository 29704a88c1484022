import { describe, expect, it } from 'vitest';
import { anthropicErrorType, parseAnthropicError, parseRetryAfter } from './anthropic-errors.js';

const body = (type: string, message: string) => JSON.stringify({ type: 'error', error: { type, message }, request_id: 'req_body' });

describe('parseAnthropicError', () => {
  it('reads type, message, request id and retry-after', () => {
    const error = parseAnthropicError(429, body('rate_limit_error', 'Number of requests has exceeded your rate limit.'), {
      'request-id': 'req_011CSHoEeqs5C35K2UUqR7Fy',
      'retry-after': '12',
    });
    expect(error.message).toBe('Number of requests has exceeded your rate limit.');
    expect(error.status).toBe(429);
    expect(error.provider).toBe('anthropic');
    expect(error.upstreamType).toBe('rate_limit_error');
    expect(error.upstreamRequestId).toBe('req_011CSHoEeqs5C35K2UUqR7Fy');
    expect(error.retryable).toBe(true);
    expect(error.retryAfter).toBe(12);
    expect(error.toGatewayError().code).toBe('RATE_LIMITED');
  });

  it('marks 408, 409, 429, 5xx and 529 retryable, other 4xx not', () => {
    const retryable = [400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 504, 529].map(
      (status) => [status, parseAnthropicError(status, body('x', 'y'), {}).retryable] as const,
    );
    expect(retryable).toEqual([
      [400, false],
      [401, false],
      [403, false],
      [404, false],
      [408, true],
      [409, true],
      [413, false],
      [422, false],
      [429, true],
      [500, true],
      [502, true],
      [503, true],
      [504, true],
      [529, true],
    ]);
  });

  it('lets x-should-retry decide', () => {
    expect(parseAnthropicError(400, '', { 'X-Should-Retry': 'true' }).retryable).toBe(true);
    expect(parseAnthropicError(529, '', { 'x-should-retry': 'false' }).retryable).toBe(false);
  });

  it('does not quote a body that is not Anthropic JSON', () => {
    const error = parseAnthropicError(502, '<html>Bad Gateway from proxy with secrets</html>', {});
    expect(error.message).toBe('Anthropic answered HTTP 502.');
    expect(error.upstreamType).toBeNull();
    expect(error.upstreamRequestId).toBeNull();
  });

  it('falls back to the request id of the body', () => {
    expect(parseAnthropicError(500, body('api_error', 'Internal'), {}).upstreamRequestId).toBe('req_body');
  });
});

describe('parseRetryAfter', () => {
  it('prefers retry-after-ms, then seconds, then an HTTP date', () => {
    expect(parseRetryAfter({ 'retry-after-ms': '1500', 'retry-after': '9' })).toBe(1.5);
    expect(parseRetryAfter({ 'retry-after': '9' })).toBe(9);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }, now)).toBe(30);
    expect(parseRetryAfter({ 'retry-after': 'soon' })).toBeUndefined();
    expect(parseRetryAfter({})).toBeUndefined();
  });
});

describe('anthropicErrorType', () => {
  it('follows the status table', () => {
    expect([400, 401, 402, 403, 404, 405, 409, 413, 415, 422, 429, 500, 502, 503, 504, 529].map(anthropicErrorType)).toEqual([
      'invalid_request_error',
      'authentication_error',
      'billing_error',
      'permission_error',
      'not_found_error',
      'invalid_request_error',
      'invalid_request_error',
      'request_too_large',
      'invalid_request_error',
      'invalid_request_error',
      'rate_limit_error',
      'api_error',
      'api_error',
      'api_error',
      'timeout_error',
      'overloaded_error',
    ]);
  });
});
