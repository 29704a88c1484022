/**
 * Credit leases: an account with plenty of credit gets headroom with its first
 * database hold, and the next holds are served from memory; headroom goes back
 * on flush, when idle, and when another instance runs short.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adjustCredits } from '../../server/accounts/accounts.service.js';
import { checkLedger } from '../../server/billing/ledger-check.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { billingCatalog, chatBody, FLAT_MODEL, FLAT_PRICE_MICRO, postChat, UNLIMITED_PRO_ENV } from './billing-support.js';

let database: TestDatabase;
let first: TestGateway;
let second: TestGateway;

beforeAll(async () => {
  database = await createTestDatabase();
  const options = { databaseUrl: database.url, catalog: billingCatalog(), env: UNLIMITED_PRO_ENV, config: { usageFlushMs: 20 } };
  first = await startTestGateway(options);
  second = await startTestGateway(options);
});

afterAll(async () => {
  await first?.close();
  await second?.close();
  await database?.drop();
});

async function balances(gateway: TestGateway, accountId: string) {
  const db = gateway.gateway.services.db;
  const account = await db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
  const holds = await db.selectFrom('credit_holds').select(['instance_id', 'amount']).where('account_id', '=', accountId).execute();
  return { account, holds };
}

describe('credit leases', () => {
  it('reserves headroom with the first hold and serves the next holds from it', async () => {
    // 100 credits: far above the 1000-holds threshold (10 credits for this price) for every request below.
    const { key, accountId } = await first.createAccountWithKey({ credits: 100 });
    expect((await postChat(first, key, chatBody(FLAT_MODEL))).status).toBe(200);
    await first.gateway.services.billing.flush();
    // flush hands headroom back: nothing stays reserved.
    expect((await balances(first, accountId)).account.held).toBe(0);

    // Ten requests on one instance: one database hold grants headroom for the next ones.
    for (let index = 0; index < 10; index++) expect((await postChat(first, key, chatBody(FLAT_MODEL))).status).toBe(200);
    const during = await balances(first, accountId);
    // 64 holds' worth of headroom at most, reserved under this instance.
    expect(during.account.held).toBeGreaterThan(FLAT_PRICE_MICRO);
    expect(during.account.held).toBeLessThanOrEqual(65 * FLAT_PRICE_MICRO);
    expect(during.holds).toHaveLength(1);

    await first.gateway.services.billing.flush();
    const after = await balances(first, accountId);
    expect(after.account.held).toBe(0);
    expect(after.account.current_credits).toBe(100_000_000 - 11 * FLAT_PRICE_MICRO);
    expect((await checkLedger(first.gateway.services.db, accountId)).ok).toBe(true);
  });

  it('hands headroom back when another instance runs short, so no credit is stranded', async () => {
    const { key, accountId } = await first.createAccountWithKey({ credits: 100 });
    // Instance A takes headroom.
    expect((await postChat(first, key, chatBody(FLAT_MODEL))).status).toBe(200);
    const reserved = (await balances(first, accountId)).account;
    expect(reserved.held).toBeGreaterThan(FLAT_PRICE_MICRO);
    // Leave only half a request's credit outside A's headroom.
    const outside = reserved.current_credits - reserved.held;
    await adjustCredits(first.gateway.services.db, accountId, { amount: -(outside - FLAT_PRICE_MICRO / 2) / 1_000_000, balance: 'current' });
    // B cannot reserve from the account, asks A to hand back its headroom, and is served.
    const answer = await postChat(second, key, chatBody(FLAT_MODEL));
    expect(answer.status, answer.text).toBe(200);
    await first.gateway.services.billing.flush();
    await second.gateway.services.billing.flush();
    const after = await balances(first, accountId);
    expect(after.account.held).toBe(0);
    expect(after.account.current_credits).toBeGreaterThanOrEqual(0);
    expect((await checkLedger(first.gateway.services.db, accountId)).ok).toBe(true);
  });

  it('grants no headroom to an account that cannot afford a thousand such requests', async () => {
    const { key, accountId } = await first.createAccountWithKey({ credits: 1 });
    expect((await postChat(first, key, chatBody(FLAT_MODEL))).status).toBe(200);
    const { account } = await balances(first, accountId);
    // Only the request's own hold, released by its settlement.
    expect(account.held).toBeLessThanOrEqual(FLAT_PRICE_MICRO);
    await first.gateway.services.billing.flush();
    expect((await balances(first, accountId)).account.held).toBe(0);
  });
});
