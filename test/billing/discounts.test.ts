/**
 * `GET /v1/discounts/my-discounts` and discounted billing on two instances
 * sharing one PostgreSQL: no discounts without a pool; a pool set through
 * `admin.billing.setDiscountPool` on instance A reaches instance B through the
 * settings notification within a second; both instances derive the same
 * discounts for every account without talking to each other; billing on
 * either instance applies the percentage (cost = list − floor(list × p / 100));
 * `next_rotation` is the next 18:00 Europe/Berlin.
 * (The rotation across daylight-saving changes is unit-tested in
 * server/billing/discounts.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiscountSettings } from '../../server/billing/discount-settings.js';
import { applyDiscount, computeCost } from '../../server/billing/money.js';
import { toMicroPrice } from '../../server/catalog/catalog.schema.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/wait.js';
import { usageRowOf } from '../support/usage.js';
import { bearer, getJson } from '../support/http.js';
import {
  FLAT_MODEL,
  FLAT_PRICE_MICRO,
  TOKEN_MODEL,
  TOKEN_PRICING,
  UNLIMITED_PRO_ENV,
  billingCatalog,
  chatBody,
  expectLedgerOk,
  mockModel,
  pollUntil,
  postChat,
  trpcMutation,
  trpcQuery,
} from './billing-support.js';

interface DiscountResult {
  discounts: Array<{ model: string; percentage: number; expires_at: number; time_remaining: string }>;
  next_rotation: number;
}

interface Pool {
  models: string[];
  minPercentage: number;
  maxPercentage: number;
  perAccount: number;
}

const EXTRA_MODELS = ['mock-alpha', 'mock-beta', 'mock-gamma'];
const catalog = billingCatalog({ models: EXTRA_MODELS.map((id) => mockModel(id, { input: 0, output: 0, request: 0.02 })) });

let database: TestDatabase;
let a: TestGateway;
let b: TestGateway;

beforeAll(async () => {
  database = await createTestDatabase();
  a = await startTestGateway({ databaseUrl: database.url, catalog, env: UNLIMITED_PRO_ENV });
  b = await startTestGateway({ databaseUrl: database.url, catalog, env: UNLIMITED_PRO_ENV });
  await avoidRotationMoment();
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await database?.drop();
});

const berlinHour = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', hour: 'numeric', minute: 'numeric', hourCycle: 'h23' });

/** The first instant after `now` at which clocks in Berlin show 18:00 (always a whole UTC hour), ms. */
function nextBerlinSixPm(now: number): number {
  const hour = 3_600_000;
  for (let instant = Math.floor(now / hour) * hour + hour; instant <= now + 49 * hour; instant += hour) {
    if (berlinHour.format(instant) === '18:00') return instant;
  }
  throw new Error('no 18:00 in Berlin within two days');
}

/**
 * The suite compares answers taken a moment apart: never let a rotation fall
 * in between. Within 15 s of one, wait until the clock is a second past it
 * (the condition is the clock itself; its deadline leaves room for a slow timer).
 */
async function avoidRotationMoment(): Promise<void> {
  const rotation = nextBerlinSixPm(Date.now());
  if (rotation - Date.now() >= 15_000) return;
  await waitFor(() => Date.now() > rotation + 1_000, {
    timeoutMs: rotation + 1_000 - Date.now() + 10_000,
    intervalMs: 250,
    message: 'the 18:00 Berlin rotation to pass',
  });
}

async function myDiscounts(gateway: TestGateway, key: string): Promise<DiscountResult> {
  const answer = await getJson(`${gateway.url}/v1/discounts/my-discounts`, bearer(key));
  expect(answer.status, answer.text).toBe(200);
  const body = answer.body as unknown as DiscountResult;
  expect(Object.keys(body).sort()).toEqual(['discounts', 'next_rotation']);
  expect(Number.isInteger(body.next_rotation)).toBe(true);
  for (const discount of body.discounts) {
    expect(Object.keys(discount).sort()).toEqual(['expires_at', 'model', 'percentage', 'time_remaining']);
    expect(discount.time_remaining).toMatch(/^(\d+h \d+m|\d+m \d+s|\d+s)$/);
    expect(discount.expires_at).toBe(body.next_rotation);
  }
  return body;
}

/** What must agree between instances (time_remaining is a countdown and may differ by a second). */
function comparable(result: DiscountResult): { discounts: Array<{ model: string; percentage: number; expires_at: number }>; next_rotation: number } {
  return {
    discounts: result.discounts.map(({ model, percentage, expires_at }) => ({ model, percentage, expires_at })),
    next_rotation: result.next_rotation,
  };
}

async function setPool(gateway: TestGateway, pool: Partial<Pool>): Promise<Pool> {
  return trpcMutation<Pool>(gateway, 'admin.billing.setDiscountPool', pool);
}

/** Waits (at most one second) until B has loaded the pool A stored. */
async function expectPoolOnB(pool: Pool): Promise<void> {
  await pollUntil(
    () => trpcQuery<Pool>(b, 'admin.billing.discountPool', undefined),
    (seen) => JSON.stringify(seen) === JSON.stringify(pool),
    1_000,
    'instance B to load the discount pool set on A',
  );
}

describe('discounts on two instances', () => {
  it('answers no discounts without a pool, and the next 18:00 Berlin as next_rotation', async () => {
    const { key } = await a.createAccountWithKey();
    const now = Date.now();
    for (const instance of [a, b]) {
      const result = await myDiscounts(instance, key);
      expect(result.discounts).toEqual([]);
      expect(result.next_rotation * 1000).toBe(nextBerlinSixPm(now));
      // 18:00 CET is 17:00 UTC, 18:00 CEST is 16:00 UTC.
      expect([16, 17]).toContain(new Date(result.next_rotation * 1000).getUTCHours());
      expect(result.next_rotation * 1000 - now).toBeLessThanOrEqual(25 * 3_600_000);
    }
    await expectLedgerOk(a);
  });

  it('applies a pool set on A on both instances, identically, and bills the percentage', async () => {
    const { accountId, key } = await a.createAccountWithKey();
    const pool = await setPool(a, { models: [TOKEN_MODEL], perAccount: 1, minPercentage: 20, maxPercentage: 20 });
    expect(pool).toEqual({ models: [TOKEN_MODEL], perAccount: 1, minPercentage: 20, maxPercentage: 20 });

    const onA = await myDiscounts(a, key);
    expect(onA.discounts.map(({ model, percentage }) => ({ model, percentage }))).toEqual([{ model: TOKEN_MODEL, percentage: 20 }]);
    expect(onA.discounts[0]!.expires_at * 1000).toBe(nextBerlinSixPm(Date.now()));
    const onB = await pollUntil(() => myDiscounts(b, key), (result) => result.discounts.length === 1, 1_000, 'instance B to show the discount');
    expect(comparable(onB)).toEqual(comparable(onA));

    const price = toMicroPrice(TOKEN_PRICING);
    for (const instance of [a, b]) {
      const answer = await postChat(instance, key, chatBody(TOKEN_MODEL, 'a discounted question with a few more words in it'));
      expect(answer.status, answer.text).toBe(200);
      const row = await usageRowOf(instance, answer.headers.get('x-request-id')!);
      expect(row.discount_percentage).toBe(20);
      const list = computeCost(price, { inputTokens: row.input_tokens, outputTokens: row.output_tokens, cachedInputTokens: row.cached_input_tokens });
      expect(list).toBeGreaterThan(0);
      expect(Number(row.cost)).toBe(list - Math.floor((list * 20) / 100));
      expect(Number(row.cost)).toBe(applyDiscount(list, 20));
    }
    // A model outside the pool pays the list price.
    const flat = await postChat(b, key);
    const flatRow = await usageRowOf(b, flat.headers.get('x-request-id')!);
    expect(flatRow.discount_percentage).toBe(0);
    expect(Number(flatRow.cost)).toBe(FLAT_PRICE_MICRO);
    await expectLedgerOk(a, accountId);
  });

  it('gives several accounts the same discounts on both instances, and bills them on either', async () => {
    const pool = await setPool(a, { models: [...EXTRA_MODELS, TOKEN_MODEL, FLAT_MODEL], perAccount: 2, minPercentage: 5, maxPercentage: 50 });
    await expectPoolOnB(pool);
    const accounts = await Promise.all(Array.from({ length: 8 }, () => b.createAccountWithKey()));
    const seenModels = new Set<string>();
    const seenPercentages = new Set<number>();
    for (const account of accounts) {
      const [onA, onB] = await Promise.all([myDiscounts(a, account.key), myDiscounts(b, account.key)]);
      expect(comparable(onB)).toEqual(comparable(onA));
      expect(onA.discounts).toHaveLength(2);
      expect(new Set(onA.discounts.map((discount) => discount.model)).size).toBe(2);
      for (const discount of onA.discounts) {
        expect(pool.models).toContain(discount.model);
        expect(Number.isInteger(discount.percentage)).toBe(true);
        expect(discount.percentage).toBeGreaterThanOrEqual(5);
        expect(discount.percentage).toBeLessThanOrEqual(50);
        seenModels.add(discount.model);
        seenPercentages.add(discount.percentage);
      }
    }
    // Derived per account: eight accounts do not all get the same picks.
    expect(seenModels.size).toBeGreaterThan(2);
    expect(seenPercentages.size).toBeGreaterThan(1);

    // Billing on B applies what A shows, for the flat-priced models the arithmetic is plain.
    for (const account of accounts.slice(0, 4)) {
      const shown = (await myDiscounts(a, account.key)).discounts.find((discount) => discount.model !== TOKEN_MODEL)!;
      const answer = await postChat(b, account.key, chatBody(shown.model));
      expect(answer.status, answer.text).toBe(200);
      const row = await usageRowOf(b, answer.headers.get('x-request-id')!);
      expect(row.discount_percentage).toBe(shown.percentage);
      const list = shown.model === FLAT_MODEL ? FLAT_PRICE_MICRO : 20_000;
      expect(Number(row.cost)).toBe(list - Math.floor((list * shown.percentage) / 100));
    }
    await expectLedgerOk(b);
  });

  it('takes the discounts away on both instances when the pool is emptied', async () => {
    const { key } = await b.createAccountWithKey();
    const pool = await setPool(b, { models: [] });
    expect(pool.models).toEqual([]);
    await pollUntil(() => trpcQuery<Pool>(a, 'admin.billing.discountPool', undefined), (seen) => seen.models.length === 0, 1_000, 'instance A to load the empty pool');
    for (const instance of [a, b]) expect((await myDiscounts(instance, key)).discounts).toEqual([]);
    await expectLedgerOk(a);
  });
});

describe('changing the pool from two instances', () => {
  it('merges a change onto the stored pool, not onto an instance copy that has not heard of the last change yet', async () => {
    const { db } = a.gateway.services;
    // Two instances' settings before either hears of the other's change (no listener wired).
    const first = new DiscountSettings(db);
    const second = new DiscountSettings(db);
    await first.load();
    await second.load();
    await first.update({ models: [FLAT_MODEL], perAccount: 1, minPercentage: 30, maxPercentage: 40 });
    const merged = await second.update({ minPercentage: 35 });
    expect(merged).toMatchObject({ models: [FLAT_MODEL], perAccount: 1, minPercentage: 35, maxPercentage: 40 });
    expect(merged.seed).toBe(first.current.seed);
    // Both running instances end up with what is stored.
    const stored = { models: [FLAT_MODEL], minPercentage: 35, maxPercentage: 40, perAccount: 1 };
    for (const instance of [a, b]) {
      await pollUntil(() => trpcQuery<Pool>(instance, 'admin.billing.discountPool', undefined), (seen) => JSON.stringify(seen) === JSON.stringify(stored), 1_000, 'the instance to load the merged pool');
    }
    // A change that would make the pool invalid is refused and stores nothing.
    await expect(second.update({ minPercentage: 90 })).rejects.toMatchObject({ code: 'INVALID_REQUEST', status: 400, message: expect.stringMatching(/minPercentage \(90\) is above maxPercentage/) });
    expect(await trpcQuery<Pool>(a, 'admin.billing.discountPool', undefined)).toEqual(stored);
    await setPool(a, { models: [] });
    await expectLedgerOk(b);
  });
});
