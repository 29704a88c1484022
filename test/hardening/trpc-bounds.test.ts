/**
 * /trpc under the same bounds as /v1 (issue 20 rows 5 and 11): every body is
 * read into the instance's body budget, under the size limit and the idle
 * timeout, and its nesting is bounded, before tRPC parses it or any procedure
 * runs — the unauthenticated sign-in included. Its errors carry the tRPC code
 * of their status, and a 5xx is logged with its cause.
 *
 * Slow, huge and abandoned bodies are sent over raw sockets; what is asserted
 * is the answer (413, 408, 503, 400, 415) and that the budget and the request
 * are given back, never memory use or timing.
 */
import net from 'node:net';
import { TRPC_ERROR_CODES_BY_KEY } from '@trpc/server/rpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogFile } from '../../server/catalog/catalog.schema.js';
import { readConfig } from '../../server/config.js';
import { ANONYMOUS_TRPC_BODY_BYTES } from '../../compat/trpc-credentials.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer, getJson, postJson, type Answer } from '../support/http.js';
import { waitFor } from '../support/wait.js';
import { dataOf, trpcMutation, trpcQuery, type TrpcAnswer } from '../foundation/http.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';

const MiB = 1024 * 1024;
const BODY_LIMIT = 2 * MiB;
const BUDGET = 3 * MiB;
const MAX_DEPTH = 1000;

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** A request written by hand on its own connection: the head now, the body when and as the test says. */
interface RawRequest {
  socket: net.Socket;
  /** The answer, read whole (content-length or chunked). */
  answer: Promise<RawAnswer>;
  /** Resolves when the server closed the connection. */
  closed: Promise<void>;
}

function openRaw(url: string, head: string, body: Buffer | string = ''): RawRequest {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const answer = new Promise<RawAnswer>((resolve, reject) => {
    let received = Buffer.alloc(0);
    const tryParse = (final: boolean) => {
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return final ? reject(new Error(`no answer: ${received.toString('latin1')}`)) : undefined;
      const lines = received.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(lines[0]!.split(' ')[1]);
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      let rest = received.subarray(end + 4);
      if (headers['transfer-encoding'] === 'chunked') {
        const parts: Buffer[] = [];
        for (;;) {
          const lineEnd = rest.indexOf('\r\n');
          if (lineEnd < 0) return final ? reject(new Error('cut chunk')) : undefined;
          const size = parseInt(rest.subarray(0, lineEnd).toString('latin1'), 16);
          if (size === 0) return resolve({ status, headers, body: Buffer.concat(parts).toString('utf8') });
          if (rest.length < lineEnd + 2 + size + 2) return final ? reject(new Error('cut chunk')) : undefined;
          parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size));
          rest = rest.subarray(lineEnd + 2 + size + 2);
        }
      }
      const length = Number(headers['content-length'] ?? NaN);
      if (Number.isFinite(length) ? rest.length >= length : final) resolve({ status, headers, body: rest.subarray(0, Number.isFinite(length) ? length : undefined).toString('utf8') });
      else if (final) reject(new Error('cut body'));
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      tryParse(false);
    });
    socket.once('close', () => tryParse(true));
  });
  // A request the test abandons is never answered: that is not a failure.
  answer.catch(() => undefined);
  socket.write(head);
  if (body.length > 0) socket.write(body);
  return { socket, answer, closed };
}

function postHead(path: string, headers: Record<string, string>): string {
  return `POST ${path} HTTP/1.1\r\nhost: localhost\r\n${Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')}\r\n`;
}

function chunk(data: Buffer | string): Buffer {
  const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data);
  return Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]);
}

/** Writes `piece` (a chunk) until the gateway answers, at most `maxBytes`; answers how much was sent. */
async function writeUntilAnswered(request: { socket: net.Socket; answer: Promise<unknown> }, piece: Buffer, maxBytes: number): Promise<number> {
  let sent = 0;
  let answered = false;
  void request.answer.then(() => (answered = true), () => (answered = true));
  while (!answered && sent < maxBytes) {
    if (!request.socket.write(piece)) await new Promise((resolve) => request.socket.once('drain', resolve));
    sent += piece.length;
  }
  return sent;
}

interface TrpcErrorBody {
  error: { message: string; code: number; data: { code: string; httpStatus: number; gatewayCode: string | null } };
}

/** A tRPC error answer with the tRPC code (name and JSON-RPC number) that goes with its status. */
function expectTrpcCode(answer: { status: number; body: string } | Answer | TrpcAnswer, status: number, code: keyof typeof TRPC_ERROR_CODES_BY_KEY, gatewayCode: string | null): TrpcErrorBody['error'] {
  const text = 'text' in answer ? answer.text : answer.body;
  expect(answer.status, text).toBe(status);
  const body = JSON.parse(text) as TrpcErrorBody | TrpcErrorBody[];
  const error = (Array.isArray(body) ? body[0]! : body).error;
  expect(error.data.httpStatus).toBe(status);
  expect(error.data.code).toBe(code);
  expect(error.code).toBe(TRPC_ERROR_CODES_BY_KEY[code]);
  expect(error.data.gatewayCode).toBe(gatewayCode);
  return error;
}

const LOGIN = '/trpc/dashboard.auth.login';
/** A procedure behind an API key: its bodies may be as large as /v1's. */
const CHAT = '/trpc/chat.completions';
/** JSON nested `depth` levels deep (`{"a":{"a":…}}`), written out: JSON.stringify itself overflows at some thousands. */
function nested(depth: number): string {
  return `${'{"a":'.repeat(depth - 1)}{"a":1}${'}'.repeat(depth - 1)}`;
}
/** A messages request whose assistant turn has a tool_use `input` `depth` levels deep (the body wraps it in five more). */
function messagesWithDeepToolInput(depth: number): string {
  const body = {
    model: 'mock-chat',
    max_tokens: 16,
    messages: [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: '@' }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
    ],
  };
  return JSON.stringify(body).replace('"@"', nested(depth));
}

describe('/trpc bodies under the /v1 bounds', () => {
  let gateway: TestGateway;
  let key: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    gateway = await startTestGateway({
      logLines,
      env: { BODY_LIMIT_BYTES: String(BODY_LIMIT), BODY_BUDGET_BYTES: String(BUDGET), BODY_IDLE_TIMEOUT_MS: '500', MAX_JSON_DEPTH: String(MAX_DEPTH) },
    });
    ({ key } = await gateway.createAccountWithKey({ credits: 1000 }));
  });
  afterAll(() => gateway?.close());

  /** Nothing held and nothing in flight: what every refused or abandoned body must leave. */
  async function expectAllGivenBack(): Promise<void> {
    await waitFor(() => gateway.gateway.bodyBytesHeld() === 0 && gateway.gateway.requestsInFlight() === 0, { message: 'the body budget to be whole and no request in flight' });
  }

  it('refuses a keyed call declaring more than BODY_LIMIT_BYTES with 413 before reading it', async () => {
    const request = openRaw(gateway.url, postHead(CHAT, { ...bearer(key), 'content-type': 'application/json', 'content-length': String(BODY_LIMIT + 1) }));
    const answer = await request.answer;
    request.socket.destroy();
    expectTrpcCode(answer, 413, 'PAYLOAD_TOO_LARGE', 'PAYLOAD_TOO_LARGE');
    await expectAllGivenBack();
  });

  it('refuses a chunked keyed body once it passes BODY_LIMIT_BYTES with 413, and gives its bytes back', async () => {
    const request = openRaw(gateway.url, postHead(CHAT, { ...bearer(key), 'content-type': 'application/json', 'transfer-encoding': 'chunked' }));
    // Written until the gateway answers (it reads and drops the rest), never more than twice the limit.
    const sent = await writeUntilAnswered(request, chunk(Buffer.alloc(256 * 1024, 0x20)), 2 * BODY_LIMIT);
    const answer = await request.answer;
    request.socket.destroy();
    expectTrpcCode(answer, 413, 'PAYLOAD_TOO_LARGE', 'PAYLOAD_TOO_LARGE');
    expect(sent).toBeGreaterThan(BODY_LIMIT);
    await expectAllGivenBack();
  });

  it('lets a request without a valid credential send 64 KiB at most, declared or chunked; a forged key or cookie does not lift it', async () => {
    const forged: Record<string, string>[] = [{}, { authorization: 'Bearer sk-umg-000000000000000000000000000000000000000000000000' }, { cookie: 'umg_session=forged' }];
    for (const headers of forged) {
      const declared = openRaw(gateway.url, postHead(LOGIN, { ...headers, 'content-type': 'application/json', 'content-length': String(ANONYMOUS_TRPC_BODY_BYTES + 1), 'x-csrf-token': 'login' }));
      const refused = await declared.answer;
      declared.socket.destroy();
      expectTrpcCode(refused, 413, 'PAYLOAD_TOO_LARGE', 'PAYLOAD_TOO_LARGE');
    }
    const chunked = openRaw(gateway.url, postHead(LOGIN, { 'content-type': 'application/json', 'transfer-encoding': 'chunked', 'x-csrf-token': 'login' }));
    await writeUntilAnswered(chunked, chunk(Buffer.alloc(16 * 1024, 0x20)), 4 * ANONYMOUS_TRPC_BODY_BYTES);
    const answer = await chunked.answer;
    chunked.socket.destroy();
    expectTrpcCode(answer, 413, 'PAYLOAD_TOO_LARGE', 'PAYLOAD_TOO_LARGE');
    await expectAllGivenBack();
  });

  it('answers 408 to a sign-in body that stalls, closes the connection and gives the budget back', async () => {
    const request = openRaw(gateway.url, postHead(LOGIN, { 'content-type': 'application/json', 'content-length': '1000', 'x-csrf-token': 'login' }), '{"email":"a@example.com",');
    const answer = await request.answer;
    const error = expectTrpcCode(answer, 408, 'TIMEOUT', 'REQUEST_TIMEOUT');
    expect(error.message).toMatch(/stalled/);
    await request.closed;
    await expectAllGivenBack();
  });

  it('shares one budget with /v1: a /v1 body in memory makes a /trpc body 503, and the reverse', async () => {
    const twoMiB = Buffer.alloc(2 * MiB - 64 * 1024, 0x20);
    // A /v1 body holding most of the budget while it waits for its end.
    const v1 = openRaw(gateway.url, postHead('/v1/chat/completions', { ...bearer(key), 'content-type': 'application/json', 'content-length': String(BODY_LIMIT) }), twoMiB);
    await waitFor(() => gateway.gateway.bodyBytesHeld() >= twoMiB.length, { message: 'the /v1 body to be held' });
    const trpc = openRaw(gateway.url, postHead(CHAT, { ...bearer(key), 'content-type': 'application/json', 'content-length': String(BODY_LIMIT) }), twoMiB);
    const refused = await trpc.answer;
    expectTrpcCode(refused, 503, 'SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE');
    expect(refused.headers['retry-after']).toBe('1');
    trpc.socket.destroy();
    v1.socket.destroy();
    await expectAllGivenBack();

    // Now /trpc holds it, and /v1 is refused.
    const held = openRaw(gateway.url, postHead(CHAT, { ...bearer(key), 'content-type': 'application/json', 'content-length': String(BODY_LIMIT) }), twoMiB);
    await waitFor(() => gateway.gateway.bodyBytesHeld() >= twoMiB.length, { message: 'the /trpc body to be held' });
    const second = openRaw(gateway.url, postHead('/v1/chat/completions', { ...bearer(key), 'content-type': 'application/json', 'content-length': String(BODY_LIMIT) }), twoMiB);
    const refusedV1 = await second.answer;
    expect(refusedV1.status).toBe(503);
    expect((JSON.parse(refusedV1.body) as { error: { code: string } }).error.code).toBe('SERVICE_UNAVAILABLE');
    second.socket.destroy();
    held.socket.destroy();
    await expectAllGivenBack();

    // With the budget whole again, a sign-in is read and answered by its procedure.
    const login = await fetch(`${gateway.url}${LOGIN}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': 'login' }, body: JSON.stringify({ email: 'nobody@example.com', password: 'wrong password' }) });
    expectTrpcCode({ status: login.status, body: await login.text() }, 401, 'UNAUTHORIZED', 'INVALID_CREDENTIALS');
  });

  it('gives the budget back and ends the request when the client leaves mid-body', async () => {
    const request = openRaw(gateway.url, postHead(CHAT, { ...bearer(key), 'content-type': 'application/json', 'content-length': String(BODY_LIMIT) }), Buffer.alloc(MiB, 0x20));
    await waitFor(() => gateway.gateway.bodyBytesHeld() >= MiB, { message: 'the body to be held' });
    request.socket.destroy();
    await expectAllGivenBack();
  });

  it(`refuses a sign-in nested deeper than MAX_JSON_DEPTH (${MAX_DEPTH}) with 400 before the procedure runs`, async () => {
    const answer = await fetch(`${gateway.url}${LOGIN}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"email":${nested(5000)},"password":"x"}` });
    // Without the header the sign-in asks for, the procedure would have answered 403: it never ran.
    const error = expectTrpcCode({ status: answer.status, body: await answer.text() }, 400, 'BAD_REQUEST', 'INVALID_REQUEST');
    expect(error.message).toMatch(/nests deeper than 1000/);
  });

  it('answers 400 to a depth-5000 tool_use.input through messages.create, over /trpc and /v1, and 200 at the deepest allowed', async () => {
    const overTrpc = await fetch(`${gateway.url}/trpc/messages.create`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: messagesWithDeepToolInput(5000) });
    expectTrpcCode({ status: overTrpc.status, body: await overTrpc.text() }, 400, 'BAD_REQUEST', 'INVALID_REQUEST');
    const overV1 = await fetch(`${gateway.url}/v1/messages`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: messagesWithDeepToolInput(5000) });
    expect(overV1.status).toBe(400);
    expect(((await overV1.json()) as { error: { type: string } }).error.type).toBe('invalid_request_error');
    // At the cap every walk of the input (its JSON for the provider, the token estimate, the usage check) stays within the stack.
    const deepest = MAX_DEPTH - 5;
    const allowedTrpc = await fetch(`${gateway.url}/trpc/messages.create`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: messagesWithDeepToolInput(deepest) });
    expect(allowedTrpc.status, await allowedTrpc.clone().text()).toBe(200);
    const allowedV1 = await fetch(`${gateway.url}/v1/messages`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: messagesWithDeepToolInput(deepest) });
    expect(allowedV1.status, await allowedV1.clone().text()).toBe(200);
  });

  it('bounds the nesting of a query input and of each input of a batch', async () => {
    const query = await getJson(`${gateway.url}/trpc/models.list?input=${encodeURIComponent(nested(MAX_DEPTH + 1))}`);
    expectTrpcCode(query, 400, 'BAD_REQUEST', 'INVALID_REQUEST');
    // A batch wraps each input in one more object: an input at the limit is still read.
    const batchInput = `{"0":{"email":"nobody@example.com","password":"x","extra":${nested(MAX_DEPTH - 1)}}}`;
    const batch = await fetch(`${gateway.url}/trpc/dashboard.auth.login?batch=1`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': 'login' }, body: batchInput });
    expectTrpcCode({ status: batch.status, body: await batch.text() }, 401, 'UNAUTHORIZED', 'INVALID_CREDENTIALS');
  });

  it('refuses a body that is not JSON with 415 without reading it', async () => {
    const answer = await fetch(`${gateway.url}${LOGIN}`, { method: 'POST', headers: { 'content-type': 'application/octet-stream', 'x-csrf-token': 'login' }, body: Buffer.alloc(1024) });
    expectTrpcCode({ status: answer.status, body: await answer.text() }, 415, 'UNSUPPORTED_MEDIA_TYPE', 'UNSUPPORTED_MEDIA_TYPE');
    await expectAllGivenBack();
  });
});

describe('/trpc errors: the tRPC code of their status, and 5xx logged with their cause', () => {
  let gateway: TestGateway;
  let upstream: UpstreamServer;
  const logLines: string[] = [];

  beforeAll(async () => {
    upstream = await startOpenAIUpstream();
    const catalog: CatalogFile = {
      providers: [{ id: 'failing', kind: 'openai', baseUrl: upstream.url, apiKey: 'env:FAILING_PROVIDER_KEY' }],
      models: [{ id: 'failing-chat', ownedBy: 'test', provider: 'failing', upstreamModel: 'gpt-4o-mini', endpoints: ['/v1/chat/completions'], pricing: { input: 1, output: 1 } }],
    };
    gateway = await startTestGateway({ catalog, logLines, env: { FAILING_PROVIDER_KEY: 'sk-failing-provider-key-1234', RATE_LIMITS: 'trickle=1', UPSTREAM_MAX_RETRIES: '0' } });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('answers each gateway status with its own tRPC code, not INTERNAL_SERVER_ERROR', async () => {
    expectTrpcCode(await trpcMutation(gateway.url, 'admin.billing.flush', undefined, 'not-the-admin-token'), 401, 'UNAUTHORIZED', 'UNAUTHORIZED_ADMIN');
    const noCsrf = await postJson(`${gateway.url}${LOGIN}`, { email: 'nobody@example.com', password: 'x' });
    expectTrpcCode(noCsrf, 403, 'FORBIDDEN', 'CSRF_REJECTED');
    expectTrpcCode(await trpcQuery(gateway.url, 'admin.accounts.get', { account_id: 'acct_missing' }, gateway.adminToken), 404, 'NOT_FOUND', 'NOT_FOUND');
    expectTrpcCode(await trpcMutation(gateway.url, 'admin.accounts.create', { name: 42 }, gateway.adminToken), 400, 'BAD_REQUEST', 'INVALID_REQUEST');

    const { key: broke } = await gateway.createAccountWithKey({ credits: 0 });
    const chat = { model: 'failing-chat', messages: [{ role: 'user', content: 'hi' }] };
    expectTrpcCode(await trpcMutation(gateway.url, 'chat.completions', chat, broke), 402, 'PAYMENT_REQUIRED', 'INSUFFICIENT_CREDITS');

    const { key: limited } = await gateway.createAccountWithKey({ plan: 'trickle' });
    expect((await getJson(`${gateway.url}/v1/credits`, bearer(limited))).status).toBe(200);
    const tooMany = await trpcQuery(gateway.url, 'account.credits', undefined, limited);
    expectTrpcCode(tooMany, 429, 'TOO_MANY_REQUESTS', 'RATE_LIMITED');
    expect(Number(tooMany.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('answers 400 to a discount pool whose minimum is above its maximum, given together or one at a time', async () => {
    const both = await trpcMutation(gateway.url, 'admin.billing.setDiscountPool', { minPercentage: 50, maxPercentage: 10 }, gateway.adminToken);
    expect(expectTrpcCode(both, 400, 'BAD_REQUEST', 'INVALID_REQUEST').message).toMatch(/minPercentage/);
    expect(dataOf(await trpcMutation(gateway.url, 'admin.billing.setDiscountPool', { minPercentage: 5, maxPercentage: 20 }, gateway.adminToken))).toMatchObject({ minPercentage: 5, maxPercentage: 20 });
    // Alone, a minimum fits its own bounds but not the stored maximum.
    const alone = await trpcMutation(gateway.url, 'admin.billing.setDiscountPool', { minPercentage: 30 }, gateway.adminToken);
    expect(expectTrpcCode(alone, 400, 'BAD_REQUEST', 'INVALID_REQUEST').message).toMatch(/above maxPercentage/);
    // Nothing was changed.
    expect(dataOf(await trpcQuery(gateway.url, 'admin.billing.discountPool', undefined, gateway.adminToken))).toMatchObject({ minPercentage: 5, maxPercentage: 20 });
  });

  it('answers 400 to a malformed percent-encoded dashboard path', async () => {
    const answer = await getJson(`${gateway.url}/dashboard/%`);
    expect(answer.status).toBe(400);
    expect((answer.body.error as { code: string }).code).toBe('INVALID_REQUEST');
  });

  it('logs a 5xx over /trpc with its cause, and answers no detail of it; a 4xx of tRPC itself is no failure', async () => {
    const { key } = await gateway.createAccountWithKey();
    const broken = await fetch(`${gateway.url}${LOGIN}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': 'login' }, body: '{"email":' });
    expectTrpcCode({ status: broken.status, body: await broken.text() }, 400, 'BAD_REQUEST', 'INVALID_REQUEST');
    // A query of a mutation is refused by tRPC itself, before any procedure: 405, not a failure of the gateway.
    expectTrpcCode(await getJson(`${gateway.url}${LOGIN}`), 405, 'METHOD_NOT_SUPPORTED', null);
    upstream.script({ kind: 'status', status: 500, message: 'the provider broke inside' });
    const answer = await trpcMutation(gateway.url, 'chat.completions', { model: 'failing-chat', messages: [{ role: 'user', content: 'hi' }] }, key);
    expectTrpcCode(answer, 502, 'BAD_GATEWAY', 'UPSTREAM_ERROR');
    expect(answer.text).not.toContain('sk-failing-provider-key');
    await waitFor(() => logLines.some((line) => line.includes('"event":"trpc.failed"')), { message: 'the 5xx to be logged' });
    const logged = JSON.parse(logLines.find((line) => line.includes('"event":"trpc.failed"'))!) as { path: string; code: string; cause: { type: string; message: string } };
    expect(logged.path).toBe('chat.completions');
    expect(logged.code).toBe('UPSTREAM_ERROR');
    expect(logged.cause.type).toBe('UpstreamError');
    expect(logged.cause.message).toBeTruthy();
    expect(logLines.filter((line) => line.includes('"event":"trpc.failed"'))).toHaveLength(1);
  });
});

describe('MAX_JSON_DEPTH', () => {
  it('may not be set past the depth every walk of request JSON can take', () => {
    expect(readConfig({ MAX_JSON_DEPTH: '1000' }).limits.maxJsonDepth).toBe(1000);
    expect(() => readConfig({ MAX_JSON_DEPTH: '1001' })).toThrow(/MAX_JSON_DEPTH: must be a whole number from 1 to 1000/);
    expect(() => readConfig({ MAX_JSON_DEPTH: '0' })).toThrow(/MAX_JSON_DEPTH/);
  });
});
