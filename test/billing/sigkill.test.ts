/**
 * A real SIGKILL of a gateway process: charges settled before the last flush
 * interval survive, nothing is charged twice, balance and ledger agree, and
 * the dead instance's reservations are released by a survivor.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../server/auth/api-keys.js';
import { checkLedger } from '../../server/billing/ledger-check.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { listeningUrl } from '../support/spawn-gateway.js';
import { waitFor } from '../support/wait.js';
import { billingCatalog, chatBody, FLAT_MODEL, FLAT_PRICE_MICRO } from './billing-support.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let database: TestDatabase;
let child: ChildProcess | undefined;
let survivor: TestGateway | undefined;
let dir: string;

/** Usage rows in the test's own database, read from outside the gateway process. */
async function countUsageRows(databaseUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ count: string }>('SELECT count(*) AS count FROM usage');
    return Number(rows[0]!.count);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  database = await createTestDatabase();
  dir = mkdtempSync(path.join(os.tmpdir(), 'umg-sigkill-'));
});

afterAll(async () => {
  child?.kill('SIGKILL');
  await survivor?.close();
  await database?.drop();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The test spawns a gateway process (10–25 s to answer on a loaded machine, 90 s
 * allowed below), then starts a survivor in-process: a budget above the config's.
 */
const PROCESS_BUDGET = { timeout: 240_000 };

describe('a gateway killed with SIGKILL', () => {
  it('keeps every charge settled before its last flush, charges nothing twice, and its reservations are recovered', PROCESS_BUDGET, async () => {
    const catalogFile = path.join(dir, 'catalog.json');
    writeFileSync(catalogFile, JSON.stringify(billingCatalog()));
    const key = generateApiKey();
    child = spawn(process.execPath, ['--import', 'tsx', '--import', './test/foundation/exit-with-parent.ts', 'server/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: database.url,
        DATA_DIR: dir,
        GATEWAY_CONFIG: catalogFile,
        GATEWAY_BOOTSTRAP_KEY: key,
        GATEWAY_BOOTSTRAP_CREDITS: '100',
        GATEWAY_ADMIN_TOKEN: 'sigkill-admin',
        RATE_LIMITS: 'pro=0',
        LOG_LEVEL: 'silent',
        USAGE_FLUSH_MS: '50',
      },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    const url = await listeningUrl(child, 90_000);
    // A process start (tsx, migrations) takes seconds on an idle machine; the budget is for a busy one.
    await waitFor(() => fetch(`${url}/readyz`).then((answer) => answer.ok, () => false), {
      timeoutMs: 90_000,
      intervalMs: 200,
      message: 'the gateway process to answer /readyz',
    });
    const requests = 25;
    for (let index = 0; index < requests; index++) {
      const answer = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(chatBody(FLAT_MODEL, `request ${index}`)),
      });
      expect(answer.status).toBe(200);
    }
    // Every charge settled by a flush of the gateway's own timer (usage rows and
    // charges commit in one transaction), then no goodbye at all.
    await waitFor(async () => (await countUsageRows(database.url)) === requests, { timeoutMs: 30_000, message: `the gateway's timer to flush all ${requests} usage rows` });
    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    child = undefined;

    survivor = await startTestGateway({ databaseUrl: database.url, catalog: billingCatalog() });
    const db = survivor.gateway.services.db;
    const accountId = (await db.selectFrom('api_keys').select('account_id').where('key_hash', '=', hashApiKey(key)).executeTakeFirstOrThrow()).account_id;
    const rows = await db.selectFrom('usage').select(['request_id', 'cost']).where('account_id', '=', accountId).execute();
    expect(rows).toHaveLength(requests);
    expect(new Set(rows.map((row) => row.request_id)).size).toBe(requests);
    expect(rows.every((row) => row.cost === FLAT_PRICE_MICRO)).toBe(true);

    // The dead instance may still hold headroom: a survivor releases it once its heartbeat is stale.
    await db.updateTable('instances').set({ heartbeat_at: new Date(Date.now() - 60_000) }).where('id', '!=', survivor.gateway.services.instanceId).execute();
    await survivor.gateway.services.billing.recoverAbandonedHolds();
    const account = await db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
    expect(account.held).toBe(0);
    expect(account.current_credits).toBe(100_000_000 - requests * FLAT_PRICE_MICRO);
    expect((await checkLedger(db, accountId)).ok).toBe(true);
  });
});
