/**
 * What one client can take from a gateway, and what the headers decide
 * before a byte of body is read: a keyless client is refused at once
 * whatever it declares, a stalled body is cut, bodies in memory have an
 * instance-wide budget, one address cannot hold every connection, and a
 * client guessing keys is slowed down before any lookup.
 */
import http from 'node:http';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer, getJson, postJson } from '../support/http.js';
import { waitFor } from '../support/wait.js';

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Sends the headers and `bodyPart` of a POST, keeps the connection open, and resolves with the answer. */
function postPartial(url: string, headers: Record<string, string>, bodyPart: Buffer | string, options: { end?: boolean } = {}): { answer: Promise<RawAnswer>; request: http.ClientRequest } {
  const target = new URL(url);
  const request = http.request({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers, agent: false });
  const answer = new Promise<RawAnswer>((resolve, reject) => {
    request.once('response', (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      response.on('error', reject);
    });
    request.once('error', reject);
  });
  if (bodyPart.length > 0) request.write(bodyPart);
  else request.flushHeaders();
  if (options.end) request.end();
  return { answer, request };
}

function codeOf(answer: RawAnswer): unknown {
  try {
    return (JSON.parse(answer.body) as { error?: { code?: unknown } }).error?.code;
  } catch {
    return undefined;
  }
}

describe('before the body: what the headers tell', () => {
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway({ env: { BODY_IDLE_TIMEOUT_MS: '500', BODY_BUDGET_BYTES: String(3 * 1024 * 1024) } });
    ({ key } = await gateway.createAccountWithKey());
  });
  afterAll(() => gateway?.close());

  it('answers 401 to a keyless request declaring 20 MB without waiting for its body', async () => {
    const { answer, request } = postPartial(`${gateway.url}/v1/chat/completions`, { 'content-type': 'application/json', 'content-length': '20000000' }, '');
    const result = await answer;
    request.destroy();
    expect(result.status).toBe(401);
    expect(codeOf(result)).toBe('MISSING_HEADER');
  });

  it('answers 401 to a keyless request whatever body it starts sending', async () => {
    const { answer, request } = postPartial(
      `${gateway.url}/v1/chat/completions`,
      { 'content-type': 'application/json', 'content-length': '19000000', authorization: 'Bearer sk-umg-notAKey' },
      Buffer.alloc(64 * 1024, 0x20),
    );
    const result = await answer;
    request.destroy();
    expect(result.status).toBe(401);
    expect(codeOf(result)).toBe('INVALID_KEY');
  });

  it('cuts an authenticated body that stalls, with 408 REQUEST_TIMEOUT', async () => {
    const { answer, request } = postPartial(
      `${gateway.url}/v1/chat/completions`,
      { ...bearer(key), 'content-type': 'application/json', 'content-length': '1000' },
      '{"model":"mock-chat",',
    );
    const result = await answer;
    request.destroy();
    expect(result.status).toBe(408);
    expect(codeOf(result)).toBe('REQUEST_TIMEOUT');
  });

  it('refuses bodies past the instance budget with 503 and retry-after, and serves again once they are gone', async () => {
    const twoMegabytes = Buffer.alloc(2 * 1024 * 1024, 0x20);
    // The first body holds 2 MB of the 3 MB budget while it waits for the rest.
    const first = postPartial(`${gateway.url}/v1/chat/completions`, { ...bearer(key), 'content-type': 'application/json', 'content-length': String(4 * 1024 * 1024) }, twoMegabytes);
    const second = postPartial(`${gateway.url}/v1/chat/completions`, { ...bearer(key), 'content-type': 'application/json', 'content-length': String(4 * 1024 * 1024) }, twoMegabytes);
    const refused = await Promise.race([first.answer, second.answer]);
    expect(refused.status).toBe(503);
    expect(codeOf(refused)).toBe('SERVICE_UNAVAILABLE');
    expect(refused.headers['retry-after']).toBe('1');
    first.request.destroy();
    second.request.destroy();
    await waitFor(async () => (await postJson(`${gateway.url}/v1/chat/completions`, { model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] }, bearer(key))).status === 200, {
      message: 'the budget to be given back',
    });
  });
});

describe('connections per address and failed authentications', () => {
  let gateway: TestGateway;
  let key: string;
  let port: string;

  beforeAll(async () => {
    gateway = await startTestGateway({ env: { MAX_CONNECTIONS_PER_ADDRESS: '6', AUTH_FAILURES_PER_MINUTE: '5' } });
    ({ key } = await gateway.createAccountWithKey());
    port = new URL(gateway.url).port;
  });
  afterAll(() => gateway?.close());

  it('closes connections of one address past its cap, while another address is served', async () => {
    const sockets: net.Socket[] = [];
    const closed: boolean[] = [];
    for (let index = 0; index < 8; index++) {
      const socket = net.connect(Number(port), '127.0.0.1');
      const position = index;
      closed[position] = false;
      socket.on('close', () => (closed[position] = true));
      socket.on('error', () => undefined);
      sockets.push(socket);
      await new Promise((resolve) => socket.once('connect', resolve));
    }
    try {
      await waitFor(() => closed.filter(Boolean).length >= 2, { message: 'the connections past the cap to be closed' });
      expect(closed.slice(0, 6).every((value) => !value)).toBe(true);
      // The same machine over IPv6 is another address.
      const health = await fetch(`http://[::1]:${port}/healthz`);
      expect(health.status).toBe(200);
    } finally {
      for (const socket of sockets) socket.destroy();
    }
  });

  it('refuses an address with 429 after 5 failed authentications, before looking at its key', async () => {
    const url = `http://[::1]:${port}/v1/credits`;
    for (let attempt = 0; attempt < 5; attempt++) {
      const answer = await getJson(url, bearer(`sk-umg-${'0'.repeat(40)}${attempt}`));
      expect(answer.status).toBe(401);
    }
    const limited = await getJson(url, bearer(key));
    expect(limited.status).toBe(429);
    expect((limited.body as { error: { code: string } }).error.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another address is not affected.
    expect((await getJson(`http://127.0.0.1:${port}/v1/credits`, bearer(key))).status).toBe(200);
  });
});

describe('the /trpc endpoint', () => {
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway();
    ({ key } = await gateway.createAccountWithKey({ credits: 5 }));
  });
  afterAll(() => gateway?.close());

  it('refuses a batch of more than 10 calls with 400, and never answers a stack trace', async () => {
    const paths = Array.from({ length: 11 }, () => 'models.list').join(',');
    const answer = await fetch(`${gateway.url}/trpc/${paths}?batch=1&input=${encodeURIComponent('{}')}`);
    expect(answer.status).toBe(400);
    const text = await answer.text();
    expect(text.length).toBeLessThan(4096);
    expect(text).not.toMatch(/\bat .*\.(ts|js):\d+/);
  });

  it('refuses a streamed generation over plain HTTP before anything is held', async () => {
    const answer = await fetch(`${gateway.url}/trpc/chat.completions`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-chat', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(answer.status).toBe(400);
    const credits = await getJson(`${gateway.url}/v1/credits`, bearer(key));
    expect((credits.body as { held_credits: number }).held_credits).toBe(0);
  });
});
