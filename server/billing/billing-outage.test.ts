/**
 * Settlement while PostgreSQL is unreachable: the batches that fail stay
 * queued, nothing is lost or charged twice, and everything is written once
 * the database is back, without a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../../db/client.js';
import { createTestDatabase, type TestDatabase } from '../../test/support/database.js';
import { startTcpProxy, type TcpProxy } from '../../test/support/tcp-proxy.js';
import { waitFor } from '../../test/support/wait.js';
import { createAccount } from '../accounts/accounts.service.js';
import type { Logger } from '../logger.js';
import { Billing, type UsageEntry } from './billing.js';
import { checkLedger } from './ledger-check.js';

const PRICE = 10_000;

let database: TestDatabase;
let direct: DatabaseHandle;
let proxied: DatabaseHandle;
let proxy: TcpProxy;

beforeAll(async () => {
  database = await createTestDatabase();
  direct = await openDatabase({ databaseUrl: database.url, dataDir: '' });
  await migrateToLatest(direct.db);
  const target = new URL(database.url);
  proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  const url = new URL(database.url);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  proxied = await openDatabase({ databaseUrl: url.toString(), dataDir: '', connectTimeoutMs: 500 });
});

afterAll(async () => {
  await proxied?.close();
  await direct?.close();
  await proxy?.close();
  await database?.drop();
});

function entry(accountId: string, requestId: string): UsageEntry {
  return {
    requestId,
    accountId,
    keyId: null,
    model: 'mock-flat',
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
    latencyMs: 1,
    cost: PRICE,
    price: {},
    discountPercentage: 0,
    heldAmount: PRICE,
    createdAt: new Date(),
  };
}

describe('settlement during a database outage', () => {
  it('keeps failed batches queued and writes every one of them after the database returns', async () => {
    const events: string[] = [];
    const record = (event: string) => events.push(event);
    const log: Logger = { debug: record, info: record, warn: record, error: record, flat: (_level, event) => record(event), addSecrets: () => undefined };
    const billing = new Billing(proxied.db, { instanceId: 'gw_outage_test', flushIntervalMs: 20, log });
    await billing.start();
    // Five credits: below the lease threshold, so every hold is exact and in the database.
    const account = await createAccount(direct.db, { name: 'outage', plan: 'pro', credits: 5 });
    const requests = Array.from({ length: 8 }, (_, index) => `req_outage_${index}`);
    for (let index = 0; index < requests.length; index++) await billing.hold(account.id, PRICE);

    billing.record(entry(account.id, requests[0]));
    billing.record(entry(account.id, requests[1]));
    await proxy.stop();
    // Finished while the database is away: these can only be written after it returns.
    for (const requestId of requests.slice(2)) billing.record(entry(account.id, requestId));
    await waitFor(() => events.includes('billing.flush_failed'), { timeoutMs: 20_000, message: 'a failed flush' });
    expect(billing.pending).toBeGreaterThanOrEqual(requests.length - 2);
    // Many more ticks fail (one every 20 ms); the error is logged once per 10 s, not every tick.
    const failingSince = Date.now();
    await proxy.blackhole();
    await waitFor(() => events.includes('billing.heartbeat_failed'), { timeoutMs: 20_000, message: 'a failed heartbeat' });
    const logged = events.filter((event) => event === 'billing.flush_failed').length;
    expect(logged).toBeLessThanOrEqual(1 + Math.ceil((Date.now() - failingSince) / 10_000));
    expect(billing.pending).toBeGreaterThanOrEqual(requests.length - 2);

    await proxy.start();
    await waitFor(() => billing.pending === 0, { timeoutMs: 30_000, message: 'the queue to be written' });
    expect(events).toContain('billing.flush_recovered');
    const rows = await direct.db.selectFrom('usage').select(['request_id', 'cost']).where('account_id', '=', account.id).execute();
    expect(rows.map((row) => row.request_id).sort()).toEqual([...requests].sort());
    expect(rows.every((row) => row.cost === PRICE)).toBe(true);
    const balance = await direct.db.selectFrom('accounts').select(['current_credits', 'held']).where('id', '=', account.id).executeTakeFirstOrThrow();
    expect(balance).toEqual({ current_credits: 5_000_000 - requests.length * PRICE, held: 0 });
    expect((await checkLedger(direct.db, account.id)).ok).toBe(true);
    await billing.stop();
  });
});
