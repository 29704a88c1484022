/**
 * Two gateway instances on one PostgreSQL database (always PostgreSQL): a grant, a revocation
 * or a review action taken through instance A reaches instance B's cached account within one
 * second, after B has cached the account by serving it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import type { Answer, Json } from '../support/http.js';
import { waitFor } from '../support/wait.js';
import { dataOf, trpcMutation, trpcQuery } from '../foundation/http.js';
import { errorCodeOf, FORMATS, send } from './restricted-support.js';

/** The functional bound of SPEC/issue: every instance sees a revocation within one second. */
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

const CHAT = FORMATS[0]!;

function chat(instance: TestGateway, key: string, user = 'Say hello.'): Promise<Answer> {
  return send(instance, key, CHAT, 'mock-restricted', { user }, false);
}

async function adminOnA(procedure: string, input: Json): Promise<Json> {
  return dataOf<Json>(await trpcMutation(a.url, procedure, input, a.adminToken));
}

/** Polls B until it answers `status` with `code`; fails after one second. */
async function expectOnB(key: string, status: number, code: string | null): Promise<void> {
  let last: Answer | undefined;
  try {
    await waitFor(
      async () => {
        last = await chat(b, key);
        return last.status === status && (errorCodeOf(last) ?? null) === code;
      },
      { timeoutMs: PROPAGATION_BOUND_MS, intervalMs: POLL_INTERVAL_MS },
    );
  } catch (error) {
    if (!last) throw error;
    expect.fail(`instance B still answered ${last.status} ${last.text} ${PROPAGATION_BOUND_MS} ms after the change on A (wanted ${status} ${code})`);
  }
}

describe('two instances on one PostgreSQL database', () => {
  it('a revocation on A is seen by B within one second, and a new grant too', async () => {
    const { key, accountId } = await a.createAccountWithKey();
    // B caches the account without a grant.
    expect(errorCodeOf(await chat(b, key))).toBe('ACCESS_NOT_GRANTED');
    await adminOnA('admin.restricted.grants.grant', { accountId, family: 'restricted' });
    await expectOnB(key, 200, null);
    expect((await chat(a, key)).status).toBe(200);
    await adminOnA('admin.restricted.grants.revoke', { accountId, family: 'restricted' });
    await expectOnB(key, 403, 'ACCESS_NOT_GRANTED');
    expect(errorCodeOf(await chat(a, key))).toBe('ACCESS_NOT_GRANTED');
  });

  it('a review resolved on A with revoke_grant, then disable_account, is seen by B within one second', async () => {
    const { key, accountId } = await a.createAccountWithKey({ restrictedAccess: true });
    expect((await chat(b, key)).status).toBe(200);
    // Flagged on B: the review item is shared through the database.
    expect((await chat(b, key, 'I am going to kill you')).status).toBe(200);
    const listed = dataOf<{ items: Json[] }>(await trpcQuery(a.url, 'admin.restricted.review.list', { accountId }, a.adminToken));
    expect(listed.items).toHaveLength(1);
    const id = listed.items[0]!.id as string;
    await adminOnA('admin.restricted.review.resolve', { id, action: 'revoke_grant' });
    await expectOnB(key, 403, 'ACCESS_NOT_GRANTED');
    await adminOnA('admin.restricted.review.resolve', { id, action: 'disable_account' });
    await expectOnB(key, 403, 'ACCOUNT_DISABLED');
  });
});
