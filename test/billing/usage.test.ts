/**
 * `GET /v1/usage` (GAPS.md "Account data"): the caller's charged requests,
 * newest first, paginated (`page`, `limit`, `total`), filtered by `model` and
 * by `from` (inclusive) / `to` (exclusive) given as unix seconds or ISO 8601,
 * never another account's rows; and each row carries what it takes to
 * recompute its cost (price, tokens, discount).
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyDiscount, computeCost, creditsToMicro, microToCredits, type MicroPrice } from '../../server/billing/money.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { flushAll, usageRowsOf } from '../support/usage.js';
import { bearer, getJson } from '../support/http.js';
import {
  CHAT_ENDPOINT,
  FLAT_MODEL,
  TOKEN_MODEL,
  UNLIMITED_PRO_ENV,
  billingCatalog,
  chatBody,
  errorCodeOf,
  expectLedgerOk,
  mockModel,
  postChat,
  trpcMutation,
} from './billing-support.js';

interface UsageItem {
  id: string;
  created_at: number;
  endpoint: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  cost: number;
  discount_percentage: number;
  status: number;
  stream: boolean;
  aborted: boolean;
  price: Record<string, number>;
}

interface UsageList {
  data: UsageItem[];
  pagination: { page: number; limit: number; total: number };
}

let gateway: TestGateway;
/** Request ids of the first account, in the order they were made (6 token-priced, 4 flat, interleaved). */
const issued: string[] = [];
const issuedModels: string[] = [];
let keyX: string;
let accountX: string;
let keyY: string;
const issuedY: string[] = [];
/** A flat price below 0.0001 credits: JavaScript writes it as a decimal, Python would print `6.8e-05`. */
const TINY_MODEL = 'mock-tiny';
/** 2026-01-05T10:00:00Z: the first account's rows are moved to one minute apart from here. */
const BASE = Date.UTC(2026, 0, 5, 10, 0, 0);

beforeAll(async () => {
  gateway = await startTestGateway({ env: UNLIMITED_PRO_ENV, catalog: billingCatalog({ models: [mockModel(TINY_MODEL, { input: 0, output: 0, request: 0.000068 })] }) });
  ({ key: keyX, accountId: accountX } = await gateway.createAccountWithKey({ credits: 10 }));
  ({ key: keyY } = await gateway.createAccountWithKey({ credits: 10 }));
  // A discount on the token-priced model for part of the rows, so recomputing needs the percentage too.
  await trpcMutation(gateway, 'admin.billing.setDiscountPool', { models: [TOKEN_MODEL], perAccount: 1, minPercentage: 15, maxPercentage: 15 });
  for (let index = 0; index < 10; index++) {
    const model = index % 5 < 3 ? TOKEN_MODEL : FLAT_MODEL;
    const answer = await postChat(gateway, keyX, chatBody(model, `question number ${index} ${'and more words '.repeat(index)}`));
    expect(answer.status, answer.text).toBe(200);
    issued.push(answer.headers.get('x-request-id')!);
    issuedModels.push(model);
  }
  for (let index = 0; index < 2; index++) {
    const answer = await postChat(gateway, keyY);
    issuedY.push(answer.headers.get('x-request-id')!);
  }
  await flushAll(gateway);
});

afterAll(async () => {
  await gateway?.close();
});

async function listUsage(key: string, query: Record<string, string | number> = {}): Promise<UsageList> {
  const search = new URLSearchParams(Object.entries(query).map(([name, value]): [string, string] => [name, String(value)]));
  const answer = await getJson(`${gateway.url}/v1/usage${search.size > 0 ? `?${search}` : ''}`, bearer(key));
  expect(answer.status, answer.text).toBe(200);
  return answer.body as unknown as UsageList;
}

function newestFirst(ids: string[]): string[] {
  return [...ids].reverse();
}

describe('GET /v1/usage', () => {
  it('lists the caller’s charged requests newest first, with every field typed', async () => {
    const list = await listUsage(keyX);
    expect(list.pagination).toEqual({ page: 1, limit: 20, total: 10 });
    expect(list.data.map((item) => item.id)).toEqual(newestFirst(issued));
    for (const [index, item] of list.data.entries()) {
      expect(item).toMatchObject({ endpoint: CHAT_ENDPOINT, model: newestFirst(issuedModels)[index], status: 200, stream: false, aborted: false });
      expect(Number.isInteger(item.created_at)).toBe(true);
      expect(Math.abs(item.created_at * 1000 - Date.now())).toBeLessThan(300_000);
      for (const field of ['input_tokens', 'output_tokens', 'cached_input_tokens', 'discount_percentage'] as const) expect(Number.isInteger(item[field])).toBe(true);
      expect(item.cost).toBeGreaterThan(0);
      expect(item.discount_percentage).toBe(item.model === TOKEN_MODEL ? 15 : 0);
    }
    // Newest first also by time.
    const times = list.data.map((item) => item.created_at);
    expect([...times].sort((left, right) => right - left)).toEqual(times);
  });

  it('gives each row what it takes to recompute its cost: price, tokens and discount', async () => {
    const list = await listUsage(keyX);
    for (const item of list.data) {
      // The price's keys are snake_case on the wire, like the row's other fields.
      expect(Object.keys(item.price).sort()).toEqual(['cached_input_per_million', 'character', 'image', 'input_per_million', 'output_per_million', 'request', 'second']);
      const camel = (name: string) => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
      const price = Object.fromEntries(Object.entries(item.price).map(([name, credits]) => [camel(name), creditsToMicro(credits)])) as unknown as MicroPrice;
      const list = computeCost(price, { inputTokens: item.input_tokens, outputTokens: item.output_tokens, cachedInputTokens: item.cached_input_tokens });
      expect(creditsToMicro(item.cost), item.id).toBe(applyDiscount(list, item.discount_percentage));
    }
    // And the rows add up to what the balance lost.
    const spent = list.data.reduce((sum, item) => sum + creditsToMicro(item.cost), 0);
    const credits = await getJson(`${gateway.url}/v1/credits`, bearer(keyX));
    expect(credits.body.current_credits).toBe(microToCredits(10_000_000 - spent));
  });

  it('paginates with page and limit, and says the total', async () => {
    const pages: string[] = [];
    for (let page = 1; page <= 4; page++) {
      const list = await listUsage(keyX, { page, limit: 3 });
      expect(list.pagination).toEqual({ page, limit: 3, total: 10 });
      expect(list.data).toHaveLength(page < 4 ? 3 : 1);
      pages.push(...list.data.map((item) => item.id));
    }
    expect(pages).toEqual(newestFirst(issued));
    expect(await listUsage(keyX, { page: 5, limit: 3 })).toEqual({ data: [], pagination: { page: 5, limit: 3, total: 10 } });
    expect((await listUsage(keyX, { limit: 100 })).data).toHaveLength(10);
  });

  it('filters by model', async () => {
    const flat = await listUsage(keyX, { model: FLAT_MODEL });
    expect(flat.pagination.total).toBe(4);
    expect(flat.data.map((item) => item.id)).toEqual(newestFirst(issued.filter((_, index) => issuedModels[index] === FLAT_MODEL)));
    const paged = await listUsage(keyX, { model: TOKEN_MODEL, limit: 2, page: 2 });
    expect(paged.pagination).toEqual({ page: 2, limit: 2, total: 6 });
    expect(paged.data.map((item) => item.id)).toEqual(newestFirst(issued.filter((_, index) => issuedModels[index] === TOKEN_MODEL)).slice(2, 4));
    expect(await listUsage(keyX, { model: 'no-such-model' })).toEqual({ data: [], pagination: { page: 1, limit: 20, total: 0 } });
  });

  it('never shows another account’s rows', async () => {
    const list = await listUsage(keyY);
    expect(list.pagination.total).toBe(2);
    expect(list.data.map((item) => item.id)).toEqual(newestFirst(issuedY));
    for (const id of issued) expect(list.data.map((item) => item.id)).not.toContain(id);
  });

  it('filters by time: from inclusive, to exclusive, as unix seconds or ISO 8601', async () => {
    // Row i (in the order made) at BASE + i minutes.
    const { db } = gateway.gateway.services;
    for (const [index, id] of issued.entries()) {
      await sql`UPDATE usage SET created_at = ${new Date(BASE + index * 60_000)} WHERE request_id = ${id}`.execute(db);
    }
    const minute = (index: number) => BASE + index * 60_000;
    const unix = (index: number) => Math.floor(minute(index) / 1000);
    const iso = (index: number) => new Date(minute(index)).toISOString();
    const expected = newestFirst(issued.slice(2, 5));
    for (const [from, to] of [
      [unix(2), unix(5)],
      [iso(2), iso(5)],
      [unix(2), iso(5)],
      [iso(2), unix(5)],
    ]) {
      const list = await listUsage(keyX, { from: from!, to: to! });
      expect(list.data.map((item) => item.id), `${from}..${to}`).toEqual(expected);
      expect(list.pagination.total).toBe(3);
      expect(list.data.map((item) => item.created_at)).toEqual([unix(4), unix(3), unix(2)]);
    }
    expect((await listUsage(keyX, { from: unix(7) })).data.map((item) => item.id)).toEqual(newestFirst(issued.slice(7)));
    expect((await listUsage(keyX, { to: iso(1) })).data.map((item) => item.id)).toEqual([issued[0]]);
    // A zone offset is honoured: 11:03+01:00 is 10:03Z.
    expect((await listUsage(keyX, { from: '2026-01-05T11:03:00+01:00', to: '2026-01-05T11:04:00+01:00' })).data.map((item) => item.id)).toEqual([issued[3]]);
    // Time and model together.
    const both = await listUsage(keyX, { from: unix(0), to: unix(5), model: FLAT_MODEL });
    expect(both.data.map((item) => item.id)).toEqual(newestFirst(issued.slice(0, 5).filter((_, index) => issuedModels[index] === FLAT_MODEL)));
    // The other account is untouched by the filter.
    expect((await listUsage(keyY, { from: unix(0), to: unix(10) })).pagination.total).toBe(0);
  });

  it('writes cost as a plain decimal, never in scientific notation', async () => {
    const { key } = await gateway.createAccountWithKey({ credits: 1 });
    expect((await postChat(gateway, key, chatBody(TINY_MODEL))).status).toBe(200);
    await flushAll(gateway);
    const answer = await getJson(`${gateway.url}/v1/usage`, bearer(key));
    expect(answer.status, answer.text).toBe(200);
    expect(answer.text).toMatch(/"cost":0\.000068[,}]/);
    // No JSON number of the answer (cost, price, tokens) has an exponent.
    expect(answer.text).not.toMatch(/:-?\d+(\.\d+)?[eE]/);
    expect(answer.text).toMatch(/"request":0\.000068[,}]/);
  });

  it('refuses a malformed query with 400 INVALID_REQUEST', async () => {
    for (const query of ['limit=0', 'limit=101', 'page=0', 'page=abc', 'from=yesterday', 'to=2026-13-45T99:00:00Z']) {
      const answer = await getJson(`${gateway.url}/v1/usage?${query}`, bearer(keyX));
      expect(answer.status, `${query}: ${answer.text}`).toBe(400);
      expect(errorCodeOf(answer)).toBe('INVALID_REQUEST');
    }
    const unauthenticated = await getJson(`${gateway.url}/v1/usage`);
    expect(unauthenticated.status).toBe(401);
  });

  it('leaves the books in order', async () => {
    expect(await usageRowsOf(gateway, accountX)).toHaveLength(10);
    await expectLedgerOk(gateway);
  });
});
