/**
 * Two gateway instances on one PostgreSQL database (always PostgreSQL, also in
 * a PGlite run): a change made through instance A's admin API reaches
 * instance B's authentication cache within one second, after B has cached the
 * key by serving it.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer, postJson, type Answer } from '../support/http.js';
import { waitFor } from '../support/wait.js';
import { CHAT_BODY, dataOf, trpcMutation } from './http.js';

const PROPAGATION_BOUND_MS = 1_000;
const POLL_INTERVAL_MS = 50;

let database: TestDatabase;
let a: TestGateway;
let b: TestGateway;

beforeAll(async () => {
  database = await createTestDatabase();
  // One after the other: both run the migrations on the same database.
  a = await startTestGateway({ databaseUrl: database.url });
  b = await startTestGateway({ databaseUrl: database.url });
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  await database?.drop();
});

function chat(instance: TestGateway, key: string): Promise<Answer> {
  return postJson(`${instance.url}/v1/chat/completions`, CHAT_BODY, bearer(key));
}

/** A fresh key, served once by each instance so both hold it in their caches. */
async function keyServedByBoth(): Promise<{ key: string; keyId: string; accountId: string }> {
  const created = await a.createAccountWithKey();
  for (const instance of [a, b]) {
    const answer = await chat(instance, created.key);
    expect(answer.status, `${instance === a ? 'A' : 'B'}: ${answer.text}`).toBe(200);
  }
  return created;
}

/** Polls B every 50 ms until it answers `status` with `code`; fails after `boundMs` (one second unless told). */
async function expectOnB(key: string, status: number, code: string | null, boundMs = PROPAGATION_BOUND_MS): Promise<void> {
  let last: Answer | undefined;
  let requestFailed = false;
  const answersAsWanted = async (): Promise<boolean> => {
    try {
      last = await chat(b, key);
    } catch (error) {
      requestFailed = true;
      throw error;
    }
    const answeredCode = ((last.body.error as { code?: string } | undefined)?.code ?? null) as string | null;
    return last.status === status && answeredCode === code;
  };
  try {
    await waitFor(answersAsWanted, { timeoutMs: boundMs, intervalMs: POLL_INTERVAL_MS });
  } catch (error) {
    // A request that threw fails the test with its own error; the deadline with what B answered.
    if (requestFailed || !last) throw error;
    expect.fail(`instance B still answered ${last.status} ${last.text} ${boundMs} ms after the change on A (wanted ${status} ${code})`);
  }
}

/** Ends the server side of every LISTEN connection of the database, as a PostgreSQL restart or a network cut would. */
async function cutListenerConnections(): Promise<number> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    const result = await client.query<{ ended: boolean }>(
      `SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity
        WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE 'LISTEN%'`,
    );
    return result.rows.filter((row) => row.ended).length;
  } finally {
    await client.end();
  }
}

async function adminOnA(procedure: string, input: Record<string, unknown>): Promise<void> {
  dataOf(await trpcMutation(a.url, procedure, input, a.adminToken));
}

describe('two instances on one PostgreSQL database', () => {
  it('serves a key on both instances', async () => {
    const { key } = await a.createAccountWithKey();
    expect((await chat(b, key)).status).toBe(200);
    expect((await chat(a, key)).status).toBe(200);
  });

  it('refuses a key on B within one second of disabling it on A (and serves it again once re-enabled)', async () => {
    const { key, keyId } = await keyServedByBoth();
    await adminOnA('admin.keys.disable', { key_id: keyId });
    await expectOnB(key, 401, 'INVALID_KEY');
    await adminOnA('admin.keys.enable', { key_id: keyId });
    await expectOnB(key, 200, null);
  });

  it('refuses a key on B within one second of deleting it on A', async () => {
    const { key, keyId } = await keyServedByBoth();
    await adminOnA('admin.keys.delete', { key_id: keyId });
    await expectOnB(key, 401, 'INVALID_KEY');
  });

  it('refuses an account on B within one second of disabling it on A (and serves it again once re-enabled)', async () => {
    const { key, accountId } = await keyServedByBoth();
    await adminOnA('admin.accounts.disable', { account_id: accountId });
    await expectOnB(key, 403, 'ACCOUNT_DISABLED');
    await adminOnA('admin.accounts.enable', { account_id: accountId });
    await expectOnB(key, 200, null);
  });

  it('applies an allowlist set on A to B within one second', async () => {
    const { key, accountId } = await keyServedByBoth();
    await adminOnA('admin.accounts.setIpAllowlist', { account_id: accountId, ip_allowlist: ['192.0.2.0/24'] });
    await expectOnB(key, 403, 'IP_ACCESS_DENIED');
  });

  it('still learns of a change made while its notification connection was down', async () => {
    const { key, keyId } = await keyServedByBoth();
    expect(await cutListenerConnections()).toBeGreaterThanOrEqual(2);
    // The notification of this change goes nowhere: nobody is listening right now.
    await adminOnA('admin.keys.disable', { key_id: keyId });
    // Not a timing claim: a generous deadline for B to reconnect and drop what it may have missed.
    await expectOnB(key, 401, 'INVALID_KEY', 10_000);
    // And notifications flow again after the reconnect.
    const later = await keyServedByBoth();
    await adminOnA('admin.keys.delete', { key_id: later.keyId });
    await expectOnB(later.key, 401, 'INVALID_KEY');
  });
});
