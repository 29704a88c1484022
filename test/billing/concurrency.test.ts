/**
 * Holds under concurrency across instances, always on a real PostgreSQL (also
 * in a PGlite run): two gateway instances share one database, and 200
 * simultaneous requests race for a balance that covers exactly N of them.
 * Exactly N are served, every other one is refused with 402
 * INSUFFICIENT_CREDITS, no balance ever goes negative, and once both
 * instances have settled the balance is exactly 0, nothing is held, there are
 * N usage rows of 0.01 credits, and the ledger agrees. With a vault balance,
 * the regular balance is spent first (the ledger shows the split).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { balancesOf, flushAll, usageRowsOf, type Balances } from '../support/usage.js';
import { bearer, postJson, type Answer } from '../support/http.js';
import {
  CHAT_ENDPOINT,
  FLAT_MODEL,
  FLAT_PRICE_MICRO,
  UNLIMITED_PRO_ENV,
  billingCatalog,
  chatBody,
  errorCodeOf,
  expectLedgerOk,
  postChat,
} from './billing-support.js';

const REQUESTS = 200;
const N = 37;

let database: TestDatabase;
let a: TestGateway;
let b: TestGateway;

beforeAll(async () => {
  database = await createTestDatabase();
  // One after the other: both run the migrations on the same database.
  a = await startTestGateway({ databaseUrl: database.url, catalog: billingCatalog(), env: UNLIMITED_PRO_ENV });
  b = await startTestGateway({ databaseUrl: database.url, catalog: billingCatalog(), env: UNLIMITED_PRO_ENV });
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await database?.drop();
});

interface Race {
  answers: Answer[];
  /** Balances sampled while the requests were running. */
  samples: Balances[];
}

/** 200 chat requests at once, alternating between A and B, while a third party keeps reading the balances. */
async function race(key: string, accountId: string): Promise<Race> {
  const samples: Balances[] = [];
  let running = true;
  const sampler = (async () => {
    while (running) samples.push(await balancesOf(a, accountId));
  })();
  try {
    const answers = await Promise.all(Array.from({ length: REQUESTS }, (_, index) => postChat(index % 2 === 0 ? a : b, key)));
    return { answers, samples };
  } finally {
    running = false;
    await sampler;
  }
}

function expectExactlyNServed(answers: Answer[]): void {
  const served = answers.filter((answer) => answer.status === 200);
  const refused = answers.filter((answer) => answer.status !== 200);
  expect(served).toHaveLength(N);
  expect(refused).toHaveLength(REQUESTS - N);
  for (const answer of refused) {
    expect(answer.status, answer.text).toBe(402);
    expect(errorCodeOf(answer), answer.text).toBe('INSUFFICIENT_CREDITS');
  }
  // Both instances took part in serving.
  const servedBy = new Set(answers.map((answer, index) => (answer.status === 200 ? index % 2 : -1)).filter((side) => side >= 0));
  expect(servedBy.size).toBe(2);
}

function expectNeverNegative(samples: Balances[]): void {
  expect(samples.length).toBeGreaterThan(0);
  for (const sample of samples) {
    expect(sample.current).toBeGreaterThanOrEqual(0);
    expect(sample.vault).toBeGreaterThanOrEqual(0);
    expect(sample.held).toBeGreaterThanOrEqual(0);
    // What is held never exceeds what there is, and the holds table agrees with it at every instant.
    expect(sample.current + sample.vault - sample.held).toBeGreaterThanOrEqual(0);
    expect(sample.holds).toBe(sample.held);
  }
}

async function expectSettledToZero(accountId: string): Promise<void> {
  await flushAll(a, b);
  const balances = await balancesOf(a, accountId);
  expect(balances).toEqual({ current: 0, vault: 0, held: 0, cycleSpent: N * FLAT_PRICE_MICRO, holds: 0 });
  const rows = await usageRowsOf(a, accountId);
  expect(rows).toHaveLength(N);
  for (const row of rows) {
    expect(row).toMatchObject({ status: 200, model: FLAT_MODEL, aborted: false, discount_percentage: 0 });
    expect(Number(row.cost)).toBe(FLAT_PRICE_MICRO);
  }
  await expectLedgerOk(a, accountId);
  await expectLedgerOk(b);
}

describe('200 concurrent requests on two instances for a balance that covers 37', () => {
  it('serves exactly 37 from the regular balance and refuses the rest with 402 INSUFFICIENT_CREDITS', async () => {
    const { accountId, key } = await a.createAccountWithKey({ credits: N * 0.01 });
    const { answers, samples } = await race(key, accountId);
    expectExactlyNServed(answers);
    expectNeverNegative(samples);
    await expectSettledToZero(accountId);

    // One charge entry per account and batch: together they draw N requests' worth from the regular balance, all of it charged.
    const ledger = await a.gateway.services.db.selectFrom('ledger').selectAll().where('account_id', '=', accountId).where('kind', '=', 'charge').execute();
    expect(ledger.reduce((sum, entry) => sum + Number(entry.current_delta), 0)).toBe(-N * FLAT_PRICE_MICRO);
    for (const entry of ledger) expect([Number(entry.vault_delta), Number(entry.uncharged)]).toEqual([0, 0]);
    expect(ledger.reduce((sum, entry) => sum + Number.parseInt(entry.note ?? '0', 10), 0)).toBe(N);
  });

  it('spends the regular balance first, then the vault (one charge split between both)', async () => {
    // 15.5 requests' worth of regular credits, 21.5 of vault credits.
    const { accountId, key } = await a.createAccountWithKey({ credits: 0.155, vaultCredits: 0.215 });
    const { answers, samples } = await race(key, accountId);
    expectExactlyNServed(answers);
    expectNeverNegative(samples);
    await expectSettledToZero(accountId);

    const ledger = await a.gateway.services.db
      .selectFrom('ledger')
      .select(['current_delta', 'vault_delta'])
      .where('account_id', '=', accountId)
      .where('kind', '=', 'charge')
      .orderBy('id')
      .execute();
    // One charge entry per account and batch, in order: the regular balance is drawn to zero before the vault is touched.
    const split = ledger.map((entry) => [Number(entry.current_delta), Number(entry.vault_delta)] as const);
    expect(split.reduce((sum, [current]) => sum + current, 0)).toBe(-155_000);
    expect(split.reduce((sum, [, vault]) => sum + vault, 0)).toBe(-215_000);
    const firstVault = split.findIndex(([, vault]) => vault < 0);
    expect(split.slice(0, firstVault + 1).reduce((sum, [current]) => sum + current, 0)).toBe(-155_000);
    for (const [current] of split.slice(firstVault + 1)) expect(current).toBe(0);
    const opening = await a.gateway.services.db.selectFrom('ledger').selectAll().where('account_id', '=', accountId).where('kind', '=', 'opening').executeTakeFirstOrThrow();
    expect([Number(opening.current_delta), Number(opening.vault_delta)]).toEqual([155_000, 215_000]);
  });

  it('charges every request once even when clients reuse one x-request-id, on both instances at once', async () => {
    const { accountId, key } = await a.createAccountWithKey({ credits: 1 });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, index) => postJson(`${(index % 2 === 0 ? a : b).url}${CHAT_ENDPOINT}`, chatBody(FLAT_MODEL), { ...bearer(key), 'x-request-id': 'client-chosen-id' })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: 12 }, () => 200));
    await flushAll(a, b);
    const rows = await usageRowsOf(a, accountId);
    expect(rows).toHaveLength(12);
    expect(new Set(rows.map((row) => row.request_id)).size).toBe(12);
    for (const row of rows) expect(row.request_id.startsWith('client-chosen-id')).toBe(true);
    expect(await balancesOf(a, accountId)).toMatchObject({ current: 1_000_000 - 12 * FLAT_PRICE_MICRO, held: 0, holds: 0 });
    await expectLedgerOk(a, accountId);
  });

  it('keeps serving an account with credits left while another one is exhausted, on both instances', async () => {
    const rich = await b.createAccountWithKey({ credits: 10 });
    const poor = await b.createAccountWithKey({ credits: 0.05 });
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, index) => postChat(index % 2 === 0 ? a : b, index % 4 < 2 ? rich.key : poor.key).then((answer) => ({ answer, rich: index % 4 < 2 }))),
    );
    expect(answers.filter((item) => item.rich && item.answer.status === 200)).toHaveLength(20);
    expect(answers.filter((item) => !item.rich && item.answer.status === 200)).toHaveLength(5);
    await flushAll(a, b);
    expect((await balancesOf(a, rich.accountId)).current).toBe(10_000_000 - 20 * FLAT_PRICE_MICRO);
    expect((await balancesOf(a, poor.accountId)).current).toBe(0);
    await expectLedgerOk(a);
  });
});
