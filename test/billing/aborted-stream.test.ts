/**
 * A client that leaves in the middle of an answer pays for what it was
 * given, not for the whole answer and not for nothing, and its hold is given
 * back. Streaming: the upstream (OpenAI format, `slow-stream`) is still
 * sending when the client aborts after a few chunks; the usage row says
 * `aborted`, counts output tokens above zero and below the full answer's, and
 * costs exactly what `computeCost` says for those tokens. Non-streaming: a
 * client that gives up while the provider is still thinking is charged
 * nothing for tokens and its hold is released too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyDiscount, computeCost, creditsToMicro } from '../../server/billing/money.js';
import { toMicroPrice } from '../../server/catalog/catalog.schema.js';
import { countTextTokens } from '../../server/tokenizer.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { balancesOf, usageRowOf, usageRowsOf } from '../support/usage.js';
import { bearer, getJson } from '../support/http.js';
import {
  CHAT_ENDPOINT,
  TOKEN_PRICING,
  UNLIMITED_PRO_ENV,
  billingCatalog,
  chatBody,
  expectLedgerOk,
  openAIModel,
  CONDITION_BUDGET_MS,
  pollUntil,
} from './billing-support.js';

const MODEL = 'gpt-billed';
/** The same upstream at a flat 0.01 credits per request. */
const FLAT_UPSTREAM_MODEL = 'gpt-flat';
const INITIAL_CREDITS = 5;
/** About 400 characters: the upstream answers `Echo: <prompt>` in pieces of four characters. */
const PROMPT = Array.from({ length: 50 }, (_, index) => `word${index}`).join(' ');

let upstream: UpstreamServer;
let gateway: TestGateway;
let accountId: string;
let key: string;

beforeAll(async () => {
  upstream = await startOpenAIUpstream();
  gateway = await startTestGateway({
    env: UNLIMITED_PRO_ENV,
    catalog: billingCatalog({ providers: [{ id: 'openai-up', kind: 'openai', baseUrl: upstream.url }], models: [openAIModel(MODEL, 'openai-up'), openAIModel(FLAT_UPSTREAM_MODEL, 'openai-up', { input: 0, output: 0, request: 0.01 })] }),
  });
  ({ accountId, key } = await gateway.createAccountWithKey({ credits: INITIAL_CREDITS }));
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

function post(body: Record<string, unknown>, signal?: AbortSignal): Promise<Response> {
  return fetch(`${gateway.url}${CHAT_ENDPOINT}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(key) },
    body: JSON.stringify(body),
    signal,
  });
}

/** The delta texts of complete SSE frames of a chat stream. */
function contentsOf(frames: string[]): string[] {
  const contents: string[] = [];
  for (const frame of frames) {
    const data = frame
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => line.slice(6))
      .join('');
    if (data === '' || data === '[DONE]') continue;
    const chunk = JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> };
    const content = chunk.choices?.[0]?.delta?.content;
    if (content) contents.push(content);
  }
  return contents;
}

const price = toMicroPrice(TOKEN_PRICING);

describe('a client that aborts a streaming request mid-stream', () => {
  it('is charged for the delivered part only, and its hold is released', async () => {
    // The whole answer, for comparison.
    upstream.reset();
    const full = await post({ ...chatBody(MODEL, PROMPT), stream: true });
    expect(full.status).toBe(200);
    await full.text();
    const fullRow = await usageRowOf(gateway, full.headers.get('x-request-id')!);
    expect(fullRow).toMatchObject({ status: 200, aborted: false, stream: true });
    expect(fullRow.output_tokens).toBeGreaterThan(50);

    // The same request on a slow stream, left after three pieces of text.
    upstream.script({ kind: 'slow-stream', chunkDelayMs: 40 });
    const controller = new AbortController();
    const response = await post({ ...chatBody(MODEL, PROMPT), stream: true }, controller.signal);
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    let delivered: string[] = [];
    while (delivered.length < 3) {
      const { value, done } = await reader.read();
      if (done) throw new Error('the stream ended before the client left');
      buffer += decoder.decode(value, { stream: true });
      delivered = contentsOf(buffer.split('\n\n').slice(0, -1));
    }
    controller.abort();
    await reader.cancel().catch(() => undefined);
    await upstream.waitForAborted(1, 10_000);

    const row = await usageRowOf(gateway, requestId);
    expect(row).toMatchObject({ status: 200, stream: true, aborted: true, error_code: 'CLIENT_ABORTED', model: MODEL, discount_percentage: 0 });
    const seen = countTextTokens(delivered.join(''));
    expect(row.output_tokens).toBeGreaterThan(0);
    expect(row.output_tokens).toBeGreaterThanOrEqual(seen);
    expect(row.output_tokens).toBeLessThan(fullRow.output_tokens);
    expect(row.input_tokens).toBeGreaterThan(0);
    // The price it was charged at is on the row, and the cost is exactly what it says.
    expect(row.price).toEqual(price);
    const expected = applyDiscount(computeCost(price, { inputTokens: row.input_tokens, outputTokens: row.output_tokens, cachedInputTokens: row.cached_input_tokens }), 0);
    expect(Number(row.cost)).toBe(expected);
    expect(Number(row.cost)).toBeLessThan(Number(fullRow.cost));

    const balances = await balancesOf(gateway, accountId);
    expect(balances.held).toBe(0);
    expect(balances.holds).toBe(0);
    const rows = await usageRowsOf(gateway, accountId);
    const spent = rows.reduce((sum, item) => sum + Number(item.cost), 0);
    expect(balances.current).toBe(INITIAL_CREDITS * 1_000_000 - spent);
    await expectLedgerOk(gateway, accountId);
  });
});

describe('a client that aborts a non-streaming request while the provider is still working', () => {
  it('writes one aborted usage row without token charges and releases the hold', async () => {
    upstream.reset();
    upstream.script({ kind: 'delay', ms: 10_000 });
    const before = await balancesOf(gateway, accountId);
    const controller = new AbortController();
    const pending = post(chatBody(MODEL, PROMPT, { max_tokens: 1_000 }), controller.signal).catch((error: Error) => error);
    await upstream.waitForRequests(1, 10_000);
    // The hold is taken before the provider is called.
    const during = await balancesOf(gateway, accountId);
    expect(during.held).toBeGreaterThan(before.held);
    expect(during.holds).toBe(during.held);
    controller.abort();
    expect(await pending).toBeInstanceOf(Error);
    await upstream.waitForAborted(1, 10_000);

    const rows = await pollUntil(
      async () => {
        await gateway.gateway.services.billing.flush();
        return (await usageRowsOf(gateway, accountId)).filter((row) => row.error_code === 'CLIENT_ABORTED' && !row.stream);
      },
      (found) => found.length > 0,
      CONDITION_BUDGET_MS,
      'the aborted request to be written',
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ aborted: true, stream: false, output_tokens: 0 });
    expect(Number(rows[0]!.cost)).toBe(0);

    const after = await balancesOf(gateway, accountId);
    expect(after).toEqual({ ...before, held: 0, holds: 0 });
    await expectLedgerOk(gateway, accountId);
  });

  it('lists whatever such a request was charged in GET /v1/usage (a flat per-request price)', async () => {
    const { accountId: flatAccount, key: flatKey } = await gateway.createAccountWithKey({ credits: 1 });
    upstream.reset();
    upstream.script({ kind: 'delay', ms: 10_000 });
    const controller = new AbortController();
    const pending = fetch(`${gateway.url}${CHAT_ENDPOINT}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(flatKey) },
      body: JSON.stringify(chatBody(FLAT_UPSTREAM_MODEL)),
      signal: controller.signal,
    }).catch((error: Error) => error);
    await upstream.waitForRequests(1, 10_000);
    controller.abort();
    expect(await pending).toBeInstanceOf(Error);
    await upstream.waitForAborted(1, 10_000);
    const [row] = await pollUntil(
      async () => {
        await gateway.gateway.services.billing.flush();
        return usageRowsOf(gateway, flatAccount);
      },
      (rows) => rows.length > 0,
      CONDITION_BUDGET_MS,
      'the aborted request to be written',
    );
    const balances = await balancesOf(gateway, flatAccount);
    expect(balances.current).toBe(1_000_000 - Number(row!.cost));
    // Whether or not an unanswered request costs its flat fee, the list adds up to what the balance lost.
    const listed = await getJson(`${gateway.url}/v1/usage`, bearer(flatKey));
    const items = (listed.body as { data: Array<{ id: string; cost: number }> }).data;
    expect(items.reduce((sum, item) => sum + creditsToMicro(item.cost), 0)).toBe(1_000_000 - balances.current);
    if (Number(row!.cost) > 0) expect(items.map((item) => item.id)).toEqual([row!.request_id]);
    await expectLedgerOk(gateway, flatAccount);
  });
});
