/**
 * Errors of `POST /v1/messages` as the official `@anthropic-ai/sdk` sees them:
 * each one in the Anthropic body shape (`{type:"error", error:{type, message,
 * code}}`) so that the SDK picks the right class, with a `request-id` header
 * the SDK exposes as `requestID`. Validation, unknown model, bad key, no
 * credits, provider rate limits and failures after the gateway's retries, and
 * a provider error in the middle of a stream.
 */
import Anthropic, { type APIError } from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestGateway } from '../support/gateway.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { failureOf, FAST_UPSTREAM } from '../support/e2e.js';
import { usageRowOf } from '../support/usage.js';
import {
  ANTHROPIC_SECRET,
  KINDS,
  OPENAI_SECRET,
  createClient,
  expectAnthropicError,
  expectBalanceSettled,
  startMessagesWorld,
  postRaw,
  type MessagesWorld,
  type RecordingClient,
} from './messages-e2e.js';

const PROMPT = 'hello from the errors suite';
const RETRIES = FAST_UPSTREAM.maxRetries;

let world: MessagesWorld;
let gateway: TestGateway;
let openaiUpstream: UpstreamServer;
let anthropicUpstream: UpstreamServer;
let accountId: string;
let key: string;
let recording: RecordingClient;
let client: Anthropic;

beforeAll(async () => {
  world = await startMessagesWorld();
  ({ gateway, openaiUpstream, anthropicUpstream } = world);
  const account = await gateway.createAccountWithKey();
  accountId = account.accountId;
  key = account.key;
  recording = createClient(gateway, key);
  client = recording.client;
});

afterAll(async () => {
  await world?.close();
});

beforeEach(() => {
  anthropicUpstream.reset();
  openaiUpstream.reset();
});

function params(model: string, extra: Partial<Anthropic.MessageCreateParamsNonStreaming> = {}): Anthropic.MessageCreateParamsNonStreaming {
  return { model, max_tokens: 64, messages: [{ role: 'user', content: PROMPT }], ...extra };
}

function untyped(body: Record<string, unknown>): Anthropic.MessageCreateParamsNonStreaming {
  return body as unknown as Anthropic.MessageCreateParamsNonStreaming;
}

function upstreamRequestCount(): number {
  return anthropicUpstream.requests.length + openaiUpstream.requests.length;
}

describe.each(KINDS)('validation on the $kind provider', ({ model }) => {
  it('missing max_tokens → BadRequestError 400 invalid_request_error', async () => {
    const error = await failureOf(client.messages.create(untyped({ model, messages: [{ role: 'user', content: PROMPT }] })));
    const apiError = expectAnthropicError(error, Anthropic.BadRequestError, { status: 400, type: 'invalid_request_error', code: 'INVALID_REQUEST' });
    expect((apiError.error as { error: { param?: string } }).error.param).toBe('max_tokens');
    expect(upstreamRequestCount()).toBe(0);
  });

  it('max_tokens 0 → BadRequestError 400', async () => {
    const error = await failureOf(client.messages.create(params(model, { max_tokens: 0 })));
    expectAnthropicError(error, Anthropic.BadRequestError, { status: 400, type: 'invalid_request_error', code: 'INVALID_REQUEST' });
    expect(upstreamRequestCount()).toBe(0);
  });

  it('a streamed request with an invalid body fails before any event', async () => {
    const error = await failureOf(async () => {
      const stream = await client.messages.create({ ...params(model, { max_tokens: -5 }), stream: true });
      for await (const _event of stream) {
        // Unreachable: the request fails with a status.
      }
    });
    expectAnthropicError(error, Anthropic.BadRequestError, { status: 400, type: 'invalid_request_error' });
  });

  it('messages that are not an array, and a bad block, name the field at fault', async () => {
    const notArray = await failureOf(client.messages.create(untyped({ model, max_tokens: 16, messages: 'hello' })));
    expect((expectAnthropicError(notArray, Anthropic.BadRequestError, { status: 400, type: 'invalid_request_error' }).error as { error: { param?: string } }).error.param).toBe('messages');
    const badBlock = await failureOf(
      client.messages.create(untyped({ model, max_tokens: 16, messages: [{ role: 'user', content: [{ type: 'text', text: 42 }] }] })),
    );
    const param = (expectAnthropicError(badBlock, Anthropic.BadRequestError, { status: 400, type: 'invalid_request_error' }).error as { error: { param?: string } }).error.param;
    expect(param).toMatch(/^messages\[0\]\.content\[0\]\.text$|^messages\.0\.content\.0\.text$/);
  });
});

describe('model, key and credits', () => {
  it('unknown model → NotFoundError 404 not_found_error', async () => {
    const error = await failureOf(client.messages.create(params('claude-does-not-exist')));
    expectAnthropicError(error, Anthropic.NotFoundError, { status: 404, type: 'not_found_error', code: 'MODEL_NOT_FOUND' });
  });

  it('bad key → AuthenticationError 401 authentication_error, with both header styles', async () => {
    for (const auth of ['bearer', 'x-api-key'] as const) {
      const stranger = createClient(gateway, 'sk-umg-0000000000000000000000000000000000000000000', { auth });
      const error = await failureOf(stranger.client.messages.create(params('mock-chat')));
      const apiError = expectAnthropicError(error, Anthropic.AuthenticationError, { status: 401, type: 'authentication_error', code: 'INVALID_KEY' });
      const body = apiError.error as { error: { reference_id?: string; timestamp?: string } };
      expect(body.error.reference_id).toBe(apiError.requestID);
      expect(body.error.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    }
  });

  it('no key at all → 401 authentication_error', async () => {
    const response = await postRaw(gateway, '/v1/messages', params('mock-chat'), {});
    expect(response.status).toBe(401);
    expect(response.headers.get('request-id')).toMatch(/\S/);
    expect(response.json()).toMatchObject({ type: 'error', error: { type: 'authentication_error', code: 'MISSING_HEADER' } });
  });

  it.each(KINDS)('an account with no credits → 402 billing_error ($kind), the provider never called', async ({ model }) => {
    const broke = await gateway.createAccountWithKey({ credits: 0 });
    const brokeClient = createClient(gateway, broke.key).client;
    const error = await failureOf(brokeClient.messages.create(params(model)));
    expectAnthropicError(error, Anthropic.PaymentRequiredError, { status: 402, type: 'billing_error', code: 'INSUFFICIENT_CREDITS' });
    const streamError = await failureOf(brokeClient.messages.stream(params(model)).finalMessage());
    expectAnthropicError(streamError, Anthropic.PaymentRequiredError, { status: 402, type: 'billing_error' });
    expect(upstreamRequestCount()).toBe(0);
  });
});

describe.each(KINDS.filter((kind) => kind.kind !== 'mock'))('provider failures on the $kind upstream', ({ kind, model }) => {
  const upstream = (): UpstreamServer => (kind === 'anthropic' ? anthropicUpstream : openaiUpstream);

  it('a 429 that outlasts the retries → RateLimitError 429 rate_limit_error', async () => {
    const attempts = RETRIES + 1;
    upstream().script(...Array.from({ length: attempts }, () => ({ kind: 'status' as const, status: 429 })));
    const error = await failureOf(client.messages.create(params(model)));
    const apiError = expectAnthropicError(error, Anthropic.RateLimitError, { status: 429, type: 'rate_limit_error', code: 'RATE_LIMITED' });
    expect(upstream().requests).toHaveLength(attempts);
    const row = await usageRowOf(gateway, apiError.requestID!);
    expect(row).toMatchObject({ status: 429, error_code: 'RATE_LIMITED' });
    expect(Number(row.cost)).toBe(0);
  });

  it('a 429 followed by success is retried by the gateway and answered', async () => {
    upstream().script({ kind: 'status', status: 429 });
    const message = await client.messages.create(params(model));
    expect(message.content).toEqual([{ type: 'text', text: `Echo: ${PROMPT}` }]);
    expect(upstream().requests).toHaveLength(2);
  });

  it('a 500 that outlasts the retries → InternalServerError 502 api_error', async () => {
    const attempts = RETRIES + 1;
    upstream().script(...Array.from({ length: attempts }, () => ({ kind: 'status' as const, status: 500, message: 'upstream exploded' })));
    const error = await failureOf(client.messages.create(params(model)));
    const apiError = expectAnthropicError(error, Anthropic.InternalServerError, { status: 502, type: 'api_error', code: 'UPSTREAM_ERROR' });
    expect(upstream().requests).toHaveLength(attempts);
    expect(JSON.stringify(apiError.error)).not.toContain(kind === 'anthropic' ? ANTHROPIC_SECRET : OPENAI_SECRET);
  });

  it('a 500 on a streamed request fails with 502 before any event', async () => {
    upstream().script(...Array.from({ length: RETRIES + 1 }, () => ({ kind: 'status' as const, status: 500 })));
    const error = await failureOf(client.messages.stream(params(model)).finalMessage());
    expectAnthropicError(error, Anthropic.InternalServerError, { status: 502, type: 'api_error' });
  });

  it('an error event mid-stream → the SDK stream throws an APIError after the first events', async () => {
    upstream().script({ kind: 'error-event', afterChunks: 3, message: 'The model is overloaded mid-answer', errorType: kind === 'anthropic' ? 'overloaded_error' : 'server_error' });
    const events: Anthropic.RawMessageStreamEvent[] = [];
    const error = await failureOf(async () => {
      const stream = await client.messages.create({ ...params(model), stream: true });
      for await (const event of stream) events.push(event);
    });
    expect(error, String(error)).toBeInstanceOf(Anthropic.APIError);
    const apiError = error as APIError;
    // An in-band error: the HTTP status was already 200, so the SDK has none to report.
    expect(apiError.status).toBeUndefined();
    expect(apiError.type).toBe(kind === 'anthropic' ? 'overloaded_error' : 'api_error');
    expect(apiError.message).toContain('overloaded mid-answer');
    expect(apiError.requestID).toBe(recording.lastRequestId());
    expect(events[0]?.type).toBe('message_start');
    expect(events.map((event) => event.type)).not.toContain('message_stop');

    // messages.stream() rejects its finalMessage() the same way.
    upstream().script({ kind: 'error-event', afterChunks: 3, message: 'The model is overloaded mid-answer' });
    const helperError = await failureOf(client.messages.stream(params(model)).finalMessage());
    expect(helperError).toBeInstanceOf(Anthropic.APIError);
  });

  it('an error event mid-stream keeps the error type the client would see from the provider', async () => {
    upstream().script({ kind: 'error-event', afterChunks: 3, message: 'The model is overloaded mid-answer', errorType: 'overloaded_error' });
    const error = await failureOf(client.messages.stream(params(model)).finalMessage());
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect((error as APIError).type).toBe('overloaded_error');
  });

  it('a connection reset mid-stream ends the stream with an error event', async () => {
    upstream().script({ kind: 'reset-during-stream', afterChunks: 3 });
    const error = await failureOf(client.messages.stream(params(model)).finalMessage());
    expect(error, String(error)).toBeInstanceOf(Anthropic.APIError);
    expect((error as APIError).type).toBe('api_error');
  });
});

describe('request ids', () => {
  it('every error answer has a request-id header, exposed as requestID', async () => {
    const errors = [
      await failureOf(client.messages.create(params('mock-chat', { max_tokens: 0 }))),
      await failureOf(client.messages.create(params('missing-model'))),
      await failureOf(createClient(gateway, 'sk-umg-bad').client.messages.create(params('mock-chat'))),
    ];
    const ids = errors.map((error) => (error as APIError).requestID);
    for (const id of ids) expect(id).toMatch(/\S/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('a client-chosen x-request-id is echoed as request-id', async () => {
    const error = await failureOf(client.messages.create(params('missing-model'), { headers: { 'x-request-id': 'req_client_chosen_1' } }));
    expect((error as APIError).requestID).toBe('req_client_chosen_1');
  });
});

describe('billing', () => {
  it('leaves no hold after all these failures, and charged only what was answered', async () => {
    await expectBalanceSettled(gateway, accountId);
  });
});
