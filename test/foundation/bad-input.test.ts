/**
 * Bad requests get a clear 4xx in the OpenAI error shape, never a 500, and the
 * gateway keeps serving afterwards; the probes, the OpenAPI document and the
 * request id header.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer, getJson, postJson, type Answer, type Json } from '../support/http.js';
import { CHAT_BODY, expectAnthropicError, expectOpenAIError, MESSAGES_BODY, send } from './http.js';

const BODY_LIMIT = 1024;
const CHAT = '/v1/chat/completions';

let gateway: TestGateway;
let key: string;
const answers: Answer[] = [];

beforeAll(async () => {
  gateway = await startTestGateway({ config: { bodyLimitBytes: BODY_LIMIT } });
  ({ key } = await gateway.createAccountWithKey());
});

afterAll(async () => {
  await gateway?.close();
});

/** Every answer of this file, kept for the x-request-id check at the end. */
function seen(answer: Answer): Answer {
  answers.push(answer);
  return answer;
}

function postRaw(body: NonNullable<RequestInit['body']>, headers: Record<string, string>): Promise<Answer> {
  return send(`${gateway.url}${CHAT}`, { method: 'POST', headers: { ...bearer(key), ...headers }, body }).then(seen);
}

describe('bad request bodies', () => {
  it('answers 400 INVALID_REQUEST for malformed JSON', async () => {
    const answer = await postRaw('{"model": "mock-chat", "messages": [', { 'content-type': 'application/json' });
    const error = expectOpenAIError(answer, 400, 'INVALID_REQUEST');
    expect(error.type).toBe('invalid_request_error');
    expect(error.message).toMatch(/JSON/);
  });

  it('answers 400 INVALID_REQUEST for a JSON array body', async () => {
    const answer = await postRaw(JSON.stringify([CHAT_BODY]), { 'content-type': 'application/json' });
    expectOpenAIError(answer, 400, 'INVALID_REQUEST');
  });

  it('answers 400 INVALID_REQUEST for JSON that is not an object (null, a string, a number)', async () => {
    for (const body of ['null', '"hello"', '42']) {
      expectOpenAIError(await postRaw(body, { 'content-type': 'application/json' }), 400, 'INVALID_REQUEST');
    }
  });

  it('answers 400 INVALID_REQUEST for an empty body', async () => {
    const answer = await postRaw('', { 'content-type': 'application/json' });
    const error = expectOpenAIError(answer, 400, 'INVALID_REQUEST');
    expect(error.message).toMatch(/empty/i);
  });

  it('answers 400 INVALID_REQUEST naming the field for a body that fails validation', async () => {
    const answer = seen(await postJson(`${gateway.url}${CHAT}`, { model: 'mock-chat' }, bearer(key)));
    const error = expectOpenAIError(answer, 400, 'INVALID_REQUEST');
    expect(error.param).toBe('messages');
  });

  it('answers 415 UNSUPPORTED_MEDIA_TYPE for a non-JSON content type', async () => {
    const answer = await postRaw(JSON.stringify(CHAT_BODY), { 'content-type': 'text/plain' });
    expectOpenAIError(answer, 415, 'UNSUPPORTED_MEDIA_TYPE');
    const form = await postRaw('model=mock-chat', { 'content-type': 'application/x-www-form-urlencoded' });
    expectOpenAIError(form, 415, 'UNSUPPORTED_MEDIA_TYPE');
  });

  it('accepts a JSON content type with parameters', async () => {
    const answer = await postRaw(JSON.stringify(CHAT_BODY), { 'content-type': 'application/json; charset=utf-8' });
    expect(answer.status, answer.text).toBe(200);
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a body over the limit (declared length)', async () => {
    const big = JSON.stringify({ ...CHAT_BODY, messages: [{ role: 'user', content: 'x'.repeat(BODY_LIMIT * 4) }] });
    const answer = await postRaw(big, { 'content-type': 'application/json' });
    expectOpenAIError(answer, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('answers 413 PAYLOAD_TOO_LARGE for a chunked body that grows over the limit', async () => {
    const chunk = new TextEncoder().encode(`{"model":"mock-chat","messages":[{"role":"user","content":"${'y'.repeat(BODY_LIMIT * 2)}"}]}`);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(chunk);
        controller.close();
      },
    });
    const answer = await send(`${gateway.url}${CHAT}`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit & { duplex: 'half' }).then(seen);
    expectOpenAIError(answer, 413, 'PAYLOAD_TOO_LARGE');
  });

  it('serves a body just under the limit', async () => {
    const padding = BODY_LIMIT - JSON.stringify({ ...CHAT_BODY, messages: [{ role: 'user', content: '' }] }).length - 10;
    const body = JSON.stringify({ ...CHAT_BODY, messages: [{ role: 'user', content: 'z'.repeat(padding) }] });
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(BODY_LIMIT);
    const answer = await postRaw(body, { 'content-type': 'application/json' });
    expect(answer.status, answer.text).toBe(200);
  });
});

describe('bad request bodies on the messages family (Anthropic shape)', () => {
  function postMessages(body: string, headers: Record<string, string> = {}, path = '/v1/messages'): Promise<Answer> {
    return send(`${gateway.url}${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers }, body }).then(seen);
  }

  it('answers 400 invalid_request_error for malformed JSON and for a non-object body', async () => {
    expectAnthropicError(await postMessages('{"model":'), 400, 'INVALID_REQUEST', 'invalid_request_error');
    expectAnthropicError(await postMessages('[]'), 400, 'INVALID_REQUEST', 'invalid_request_error');
    expectAnthropicError(await postMessages(''), 400, 'INVALID_REQUEST', 'invalid_request_error');
  });

  it('answers 415 for a non-JSON content type and 413 request_too_large over the limit', async () => {
    expectAnthropicError(await postMessages(JSON.stringify(MESSAGES_BODY), { 'content-type': 'text/plain' }), 415, 'UNSUPPORTED_MEDIA_TYPE', 'invalid_request_error');
    const big = JSON.stringify({ ...MESSAGES_BODY, messages: [{ role: 'user', content: 'x'.repeat(BODY_LIMIT * 4) }] });
    expectAnthropicError(await postMessages(big), 413, 'PAYLOAD_TOO_LARGE', 'request_too_large');
    expectAnthropicError(await postMessages(big, {}, '/v1/messages/count_tokens'), 413, 'PAYLOAD_TOO_LARGE', 'request_too_large');
  });

  it('answers 404 and 405 in the same shape', async () => {
    expectAnthropicError(await postMessages('{}', {}, '/v1/messages/nope'), 404, 'NOT_FOUND', 'not_found_error');
    const wrongMethod = seen(await getJson(`${gateway.url}/v1/messages`, { 'x-api-key': key }));
    expectAnthropicError(wrongMethod, 405, 'METHOD_NOT_ALLOWED', 'invalid_request_error');
    expect(wrongMethod.headers.get('allow')).toBe('POST');
  });
});

describe('routes and methods', () => {
  it('answers 404 NOT_FOUND for an unknown route', async () => {
    const answer = seen(await getJson(`${gateway.url}/v1/does-not-exist`));
    expectOpenAIError(answer, 404, 'NOT_FOUND');
    const outside = seen(await getJson(`${gateway.url}/nothing/here`));
    expectOpenAIError(outside, 404, 'NOT_FOUND');
  });

  it('answers 405 with an allow header for a wrong method on a known route', async () => {
    const answer = seen(await send(`${gateway.url}/v1/models`, { method: 'DELETE' }));
    expectOpenAIError(answer, 405, 'METHOD_NOT_ALLOWED');
    expect(answer.headers.get('allow')).toBe('GET');
    const chat = seen(await getJson(`${gateway.url}${CHAT}`, bearer(key)));
    expectOpenAIError(chat, 405, 'METHOD_NOT_ALLOWED');
    expect(chat.headers.get('allow')).toBe('POST');
  });

  it('answers 404 MODEL_NOT_FOUND for GET /v1/models/unknown', async () => {
    const answer = seen(await getJson(`${gateway.url}/v1/models/unknown`));
    const error = expectOpenAIError(answer, 404, 'MODEL_NOT_FOUND');
    expect(error.message).toContain('unknown');
  });

  it('still serves /v1/models after all of the above', async () => {
    const answer = seen(await getJson(`${gateway.url}/v1/models`));
    expect(answer.status).toBe(200);
    expect(answer.body.object).toBe('list');
    const ids = (answer.body.data as Array<{ id: string }>).map((model) => model.id);
    expect(ids).toContain('mock-chat');
    const one = seen(await getJson(`${gateway.url}/v1/models/mock-chat`));
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: 'mock-chat', object: 'model' });
  });
});

describe('probes and documents', () => {
  it('/healthz answers 200', async () => {
    const answer = seen(await getJson(`${gateway.url}/healthz`));
    expect(answer.status).toBe(200);
  });

  it('/readyz answers 200 {status: "ready"}', async () => {
    const answer = seen(await getJson(`${gateway.url}/readyz`));
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ status: 'ready' });
  });

  it('/openapi.json is an OpenAPI 3 document listing /v1/models', async () => {
    const answer = seen(await getJson(`${gateway.url}/openapi.json`));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.body.openapi).toMatch(/^3\./);
    const paths = answer.body.paths as Record<string, Json>;
    expect(paths['/v1/models']).toHaveProperty('get');
    expect(paths['/v1/chat/completions']).toHaveProperty('post');
  });
});

describe('request ids', () => {
  it('echoes an incoming x-request-id, on success and on error', async () => {
    const ok = seen(await getJson(`${gateway.url}/v1/models`, { 'x-request-id': 'client-trace-42' }));
    expect(ok.headers.get('x-request-id')).toBe('client-trace-42');
    const failed = seen(await getJson(`${gateway.url}/v1/nope`, { 'x-request-id': 'client-trace-43' }));
    expect(failed.status).toBe(404);
    expect(failed.headers.get('x-request-id')).toBe('client-trace-43');
  });

  it('put an x-request-id on every answer of this file, and never answered 500', () => {
    expect(answers.length).toBeGreaterThan(15);
    for (const answer of answers) {
      expect(answer.headers.get('x-request-id'), answer.text).toBeTruthy();
      expect(answer.status, answer.text).toBeLessThan(500);
    }
  });
});
