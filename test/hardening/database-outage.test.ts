/**
 * A real gateway process on PostgreSQL when the database goes away: backends
 * terminated under load, and the server unreachable (a proxy the test cuts,
 * then makes silent). The process must stay up, answer 503 with
 * `retry-after` (never 500, never hang) while it cannot reach the database,
 * say so on /readyz, and recover by itself, writing the usage of every
 * request it served, once the database is back.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../../db/client.js';
import { createAccount, createKey } from '../../server/accounts/accounts.service.js';
import { generateApiKey, hashApiKey } from '../../server/auth/api-keys.js';
import { checkLedger } from '../../server/billing/ledger-check.js';
import { billingCatalog, chatBody, FLAT_MODEL } from '../billing/billing-support.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait.js';
import { killSpawnedGateways, spawnGateway, type SpawnedGateway } from '../support/spawn-gateway.js';

/** A request that takes longer than this has hung: far beyond the gateway's 1 s connect timeout here. */
const HANG_MS = 30_000;

const databases: TestDatabase[] = [];
const proxies: TcpProxy[] = [];
const handles: DatabaseHandle[] = [];
const dir = mkdtempSync(path.join(os.tmpdir(), 'umg-db-outage-'));
const catalogFile = path.join(dir, 'catalog.json');

beforeAll(() => {
  writeFileSync(catalogFile, JSON.stringify(billingCatalog()));
});

afterAll(async () => {
  await killSpawnedGateways();
  for (const handle of handles) await handle.close().catch(() => undefined);
  for (const proxy of proxies) await proxy.close();
  for (const database of databases) await database.drop();
  rmSync(dir, { recursive: true, force: true });
});

function spawnOutageGateway(env: Record<string, string>): Promise<SpawnedGateway> {
  return spawnGateway({ DATA_DIR: dir, GATEWAY_CONFIG: catalogFile, GATEWAY_ADMIN_TOKEN: 'outage-admin', DATABASE_CONNECT_TIMEOUT_MS: '1000', ...env });
}

interface Outcome {
  status: number;
  retryAfter: string | null;
  code: unknown;
}

async function postChat(gateway: SpawnedGateway, key: string): Promise<Outcome> {
  const answer = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(chatBody(FLAT_MODEL)),
    signal: AbortSignal.timeout(HANG_MS),
  });
  const body = (await answer.json().catch(() => ({}))) as { error?: { code?: unknown } };
  return { status: answer.status, retryAfter: answer.headers.get('retry-after'), code: body.error?.code };
}

async function readiness(gateway: SpawnedGateway): Promise<number> {
  return (await fetch(`${gateway.url}/readyz`, { signal: AbortSignal.timeout(HANG_MS) })).status;
}

async function newDatabase(): Promise<TestDatabase> {
  const database = await createTestDatabase();
  databases.push(database);
  return database;
}

async function usageCount(db: DatabaseHandle['db'], accountId: string): Promise<number> {
  const row = await db
    .selectFrom('usage')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('account_id', '=', accountId)
    .where('status', '=', 200)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

async function accountOfKey(db: DatabaseHandle['db'], key: string): Promise<string> {
  const row = await db.selectFrom('api_keys').select('account_id').where('key_hash', '=', hashApiKey(key)).executeTakeFirstOrThrow();
  return row.account_id;
}

describe('a gateway process when PostgreSQL connections drop', () => {
  it('stays alive while its backends are terminated under concurrent load, and keeps serving', async () => {
    const database = await newDatabase();
    const key = generateApiKey();
    // Nine credits: below the lease threshold, so every request holds credit in the database (a borrowed pool client per request).
    const gateway = await spawnOutageGateway({ DATABASE_URL: database.url, GATEWAY_BOOTSTRAP_KEY: key, GATEWAY_BOOTSTRAP_CREDITS: '9', USAGE_FLUSH_MS: '20' });
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      const statuses: number[] = [];
      let served = 0;
      let running = true;
      const client = async () => {
        while (running && gateway.alive()) {
          const outcome = await postChat(gateway, key).catch((error: Error) => ({ status: -1, retryAfter: null, code: error.message }));
          statuses.push(outcome.status);
          if (outcome.status === 200) served++;
        }
      };
      const clients = Array.from({ length: 4 }, client);
      let terminated = 0;
      for (let round = 0; round < 4; round++) {
        const before = served;
        await waitFor(() => served >= before + 20 || !gateway.alive(), { timeoutMs: 60_000, message: 'requests to be served' });
        expect(gateway.alive(), gateway.output()).toBe(true);
        const { rows } = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
        terminated += rows.length;
      }
      const before = served;
      await waitFor(() => served >= before + 20 || !gateway.alive(), { timeoutMs: 60_000, message: 'requests to be served after the last termination' });
      running = false;
      await Promise.all(clients);

      expect(gateway.alive(), gateway.output()).toBe(true);
      expect(terminated).toBeGreaterThan(0);
      // Requests caught by a termination answer 503; none fails otherwise.
      expect(statuses.filter((status) => status !== 200 && status !== 503), gateway.output()).toEqual([]);
      for (let index = 0; index < 10; index++) expect((await postChat(gateway, key)).status).toBe(200);
      served += 10;

      // Every request served is settled exactly once, and the books agree.
      const direct = await openDatabase({ databaseUrl: database.url, dataDir: '' });
      handles.push(direct);
      const accountId = await accountOfKey(direct.db, key);
      await waitFor(async () => (await usageCount(direct.db, accountId)) === served, { timeoutMs: 30_000, message: `${served} usage rows` });
      expect((await checkLedger(direct.db, accountId)).ok).toBe(true);
    } finally {
      await admin.end();
    }
  }, 240_000);

  it('answers 503 with retry-after and /readyz 503 while the database is unreachable, and recovers without a restart', async () => {
    const database = await newDatabase();
    const target = new URL(database.url);
    const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    proxies.push(proxy);
    const proxiedUrl = new URL(database.url);
    proxiedUrl.hostname = '127.0.0.1';
    proxiedUrl.port = String(proxy.port);
    const warmKey = generateApiKey();
    // A hundred credits: holds come from this instance's headroom, so a warm key can be served from memory while the database is away.
    const gateway = await spawnOutageGateway({ DATABASE_URL: proxiedUrl.toString(), GATEWAY_BOOTSTRAP_KEY: warmKey, GATEWAY_BOOTSTRAP_CREDITS: '100', USAGE_FLUSH_MS: '200' });
    const direct = await openDatabase({ databaseUrl: database.url, dataDir: '' });
    handles.push(direct);
    // A key the gateway has never seen: authenticating it needs the database.
    const coldAccount = await createAccount(direct.db, { name: 'cold', plan: 'pro', credits: 100 });
    const coldKey = (await createKey(direct.db, coldAccount.id, 'cold')).key;

    const warmServed = { count: 0 };
    const all: Outcome[] = [];
    const send = async (key: string) => {
      const outcome = await postChat(gateway, key);
      all.push(outcome);
      if (key === warmKey && outcome.status === 200) warmServed.count++;
      return outcome;
    };
    for (let index = 0; index < 10; index++) expect((await send(warmKey)).status).toBe(200);

    // Requests finished just before the cut: their usage is most likely still queued (flushed every 200 ms).
    await Promise.all(Array.from({ length: 5 }, () => send(warmKey)));
    await proxy.stop();

    await waitFor(async () => (await readiness(gateway)) === 503, { timeoutMs: 20_000, message: '/readyz to answer 503' });
    for (let index = 0; index < 5; index++) {
      const outcome = await send(coldKey);
      expect(outcome).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
      expect(Number(outcome.retryAfter)).toBeGreaterThanOrEqual(1);
    }
    // The warm key may still be served from memory; if not, it is a 503 too.
    for (let index = 0; index < 5; index++) expect([200, 503]).toContain((await send(warmKey)).status);

    // A silent network: connections accepted, never answered. The pool's connect timeout ends each wait.
    await proxy.blackhole();
    for (let index = 0; index < 3; index++) {
      const outcome = await send(coldKey);
      expect(outcome).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE' });
      expect(outcome.retryAfter).not.toBeNull();
    }
    expect(await readiness(gateway)).toBe(503);
    expect(gateway.alive(), gateway.output()).toBe(true);

    await proxy.start();
    await waitFor(async () => (await readiness(gateway)) === 200, { timeoutMs: 60_000, intervalMs: 200, message: '/readyz to answer 200 again' });
    await waitFor(async () => (await send(coldKey)).status === 200, { timeoutMs: 30_000, intervalMs: 200, message: 'the cold key to be served' });
    for (let index = 0; index < 3; index++) expect((await send(warmKey)).status).toBe(200);
    expect(all.filter((outcome) => outcome.status !== 200 && outcome.status !== 503)).toEqual([]);
    expect(gateway.alive(), gateway.output()).toBe(true);

    // Everything served before, during and after the outage is written once the database is back.
    const warmAccount = await accountOfKey(direct.db, warmKey);
    await waitFor(async () => (await usageCount(direct.db, warmAccount)) === warmServed.count, {
      timeoutMs: 30_000,
      message: `${warmServed.count} usage rows of the warm key`,
    });
    expect((await checkLedger(direct.db)).ok).toBe(true);
  }, 240_000);
});
