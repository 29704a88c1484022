/**
 * The access log: one `http.access` JSON line per request, written once the
 * answer has ended, for a success, a 4xx, an upstream failure and a client
 * that leaves mid-stream — with the request's ids, route template, model,
 * provider, attempts, tokens and cost, and never a key, a provider secret or
 * prompt text. `ACCESS_LOG=off` writes none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_UPSTREAM } from '../support/e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer, postJson } from '../support/http.js';
import { usageRowOf } from '../support/usage.js';
import { waitFor } from '../support/wait.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { CHAT_ENDPOINT, OPENAI_SECRET, SECRET_ENV, chatModel, openAIProvider } from '../chat/chat-e2e.js';

/** A test that starts a gateway of its own: as long as a hook may take (a loaded machine starts one slowly). */
const SECOND_GATEWAY_TEST_MS = 180_000;

/** Text that must never reach a log line. */
const PROMPT = 'the secret recipe is marmalade and thyme';
const logLines: string[] = [];
let upstream: UpstreamServer;
let gateway: TestGateway;
let key: string;
let accountId: string;
let keyId: string;

interface AccessLine {
  event: string;
  level: string;
  requestId: string;
  method: string;
  route: string;
  status: number;
  code: string | null;
  aborted: boolean;
  accountId: string | null;
  keyId: string | null;
  model: string | null;
  provider: string | null;
  deployment: string | null;
  attempts: number;
  usage: { input: number; output: number };
  costMicrocredits: number;
  durationMs: number;
  ttfbMs: number | null;
  bytesIn: number;
  bytesOut: number;
  clientAddress: string;
}

function accessLines(): AccessLine[] {
  return logLines.map((line) => JSON.parse(line) as AccessLine).filter((line) => line.event === 'http.access');
}

async function accessLineOf(requestId: string): Promise<AccessLine> {
  await waitFor(() => accessLines().some((line) => line.requestId === requestId), { message: `the access line of ${requestId}` });
  const lines = accessLines().filter((line) => line.requestId === requestId);
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

function chatBody(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'gpt-logged', messages: [{ role: 'user', content: PROMPT }], ...extra };
}

beforeAll(async () => {
  upstream = await startOpenAIUpstream({ expectedApiKey: OPENAI_SECRET });
  gateway = await startTestGateway({
    logLines,
    env: SECRET_ENV,
    config: { upstream: FAST_UPSTREAM },
    catalog: { providers: [openAIProvider('openai-a', upstream.url, { maxRetries: 0 })], models: [chatModel('gpt-logged', 'openai-a', 'gpt-4o-mini')] },
  });
  ({ key, accountId, keyId } = await gateway.createAccountWithKey({ credits: 100 }));
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  // Nothing secret or private in any line the gateway wrote, access lines or others.
  const all = logLines.join('\n');
  expect(all).not.toContain(PROMPT);
  expect(all).not.toContain('marmalade');
  expect(all).not.toContain(OPENAI_SECRET);
  if (key) expect(all).not.toContain(key);
});

describe('access log', () => {
  it('writes one line for a success, with ids, model, provider, tokens and cost as in the usage row', async () => {
    const answer = await postJson(`${gateway.url}${CHAT_ENDPOINT}`, chatBody(), bearer(key));
    expect(answer.status).toBe(200);
    const requestId = answer.headers.get('x-request-id')!;
    const line = await accessLineOf(requestId);
    const row = await usageRowOf(gateway, requestId);
    expect(line).toMatchObject({
      level: 'info',
      method: 'POST',
      route: '/v1/chat/completions',
      status: 200,
      code: null,
      aborted: false,
      accountId,
      keyId,
      model: 'gpt-logged',
      provider: 'openai-a',
      deployment: 'openai-a/gpt-4o-mini',
      attempts: 1,
      usage: { input: row.input_tokens, output: row.output_tokens },
      costMicrocredits: Number(row.cost),
      clientAddress: '127.0.0.1',
    });
    expect(line.usage.output).toBeGreaterThan(0);
    expect(line.bytesIn).toBeGreaterThan(0);
    expect(line.bytesOut).toBeGreaterThan(0);
    expect(line.ttfbMs).not.toBeNull();
    expect(line.durationMs).toBeGreaterThanOrEqual(line.ttfbMs!);
  });

  it('writes one line for a 4xx, with the error code', async () => {
    const unknown = await postJson(`${gateway.url}${CHAT_ENDPOINT}`, chatBody({ model: 'no-such-model' }), bearer(key));
    expect(unknown.status).toBe(404);
    const line = await accessLineOf(unknown.headers.get('x-request-id')!);
    expect(line).toMatchObject({ status: 404, code: 'MODEL_NOT_FOUND', route: '/v1/chat/completions', accountId, keyId, model: null, provider: null, attempts: 0 });

    const refused = await postJson(`${gateway.url}${CHAT_ENDPOINT}`, chatBody(), bearer('sk-umg-not-a-real-key-0000000000000000'));
    expect(refused.status).toBe(401);
    const refusedLine = await accessLineOf(refused.headers.get('x-request-id')!);
    expect(refusedLine).toMatchObject({ status: 401, accountId: null, keyId: null });
    expect(refusedLine.code).toMatch(/KEY|FORMAT/);

    const missing = await postJson(`${gateway.url}/v1/no/such/route/abc123`, {}, bearer(key));
    expect(missing.status).toBe(404);
    expect(await accessLineOf(missing.headers.get('x-request-id')!)).toMatchObject({ route: 'unmatched', code: 'NOT_FOUND' });
  });

  it('labels a 405 on a known path with its route template, not `unmatched`', async () => {
    const deleted = await fetch(`${gateway.url}${CHAT_ENDPOINT}`, { method: 'DELETE', headers: bearer(key) });
    expect(deleted.status).toBe(405);
    await deleted.arrayBuffer();
    expect(await accessLineOf(deleted.headers.get('x-request-id')!)).toMatchObject({ status: 405, route: '/v1/chat/completions', code: 'METHOD_NOT_ALLOWED' });

    const posted = await postJson(`${gateway.url}/v1/models/gpt-logged`, {}, bearer(key));
    expect(posted.status).toBe(405);
    expect(await accessLineOf(posted.headers.get('x-request-id')!)).toMatchObject({ status: 405, route: '/v1/models/:id', code: 'METHOD_NOT_ALLOWED' });
  });

  it('masks a key a client sends as its request id, and the provider secret, in the line', async () => {
    const clientKey = `sk-live-${'q'.repeat(30)}`;
    const answer = await postJson(`${gateway.url}${CHAT_ENDPOINT}`, chatBody(), { ...bearer(key), 'x-request-id': `${clientKey}/${OPENAI_SECRET}` });
    expect(answer.status).toBe(200);
    await waitFor(() => logLines.some((line) => line.includes('"http.access"') && line.includes('sk-live-qqq')), { message: 'the access line of the masked request id' });
    const line = logLines.find((text) => text.includes('"http.access"') && text.includes('sk-live-qqq'))!;
    expect(line).not.toContain(clientKey);
    expect(line).not.toContain(OPENAI_SECRET);
    expect(JSON.parse(line)).toMatchObject({ status: 200, route: '/v1/chat/completions', accountId, keyId });
  });

  it('writes one line for an upstream failure, with the provider and attempts', async () => {
    upstream.script({ kind: 'status', status: 500, message: 'upstream broke' });
    const answer = await postJson(`${gateway.url}${CHAT_ENDPOINT}`, chatBody(), bearer(key));
    expect(answer.status).toBeGreaterThanOrEqual(500);
    const line = await accessLineOf(answer.headers.get('x-request-id')!);
    expect(line).toMatchObject({ status: answer.status, model: 'gpt-logged', provider: 'openai-a', attempts: 1, costMicrocredits: 0, usage: { input: 0, output: 0 } });
    expect(line.code).toMatch(/UPSTREAM/);
  });

  it('writes one line for a client that leaves mid-stream, marked aborted', async () => {
    upstream.script({ kind: 'stall', afterChunks: 2, ms: 20_000 });
    const controller = new AbortController();
    const response = await fetch(`${gateway.url}${CHAT_ENDPOINT}`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify(chatBody({ stream: true })),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    const reader = response.body!.getReader();
    await reader.read();
    controller.abort();
    await upstream.waitForAborted(1);
    const line = await accessLineOf(requestId);
    expect(line).toMatchObject({ status: 200, aborted: true, model: 'gpt-logged', provider: 'openai-a', attempts: 1 });
    expect(line.code).toBe('CLIENT_ABORTED');
    expect(line.bytesOut).toBeGreaterThan(0);
  });

  it('writes no line with ACCESS_LOG=off', async () => {
    const quiet: string[] = [];
    const other = await startTestGateway({ logLines: quiet, env: { ACCESS_LOG: 'off' } });
    try {
      expect((await fetch(`${other.url}/healthz`)).status).toBe(200);
      expect((await fetch(`${other.url}/v1/no-such-route`)).status).toBe(404);
      expect(quiet.filter((line) => line.includes('http.access'))).toEqual([]);
    } finally {
      await other.close();
    }
  }, SECOND_GATEWAY_TEST_MS);
});
