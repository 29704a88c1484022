import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { UpstreamError } from '../../errors.js';
import { parseOpenAIError, redactSecrets } from './openai-errors.js';

const openAIBody = JSON.stringify({
  error: { message: "Invalid value for 'temperature'.", type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' },
});

describe('parseOpenAIError', () => {
  it('reads the OpenAI error body and request id', () => {
    const error = parseOpenAIError(400, openAIBody, { 'x-request-id': 'req_123', 'content-type': 'application/json' });
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error).toMatchObject({
      message: "Invalid value for 'temperature'.",
      status: 400,
      provider: 'openai',
      upstreamRequestId: 'req_123',
      retryable: false,
      upstreamType: 'invalid_request_error',
      upstreamParam: 'temperature',
    });
    expect(error.retryAfter).toBeUndefined();
    expect(error.toGatewayError()).toMatchObject({ code: 'UNSUPPORTED_FEATURE', status: 400, param: 'temperature' });
  });

  describe('retryable', () => {
    it.each([
      [400, false],
      [401, false],
      [403, false],
      [404, false],
      [408, true],
      [409, true],
      [422, false],
      [429, true],
      [500, true],
      [502, true],
      [503, true],
      [529, true],
    ])('HTTP %i → %s', (status, retryable) => {
      expect(parseOpenAIError(status, openAIBody, {}).retryable).toBe(retryable);
    });

    it('lets x-should-retry decide outright', () => {
      expect(parseOpenAIError(400, '', { 'x-should-retry': 'true' }).retryable).toBe(true);
      expect(parseOpenAIError(503, '', { 'x-should-retry': 'false' }).retryable).toBe(false);
    });
  });

  describe('retry-after', () => {
    beforeEach(() => {
      vi.useFakeTimers();
      vi.setSystemTime(new Date('2025-01-01T00:00:00Z'));
    });
    afterEach(() => {
      vi.useRealTimers();
    });

    it.each([
      [{ 'retry-after-ms': '1500', 'retry-after': '9' }, 1.5],
      [{ 'retry-after': '20' }, 20],
      [{ 'Retry-After': '3' }, 3],
      [{ 'retry-after': 'Wed, 01 Jan 2025 00:00:30 GMT' }, 30],
      [{ 'retry-after': 'soon' }, undefined],
      [{ 'retry-after': '-5' }, undefined],
      [{}, undefined],
    ])('%j → %s seconds', (headers, seconds) => {
      expect(parseOpenAIError(429, openAIBody, headers).retryAfter).toBe(seconds);
    });
  });

  describe('bodies', () => {
    it.each([
      ['an error string', JSON.stringify({ error: 'Model not loaded' }), 'Model not loaded'],
      ['a top-level message', JSON.stringify({ message: 'Rate limit reached', type: 'rate_limit' }), 'Rate limit reached'],
      ['a FastAPI detail', JSON.stringify({ detail: 'Not Found' }), 'Not Found'],
      ['a one-element array', JSON.stringify([{ error: { message: 'Quota exceeded', status: 'RESOURCE_EXHAUSTED' } }]), 'Quota exceeded'],
    ])('reads %s', (_name, body, message) => {
      expect(parseOpenAIError(500, body, {}).message).toBe(message);
    });

    it.each([
      ['HTML', '<html><body><h1>502 Bad Gateway</h1></body></html>'],
      ['an empty body', ''],
      ['JSON without a message', JSON.stringify({ ok: false })],
      ['an empty message', JSON.stringify({ error: { message: '  ' } })],
    ])('gives a generic message for %s', (_name, body) => {
      const error = parseOpenAIError(502, body, {});
      expect(error.message).toBe('The provider answered with HTTP status 502.');
      expect(error.upstreamType).toBeNull();
    });

    it('truncates very long messages', () => {
      const error = parseOpenAIError(400, JSON.stringify({ error: { message: 'x'.repeat(5000) } }), {});
      expect(error.message).toHaveLength(1001);
    });
  });

  describe('secrets', () => {
    it('never puts the provider key or headers in the message', () => {
      const body = JSON.stringify({
        error: {
          message: 'Incorrect API key provided: sk-proj-****************************Ab12. You can find your API key at https://platform.openai.com/account/api-keys.',
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_api_key',
        },
      });
      const error = parseOpenAIError(401, body, { authorization: 'Bearer sk-live-secret', 'x-request-id': 'req_1' });
      expect(error.message).toBe(
        'Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys.',
      );
      expect(JSON.stringify({ message: error.message, cause: error.cause })).not.toContain('sk-live-secret');
      expect(error.upstreamType).toBe('invalid_request_error');
    });

    it.each([
      ['Authorization: Bearer abc.def.ghi was rejected', 'Authorization: Bearer [redacted] was rejected'],
      ['key sk-ant-api03-abcdef is invalid', 'key [redacted] is invalid'],
      ['api_key=abc123 rejected', 'api_key=[redacted] rejected'],
      ['nothing secret here', 'nothing secret here'],
    ])('redacts %j', (message, expected) => {
      expect(redactSecrets(message)).toBe(expected);
    });
  });
});
