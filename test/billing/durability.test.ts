/**
 * Nothing billed is lost and nothing is billed twice when instances go away
 * (always on PostgreSQL: survivors and the departed share one database).
 *
 * - Graceful stop: an instance whose usage rows are still queued (its flush
 *   timer never fired) writes them all when stopped, including a request
 *   that was still running when the stop began.
 * - Crash: an instance that stops heartbeating leaves holds behind; a
 *   survivor's `recoverAbandonedHolds()` releases exactly those (its own and
 *   other live instances' holds stay), once, even when two survivors sweep at
 *   the same time. If the "dead" instance was only paused and later settles
 *   its requests, they are charged once and its recovered holds are not
 *   released a second time from someone else's.
 */
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../db/schema.js';
import { Billing, type UsageEntry } from '../../server/billing/billing.js';
import { createLogger } from '../../server/logger.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { balancesOf, flushAll, usageRowsOf } from '../support/usage.js';
import {
  FLAT_MODEL,
  FLAT_PRICE_MICRO,
  UNLIMITED_PRO_ENV,
  billingCatalog,
  chatBody,
  expectLedgerOk,
  openAIModel,
  postChat,
} from './billing-support.js';

const SLOW_MODEL = 'gpt-billed';

/**
 * The database as billing sees it when a connection drops right after COMMIT:
 * the next transaction is committed, and then its caller gets an error.
 */
function dbLosingCommitAcknowledgements(db: Kysely<Database>): { db: Kysely<Database>; loseNext(): void } {
  let lose = false;
  const wrapped = new Proxy(db, {
    get(target, property) {
      if (property !== 'transaction') {
        // Bound to the real instance: Kysely keeps its state in private fields.
        const value = Reflect.get(target, property, target) as unknown;
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      }
      return () => {
        const builder = target.transaction();
        return {
          async execute<T>(callback: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
            const result = await builder.execute(callback);
            if (lose) {
              lose = false;
              throw new Error('connection reset: COMMIT acknowledgement lost');
            }
            return result;
          },
        };
      };
    },
  });
  return {
    db: wrapped,
    loseNext() {
      lose = true;
    },
  };
}

describe('graceful stop', () => {
  let database: TestDatabase;
  let upstream: UpstreamServer;
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    database = await createTestDatabase();
    upstream = await startOpenAIUpstream();
    const catalog = billingCatalog({ providers: [{ id: 'openai-up', kind: 'openai', baseUrl: upstream.url }], models: [openAIModel(SLOW_MODEL, 'openai-up')] });
    // A never flushes on its timer: whatever it billed is still queued when it stops.
    a = await startTestGateway({ databaseUrl: database.url, catalog, env: UNLIMITED_PRO_ENV, config: { usageFlushMs: 600_000 } });
    b = await startTestGateway({ databaseUrl: database.url, catalog, env: UNLIMITED_PRO_ENV });
  });

  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await upstream?.close();
    await database?.drop();
  });

  it('writes every queued usage row and charge when stopped right after the requests finished', async () => {
    const { accountId, key } = await b.createAccountWithKey({ credits: 1 });
    const sequential = [];
    for (let index = 0; index < 5; index++) sequential.push(await postChat(a, key));
    const concurrent = await Promise.all(Array.from({ length: 7 }, () => postChat(a, key)));
    expect([...sequential, ...concurrent].map((answer) => answer.status)).toEqual(Array.from({ length: 12 }, () => 200));
    // One more still running when the stop begins: the stop waits for it.
    upstream.reset();
    upstream.script({ kind: 'delay', ms: 400 });
    const running = postChat(a, key, chatBody(SLOW_MODEL, 'finish me', { max_tokens: 50 }));
    await upstream.waitForRequests(1, 10_000);
    expect(a.gateway.services.billing.pending).toBeGreaterThanOrEqual(12);

    await a.gateway.stop();
    const last = await running;
    expect(last.status, last.text).toBe(200);

    // Read through the other instance: all 13 rows, all charged, nothing held.
    const rows = await usageRowsOf(b, accountId);
    expect(rows).toHaveLength(13);
    const ids = rows.map((row) => row.request_id);
    for (const answer of [...sequential, ...concurrent, last]) expect(ids).toContain(answer.headers.get('x-request-id'));
    const spent = rows.reduce((sum, row) => sum + Number(row.cost), 0);
    expect(spent).toBeGreaterThan(12 * FLAT_PRICE_MICRO);
    expect(await balancesOf(b, accountId)).toMatchObject({ current: 1_000_000 - spent, held: 0, holds: 0 });
    // The stopped instance left the instances table and no hold rows.
    const instanceId = a.gateway.services.instanceId;
    expect(await b.gateway.services.db.selectFrom('instances').select('id').where('id', '=', instanceId).execute()).toEqual([]);
    expect(await b.gateway.services.db.selectFrom('credit_holds').select('amount').where('instance_id', '=', instanceId).execute()).toEqual([]);
    await expectLedgerOk(b);
  });
});

describe('an instance that crashes with holds open', () => {
  let database: TestDatabase;
  let upstream: UpstreamServer;
  let live: TestGateway;
  let accountId: string;
  let key: string;
  /** The crashed instance's billing, driven by hand: no timers, so it never heartbeats. */
  let crashed: Billing;
  let crashedId: string;
  const log = createLogger('silent');

  beforeAll(async () => {
    database = await createTestDatabase();
    upstream = await startOpenAIUpstream();
    live = await startTestGateway({
      databaseUrl: database.url,
      env: UNLIMITED_PRO_ENV,
      catalog: billingCatalog({ providers: [{ id: 'openai-up', kind: 'openai', baseUrl: upstream.url }], models: [openAIModel(SLOW_MODEL, 'openai-up')] }),
    });
    ({ accountId, key } = await live.createAccountWithKey({ credits: 1 }));
    crashedId = `gw_crashed_${randomUUID()}`;
    crashed = new Billing(live.gateway.services.db, { instanceId: crashedId, flushIntervalMs: 600_000, log });
    await live.gateway.services.db.insertInto('instances').values({ id: crashedId, heartbeat_at: new Date() }).execute();
  });

  afterAll(async () => {
    await live?.close();
    await upstream?.close();
    await database?.drop();
  });

  function servedEntry(requestId: string): UsageEntry {
    return {
      requestId,
      accountId,
      keyId: null,
      model: FLAT_MODEL,
      endpoint: '/v1/chat/completions',
      provider: 'mock',
      inputTokens: 3,
      outputTokens: 5,
      cachedInputTokens: 0,
      units: 0,
      status: 200,
      errorCode: null,
      stream: false,
      aborted: false,
      latencyMs: 12,
      cost: FLAT_PRICE_MICRO,
      price: { inputPerMillion: 0, outputPerMillion: 0, cachedInputPerMillion: 0, image: 0, second: 0, character: 0, request: FLAT_PRICE_MICRO },
      discountPercentage: 0,
      heldAmount: FLAT_PRICE_MICRO,
      createdAt: new Date(),
    };
  }

  /** Starts a slow request on the live instance and answers once its hold is taken, with the hold's size. */
  async function slowRequestOnLive(ms = 2_500): Promise<{ done: Promise<unknown>; hold: number }> {
    const before = await balancesOf(live, accountId);
    upstream.reset();
    upstream.script({ kind: 'delay', ms });
    const done = postChat(live, key, chatBody(SLOW_MODEL, 'still working', { max_tokens: 100 }));
    await upstream.waitForRequests(1, 10_000);
    const hold = (await balancesOf(live, accountId)).held - before.held;
    expect(hold).toBeGreaterThan(0);
    return { done, hold };
  }

  async function ownHold(instanceId: string): Promise<number | undefined> {
    const row = await live.gateway.services.db
      .selectFrom('credit_holds')
      .select('amount')
      .where('instance_id', '=', instanceId)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    return row === undefined ? undefined : Number(row.amount);
  }

  it('releases only the dead instance’s holds, once, and charges nothing twice', async () => {
    // The crashed instance served three requests: one settled before the crash, two still open.
    for (let index = 0; index < 3; index++) await crashed.hold(accountId, FLAT_PRICE_MICRO);
    crashed.record(servedEntry('crash-settled'));
    await crashed.flush();
    expect(await ownHold(crashedId)).toBe(2 * FLAT_PRICE_MICRO);
    // The live instance has a request of its own in flight for the same account.
    const slow = await slowRequestOnLive();
    expect(await balancesOf(live, accountId)).toMatchObject({ current: 1_000_000 - FLAT_PRICE_MICRO, held: 2 * FLAT_PRICE_MICRO + slow.hold, holds: 2 * FLAT_PRICE_MICRO + slow.hold });

    // The crash: no heartbeat for a minute.
    await sql`UPDATE instances SET heartbeat_at = now() - interval '1 minute' WHERE id = ${crashedId}`.execute(live.gateway.services.db);
    // Two survivors sweep at the same time (the live gateway and a second one).
    const survivorId = `gw_survivor_${randomUUID()}`;
    await live.gateway.services.db.insertInto('instances').values({ id: survivorId, heartbeat_at: new Date() }).execute();
    const survivor = new Billing(live.gateway.services.db, { instanceId: survivorId, flushIntervalMs: 600_000, log });
    await Promise.all([live.gateway.services.billing.recoverAbandonedHolds(), survivor.recoverAbandonedHolds(), live.gateway.services.billing.recoverAbandonedHolds()]);

    // Exactly the dead instance's 0.02 came back; the live request's hold is untouched.
    expect(await balancesOf(live, accountId)).toMatchObject({ current: 1_000_000 - FLAT_PRICE_MICRO, held: slow.hold, holds: slow.hold });
    expect(await ownHold(crashedId)).toBeUndefined();
    expect(await ownHold(live.gateway.services.instanceId)).toBe(slow.hold);
    expect(await live.gateway.services.db.selectFrom('instances').select('id').where('id', '=', crashedId).execute()).toEqual([]);
    await expectLedgerOk(live);

    // The live request ends and settles normally.
    await slow.done;
    await flushAll(live);
    const rows = await usageRowsOf(live, accountId);
    expect(rows.map((row) => row.request_id)).toContain('crash-settled');
    expect(rows).toHaveLength(2);
    const spent = rows.reduce((sum, row) => sum + Number(row.cost), 0);
    expect(await balancesOf(live, accountId)).toMatchObject({ current: 1_000_000 - spent, held: 0, holds: 0 });
    await expectLedgerOk(live);

    // Sweeping again finds nothing.
    await live.gateway.services.billing.recoverAbandonedHolds();
    expect(await balancesOf(live, accountId)).toMatchObject({ current: 1_000_000 - spent, held: 0, holds: 0 });
  });

  it('charges a "dead" instance that was only paused once for what it served, without releasing its recovered holds again', async () => {
    const before = await balancesOf(live, accountId);
    const charges = (await usageRowsOf(live, accountId)).length;
    // Someone else's hold is open while the paused instance comes back.
    const slow = await slowRequestOnLive();

    // It settles the two requests that were open at the crash.
    crashed.record(servedEntry('crash-open-1'));
    crashed.record(servedEntry('crash-open-2'));
    await crashed.flush();

    const after = await balancesOf(live, accountId);
    // Two new charges of 0.01 …
    expect(after.current).toBe(before.current - 2 * FLAT_PRICE_MICRO);
    expect(await usageRowsOf(live, accountId)).toHaveLength(charges + 2);
    // … and the live request's hold is still whole: nothing was "released" twice out of it.
    expect(after).toMatchObject({ held: slow.hold, holds: slow.hold });
    expect(await ownHold(live.gateway.services.instanceId)).toBe(slow.hold);
    await expectLedgerOk(live);

    await slow.done;
    await flushAll(live);
    expect(await balancesOf(live, accountId)).toMatchObject({ held: 0, holds: 0 });
    const ledger = await live.gateway.services.db.selectFrom('ledger').select('request_id').where('account_id', '=', accountId).where('kind', '=', 'charge').execute();
    const requestIds = ledger.map((entry) => entry.request_id);
    expect(new Set(requestIds).size).toBe(requestIds.length);
    await expectLedgerOk(live);
  });

  it('writes a batch whose commit was not acknowledged exactly once when it is retried', async () => {
    const { db } = live.gateway.services;
    const flakyId = `gw_flaky_${randomUUID()}`;
    await db.insertInto('instances').values({ id: flakyId, heartbeat_at: new Date() }).execute();
    const flaky = dbLosingCommitAcknowledgements(db);
    const billing = new Billing(flaky.db, { instanceId: flakyId, flushIntervalMs: 600_000, log });
    const before = await balancesOf(live, accountId);
    const rowsBefore = (await usageRowsOf(live, accountId)).length;
    for (let index = 0; index < 3; index++) await billing.hold(accountId, FLAT_PRICE_MICRO);
    for (let index = 0; index < 3; index++) billing.record(servedEntry(`flaky-${index}`));

    // The transaction commits, but the answer to COMMIT is lost: the batch stays queued.
    flaky.loseNext();
    await expect(billing.flush()).rejects.toThrow(/acknowledgement lost/);
    expect(billing.pending).toBe(3);
    // Retried: nothing is written or charged a second time, no hold released twice.
    await billing.flush();
    expect(billing.pending).toBe(0);

    expect(await usageRowsOf(live, accountId)).toHaveLength(rowsBefore + 3);
    expect(await balancesOf(live, accountId)).toMatchObject({ current: before.current - 3 * FLAT_PRICE_MICRO, held: before.held, holds: before.holds });
    expect(await ownHold(flakyId)).toBe(0);
    await expectLedgerOk(live);
  });

  it('lets an instance that was taken for dead register again with its next heartbeat', async () => {
    const { db, billing, instanceId } = live.gateway.services;
    await db.deleteFrom('instances').where('id', '=', instanceId).execute();
    // A hold taken now must not be recovered as an orphan once the instance has beaten again (every 2 s).
    const slow = await slowRequestOnLive(5_000);
    await expect
      .poll(async () => (await db.selectFrom('instances').select('id').where('id', '=', instanceId).execute()).length, { timeout: 5_000, interval: 50 })
      .toBe(1);
    const survivorId = `gw_survivor_${randomUUID()}`;
    await db.insertInto('instances').values({ id: survivorId, heartbeat_at: new Date() }).execute();
    await new Billing(db, { instanceId: survivorId, flushIntervalMs: 600_000, log }).recoverAbandonedHolds();
    expect(await ownHold(instanceId)).toBe(slow.hold);
    await slow.done;
    await billing.flush();
    expect(await balancesOf(live, accountId)).toMatchObject({ held: 0, holds: 0 });
    await expectLedgerOk(live);
  });
});
