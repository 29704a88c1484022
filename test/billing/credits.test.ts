/**
 * `GET /v1/credits` (SPEC "Credits", types per GAPS.md "Account data"): every
 * field and its type, credits held by a request in flight, the cycle's spend
 * cap (`daily_limit`) enforced across two instances while the balance is still
 * positive, and the reset cycle that zeroes `credits_used` exactly once however
 * many sweeps race for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runResetCycles } from '../../server/billing/credits.js';
import { computeCost, creditsToMicro } from '../../server/billing/money.js';
import { toMicroPrice } from '../../server/catalog/catalog.schema.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { balancesOf, flushAll, usageRowsOf } from '../support/usage.js';
import { type Json } from '../support/http.js';
import {
  FLAT_PRICE_MICRO,
  TOKEN_PRICING,
  UNLIMITED_PRO_ENV,
  billingCatalog,
  chatBody,
  errorCodeOf,
  expectLedgerOk,
  getCredits,
  openAIModel,
  CONDITION_BUDGET_MS,
  pollUntil,
  postChat,
} from './billing-support.js';

const SLOW_MODEL = 'gpt-billed';
const DAY_MS = 86_400_000;
const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

/** A number of credits shown with at most 6 decimals. */
function expectCredits(value: unknown): number {
  expect(value).toBeTypeOf('number');
  expect(Number.isFinite(value)).toBe(true);
  expect(creditsToMicro(value as number)).toBeTypeOf('number');
  return value as number;
}

function expectCreditsShape(body: Json): void {
  expect(Object.keys(body).sort()).toEqual(
    ['available_credits', 'credits_used', 'current_credits', 'daily_limit', 'held_credits', 'last_reset', 'plan', 'reset_cycle_days', 'reset_time', 'vault_credits'].sort(),
  );
  for (const field of ['current_credits', 'vault_credits', 'credits_used', 'held_credits', 'available_credits']) expectCredits(body[field]);
  if (body.daily_limit !== null) expectCredits(body.daily_limit);
  expect(body.plan).toBeTypeOf('string');
  expect(body.last_reset).toMatch(ISO_8601);
  expect(body.reset_time).toMatch(ISO_8601);
  expect(Number.isInteger(body.reset_cycle_days)).toBe(true);
  expect(body.reset_cycle_days as number).toBeGreaterThan(0);
  expect(Date.parse(body.reset_time as string) - Date.parse(body.last_reset as string)).toBe((body.reset_cycle_days as number) * DAY_MS);
}

async function creditsOf(gateway: TestGateway, key: string): Promise<Json> {
  const answer = await getCredits(gateway, key);
  expect(answer.status, answer.text).toBe(200);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expectCreditsShape(answer.body);
  return answer.body;
}

describe('GET /v1/credits on one instance', () => {
  let upstream: UpstreamServer;
  let gateway: TestGateway;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream();
    gateway = await startTestGateway({
      env: UNLIMITED_PRO_ENV,
      catalog: billingCatalog({ providers: [{ id: 'openai-up', kind: 'openai', baseUrl: upstream.url }], models: [openAIModel(SLOW_MODEL, 'openai-up')] }),
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('answers every field with its type, and the balances of a new account', async () => {
    const before = Date.now();
    const { key } = await gateway.createAccountWithKey({ plan: 'pro', credits: 12.5, vaultCredits: 3.25 });
    const body = await creditsOf(gateway, key);
    expect(body).toMatchObject({
      current_credits: 12.5,
      vault_credits: 3.25,
      daily_limit: null,
      credits_used: 0,
      held_credits: 0,
      available_credits: 15.75,
      plan: 'pro',
      reset_cycle_days: 1,
    });
    const lastReset = Date.parse(body.last_reset as string);
    expect(lastReset).toBeGreaterThanOrEqual(before - 5_000);
    expect(lastReset).toBeLessThanOrEqual(Date.now());
  });

  it('reports a daily limit as a number, and the free plan by name', async () => {
    const { key } = await gateway.createAccountWithKey({ plan: 'free', credits: 1, dailyLimit: 0.25 });
    expect(await creditsOf(gateway, key)).toMatchObject({ plan: 'free', daily_limit: 0.25, current_credits: 1 });
  });

  it('shows what a request spent, to the micro-credit', async () => {
    const { accountId, key } = await gateway.createAccountWithKey({ credits: 2 });
    expect((await postChat(gateway, key, chatBody('mock-chat', 'spend a little'))).status).toBe(200);
    expect((await postChat(gateway, key)).status).toBe(200);
    await flushAll(gateway);
    const spent = (await usageRowsOf(gateway, accountId)).reduce((sum, row) => sum + Number(row.cost), 0);
    expect(spent).toBeGreaterThan(FLAT_PRICE_MICRO);
    const body = await creditsOf(gateway, key);
    expect(creditsToMicro(body.credits_used as number)).toBe(spent);
    expect(creditsToMicro(body.current_credits as number)).toBe(2_000_000 - spent);
    expect(creditsToMicro(body.available_credits as number)).toBe(2_000_000 - spent);
    await expectLedgerOk(gateway, accountId);
  });

  it('shows the credits held by a request in flight, and releases them when it ends', async () => {
    const { accountId, key } = await gateway.createAccountWithKey({ credits: 3, vaultCredits: 1 });
    upstream.reset();
    upstream.script({ kind: 'delay', ms: 2_500 });
    const inFlight = postChat(gateway, key, chatBody(SLOW_MODEL, 'take your time', { max_tokens: 200 }));
    await upstream.waitForRequests(1, 10_000);
    const during = await creditsOf(gateway, key);
    const held = creditsToMicro(during.held_credits as number);
    // At least the 200 output tokens the request may produce.
    expect(held).toBeGreaterThanOrEqual(computeCost(toMicroPrice(TOKEN_PRICING), { inputTokens: 0, outputTokens: 200 }));
    expect(creditsToMicro(during.available_credits as number)).toBe(4_000_000 - held);
    expect(during).toMatchObject({ current_credits: 3, vault_credits: 1, credits_used: 0 });
    expect(await balancesOf(gateway, accountId)).toMatchObject({ held, holds: held });

    expect((await inFlight).status).toBe(200);
    const after = await pollUntil(
      async () => {
        await flushAll(gateway);
        return creditsOf(gateway, key);
      },
      (body) => body.held_credits === 0,
      CONDITION_BUDGET_MS,
      'the hold to be released',
    );
    const [row] = await usageRowsOf(gateway, accountId);
    expect(creditsToMicro(after.credits_used as number)).toBe(Number(row!.cost));
    expect(creditsToMicro(after.available_credits as number)).toBe(4_000_000 - Number(row!.cost));
    await expectLedgerOk(gateway, accountId);
  });
});

describe('daily_limit and reset cycles on two instances (PostgreSQL)', () => {
  let database: TestDatabase;
  let a: TestGateway;
  let b: TestGateway;
  let accountId: string;
  let key: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    a = await startTestGateway({ databaseUrl: database.url, catalog: billingCatalog(), env: UNLIMITED_PRO_ENV });
    b = await startTestGateway({ databaseUrl: database.url, catalog: billingCatalog(), env: UNLIMITED_PRO_ENV });
    ({ accountId, key } = await a.createAccountWithKey({ credits: 1, dailyLimit: 0.05 }));
  });

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await database?.drop();
  });

  it('serves 5 requests of 0.01 under a limit of 0.05, then refuses with 402 DAILY_LIMIT_EXCEEDED while the balance is positive', async () => {
    const statuses: number[] = [];
    for (let index = 0; index < 5; index++) statuses.push((await postChat(index % 2 === 0 ? a : b, key)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    for (const instance of [a, b]) {
      const refused = await postChat(instance, key);
      expect(refused.status, refused.text).toBe(402);
      expect(errorCodeOf(refused)).toBe('DAILY_LIMIT_EXCEEDED');
    }
    await flushAll(a, b);
    const body = await creditsOf(b, key);
    expect(body).toMatchObject({ current_credits: 0.95, credits_used: 0.05, daily_limit: 0.05, held_credits: 0, available_credits: 0.95 });
    // Concurrent attempts on both instances change nothing.
    const burst = await Promise.all(Array.from({ length: 10 }, (_, index) => postChat(index % 2 === 0 ? a : b, key)));
    expect(burst.map((answer) => errorCodeOf(answer))).toEqual(Array.from({ length: 10 }, () => 'DAILY_LIMIT_EXCEEDED'));
    await expectLedgerOk(a, accountId);
  });

  it('starts a new cycle exactly once when sweeps run concurrently on both instances, with one reset ledger entry', async () => {
    const { db, log } = a.gateway.services;
    const before = await creditsOf(a, key);
    const lastReset = Date.parse(before.last_reset as string);
    const future = new Date(lastReset + DAY_MS + 3_600_000);
    const accounts = await db.selectFrom('accounts').select('id').execute();

    const resets = await Promise.all([
      runResetCycles(a.gateway.services.db, log, future),
      runResetCycles(b.gateway.services.db, b.gateway.services.log, future),
      runResetCycles(a.gateway.services.db, log, future),
      runResetCycles(b.gateway.services.db, b.gateway.services.log, future),
    ]);
    // Every account was due once; however the sweeps interleaved, each was reset by exactly one of them.
    expect(resets.reduce((sum, count) => sum + count, 0)).toBe(accounts.length);
    // Later sweeps of the same moment find nothing to do.
    expect(await runResetCycles(b.gateway.services.db, b.gateway.services.log, future)).toBe(0);
    expect(await runResetCycles(a.gateway.services.db, log, future)).toBe(0);

    const after = await creditsOf(b, key);
    expect(after).toMatchObject({ credits_used: 0, current_credits: 0.95, daily_limit: 0.05 });
    expect(Date.parse(after.last_reset as string)).toBe(lastReset + DAY_MS);
    expect(Date.parse(after.reset_time as string)).toBe(lastReset + 2 * DAY_MS);
    const resetEntries = await db.selectFrom('ledger').selectAll().where('account_id', '=', accountId).where('kind', '=', 'reset').execute();
    expect(resetEntries).toHaveLength(1);
    expect([Number(resetEntries[0]!.current_delta), Number(resetEntries[0]!.vault_delta)]).toEqual([0, 0]);
    expect(resetEntries[0]!.note).toContain('0.05');
    await expectLedgerOk(a, accountId);
  });

  it('serves again in the new cycle, up to the limit', async () => {
    const statuses: number[] = [];
    for (let index = 0; index < 6; index++) statuses.push((await postChat(index % 2 === 0 ? b : a, key)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 402]);
    await flushAll(a, b);
    expect(await creditsOf(a, key)).toMatchObject({ current_credits: 0.9, credits_used: 0.05 });
    await expectLedgerOk(b);
  });
});
