/**
 * The admin procedures over HTTP (`/trpc`, as the CLI's tRPC client calls
 * them): accounts and keys with the admin token, and nothing without it. A
 * key record never carries the key hash, and the full key appears only in the
 * answer that creates it.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { getJson, postJson } from '../support/http.js';
import { dataOf, expectTrpcError, trpcMutation, trpcQuery, type TrpcAnswer } from './http.js';

interface AccountView {
  id: string;
  name: string;
  plan: string;
  disabled: boolean;
  current_credits: number;
  vault_credits: number;
  held_credits: number;
  daily_limit: number | null;
  credits_used: number;
  ip_allowlist: string[];
  restricted_access: boolean;
  reset_cycle_days: number;
  last_reset: string;
  created_at: string;
}

interface KeyView {
  id: string;
  account_id: string;
  name: string;
  display: string;
  enabled: boolean;
  created_at: string;
  last_used_at: string | null;
  deleted_at: string | null;
}

const KEY_VIEW_FIELDS = ['account_id', 'created_at', 'deleted_at', 'display', 'enabled', 'id', 'last_used_at', 'name'];

let gateway: TestGateway;
/** Every full key this file created, to check no later answer leaks one. */
const fullKeys: string[] = [];

beforeAll(async () => {
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
});

function mutate(path: string, input: unknown): Promise<TrpcAnswer> {
  return trpcMutation(gateway.url, path, input, gateway.adminToken);
}

function query(path: string, input: unknown): Promise<TrpcAnswer> {
  return trpcQuery(gateway.url, path, input, gateway.adminToken);
}

async function createAccount(input: Record<string, unknown> = {}): Promise<AccountView> {
  return dataOf<AccountView>(await mutate('admin.accounts.create', { name: 'admin test', ...input }));
}

async function createKey(accountId: string, name?: string): Promise<KeyView & { key: string }> {
  const created = dataOf<KeyView & { key: string }>(await mutate('admin.keys.create', { account_id: accountId, ...(name ? { name } : {}) }));
  fullKeys.push(created.key);
  return created;
}

/** A key record as the admin API shows it after creation: no key, no hash. */
function expectSafeKeyRecord(answer: TrpcAnswer): void {
  for (const key of fullKeys) {
    expect(answer.text).not.toContain(key);
    expect(answer.text).not.toContain(createHash('sha256').update(key).digest('hex'));
  }
  expect(answer.text).not.toContain('key_hash');
  const records = Array.isArray(answer.data) ? (answer.data as object[]) : [answer.data as object];
  for (const record of records) expect(Object.keys(record).sort()).toEqual(KEY_VIEW_FIELDS);
}

describe('accounts', () => {
  it('creates an account with defaults and with every option', async () => {
    const plain = await createAccount({ name: 'plain' });
    expect(plain.id).toMatch(/^acct_/);
    expect(plain).toMatchObject({
      name: 'plain',
      plan: 'pro',
      disabled: false,
      current_credits: 0,
      vault_credits: 0,
      held_credits: 0,
      daily_limit: null,
      credits_used: 0,
      ip_allowlist: [],
      restricted_access: false,
      reset_cycle_days: 1,
    });
    expect(Number.isNaN(Date.parse(plain.created_at))).toBe(false);

    const full = await createAccount({
      name: 'full',
      plan: 'free',
      credits: 12.5,
      vault_credits: 3.25,
      daily_limit: 2,
      restricted_access: true,
      reset_cycle_days: 30,
      ip_allowlist: ['203.0.113.7', '2001:db8::/32'],
    });
    expect(full).toMatchObject({
      name: 'full',
      plan: 'free',
      current_credits: 12.5,
      vault_credits: 3.25,
      daily_limit: 2,
      restricted_access: true,
      reset_cycle_days: 30,
      ip_allowlist: ['203.0.113.7', '2001:db8::/32'],
    });
  });

  it('refuses invalid input with INVALID_REQUEST naming the field', async () => {
    const missingName = await mutate('admin.accounts.create', { credits: 1 });
    expect(expectTrpcError(missingName, 400, 'INVALID_REQUEST').message).toMatch(/name/);
    const negative = await mutate('admin.accounts.create', { name: 'n', credits: -1 });
    expect(expectTrpcError(negative, 400, 'INVALID_REQUEST').message).toMatch(/credits/);
    const badAllowlist = await mutate('admin.accounts.create', { name: 'n', ip_allowlist: ['10.0.0.300'] });
    expect(expectTrpcError(badAllowlist, 400, 'INVALID_REQUEST').message).toContain('10.0.0.300');
  });

  it('lists accounts and gets one', async () => {
    const account = await createAccount({ name: 'listed' });
    const listed = dataOf<AccountView[]>(await query('admin.accounts.list', {}));
    expect(listed.map((entry) => entry.id)).toContain(account.id);
    const page = dataOf<AccountView[]>(await query('admin.accounts.list', { limit: 1 }));
    expect(page).toHaveLength(1);
    const got = dataOf<AccountView>(await query('admin.accounts.get', { account_id: account.id }));
    expect(got).toEqual(account);
  });

  it('answers NOT_FOUND for an unknown account', async () => {
    expectTrpcError(await query('admin.accounts.get', { account_id: 'acct_missing' }), 404, 'NOT_FOUND');
    expectTrpcError(await mutate('admin.accounts.disable', { account_id: 'acct_missing' }), 404, 'NOT_FOUND');
    expectTrpcError(await mutate('admin.accounts.adjustCredits', { account_id: 'acct_missing', amount: 1 }), 404, 'NOT_FOUND');
  });

  it('sets the plan', async () => {
    const account = await createAccount();
    const updated = dataOf<AccountView>(await mutate('admin.accounts.setPlan', { account_id: account.id, plan: 'free' }));
    expect(updated.plan).toBe('free');
    expect(dataOf<AccountView>(await query('admin.accounts.get', { account_id: account.id })).plan).toBe('free');
  });

  it('disables and enables an account', async () => {
    const account = await createAccount();
    expect(dataOf<AccountView>(await mutate('admin.accounts.disable', { account_id: account.id })).disabled).toBe(true);
    expect(dataOf<AccountView>(await query('admin.accounts.get', { account_id: account.id })).disabled).toBe(true);
    expect(dataOf<AccountView>(await mutate('admin.accounts.enable', { account_id: account.id })).disabled).toBe(false);
  });

  it('adjusts credits up and down, on either balance', async () => {
    const account = await createAccount({ credits: 5 });
    const topped = dataOf<AccountView>(await mutate('admin.accounts.adjustCredits', { account_id: account.id, amount: 2.5, note: 'top-up' }));
    expect(topped.current_credits).toBe(7.5);
    const lowered = dataOf<AccountView>(await mutate('admin.accounts.adjustCredits', { account_id: account.id, amount: -7.5 }));
    expect(lowered.current_credits).toBe(0);
    const vault = dataOf<AccountView>(await mutate('admin.accounts.adjustCredits', { account_id: account.id, amount: 1.000001, balance: 'vault' }));
    expect(vault).toMatchObject({ current_credits: 0, vault_credits: 1.000001 });
  });

  it('refuses a negative adjustment that would go below zero, and leaves the balance alone', async () => {
    const account = await createAccount({ credits: 5 });
    const refused = await mutate('admin.accounts.adjustCredits', { account_id: account.id, amount: -5.000001 });
    expect(expectTrpcError(refused, 400, 'INVALID_REQUEST').message).toMatch(/negative/);
    const vaultRefused = await mutate('admin.accounts.adjustCredits', { account_id: account.id, amount: -1, balance: 'vault' });
    expectTrpcError(vaultRefused, 400, 'INVALID_REQUEST');
    const after = dataOf<AccountView>(await query('admin.accounts.get', { account_id: account.id }));
    expect(after).toMatchObject({ current_credits: 5, vault_credits: 0 });
  });

  it('sets, replaces and clears the IP allowlist', async () => {
    const account = await createAccount();
    const set = dataOf<AccountView>(await mutate('admin.accounts.setIpAllowlist', { account_id: account.id, ip_allowlist: ['203.0.113.7', '10.0.0.0/8', '::1', '2001:db8::/32'] }));
    expect(set.ip_allowlist).toEqual(['203.0.113.7', '10.0.0.0/8', '::1', '2001:db8::/32']);
    const cleared = dataOf<AccountView>(await mutate('admin.accounts.setIpAllowlist', { account_id: account.id, ip_allowlist: [] }));
    expect(cleared.ip_allowlist).toEqual([]);
  });

  it('refuses an invalid allowlist entry with an error naming it, and keeps the old list', async () => {
    const account = await createAccount({ ip_allowlist: ['198.51.100.1'] });
    for (const entry of ['not-an-ip', '10.0.0.0/33', '2001:db8::/129', '10.0.0.1/8/1', '10.0.0.0/abc']) {
      const refused = await mutate('admin.accounts.setIpAllowlist', { account_id: account.id, ip_allowlist: ['203.0.113.7', entry] });
      expect(expectTrpcError(refused, 400, 'INVALID_REQUEST').message).toContain(entry);
    }
    expect(dataOf<AccountView>(await query('admin.accounts.get', { account_id: account.id })).ip_allowlist).toEqual(['198.51.100.1']);
  });
});

describe('keys', () => {
  it('creates a key: the full key once, a display form, no hash', async () => {
    const account = await createAccount();
    const answer = await mutate('admin.keys.create', { account_id: account.id, name: 'first' });
    const created = dataOf<KeyView & { key: string }>(answer);
    fullKeys.push(created.key);
    expect(created.key).toMatch(/^sk-umg-[0-9A-Za-z]{40,}$/);
    expect(created).toMatchObject({ account_id: account.id, name: 'first', enabled: true, deleted_at: null, last_used_at: null, display: `sk-umg-…${created.key.slice(-4)}` });
    expect(Object.keys(created).sort()).toEqual([...KEY_VIEW_FIELDS, 'key'].sort());
    expect(answer.text).not.toContain(createHash('sha256').update(created.key).digest('hex'));
    const second = await createKey(account.id);
    expect(second.name).toBe('default');
    expect(second.key).not.toBe(created.key);
  });

  it('refuses a key for an unknown account', async () => {
    expectTrpcError(await mutate('admin.keys.create', { account_id: 'acct_missing' }), 404, 'NOT_FOUND');
    expectTrpcError(await query('admin.keys.list', { account_id: 'acct_missing' }), 404, 'NOT_FOUND');
  });

  it('lists, renames, disables, enables and deletes keys without ever showing a key or its hash', async () => {
    const account = await createAccount();
    const kept = await createKey(account.id, 'kept');
    const doomed = await createKey(account.id, 'doomed');

    const listed = await query('admin.keys.list', { account_id: account.id });
    expectSafeKeyRecord(listed);
    expect((listed.data as KeyView[]).map((key) => key.id).sort()).toEqual([kept.id, doomed.id].sort());

    const renamed = await mutate('admin.keys.rename', { key_id: kept.id, name: 'renamed' });
    expectSafeKeyRecord(renamed);
    expect((renamed.data as KeyView).name).toBe('renamed');

    const disabled = await mutate('admin.keys.disable', { key_id: kept.id });
    expectSafeKeyRecord(disabled);
    expect((disabled.data as KeyView).enabled).toBe(false);

    const enabled = await mutate('admin.keys.enable', { key_id: kept.id });
    expectSafeKeyRecord(enabled);
    expect((enabled.data as KeyView).enabled).toBe(true);

    const deleted = await mutate('admin.keys.delete', { key_id: doomed.id });
    expectSafeKeyRecord(deleted);
    expect((deleted.data as KeyView).deleted_at).not.toBeNull();
    expect((deleted.data as KeyView).enabled).toBe(false);

    const after = await query('admin.keys.list', { account_id: account.id });
    expectSafeKeyRecord(after);
    expect((after.data as KeyView[]).map((key) => key.id)).toEqual([kept.id]);
    const withDeleted = await query('admin.keys.list', { account_id: account.id, include_deleted: true });
    expectSafeKeyRecord(withDeleted);
    expect((withDeleted.data as KeyView[]).map((key) => key.id).sort()).toEqual([kept.id, doomed.id].sort());
  });

  it('answers NOT_FOUND for a deleted or unknown key', async () => {
    const account = await createAccount();
    const key = await createKey(account.id);
    dataOf(await mutate('admin.keys.delete', { key_id: key.id }));
    for (const procedure of ['delete', 'enable', 'disable']) {
      expectTrpcError(await mutate(`admin.keys.${procedure}`, { key_id: key.id }), 404, 'NOT_FOUND');
    }
    expectTrpcError(await mutate('admin.keys.rename', { key_id: 'key_missing', name: 'x' }), 404, 'NOT_FOUND');
  });
});

describe('billing', () => {
  it('checks the ledger and shows its amounts in credits, as `billing:check-ledger` prints them', async () => {
    const account = await createAccount({ credits: 3, vault_credits: 0.000005 });
    const check = dataOf<{ ok: boolean; accounts: Array<Record<string, unknown>> }>(await query('admin.billing.checkLedger', { account_id: account.id }));
    expect(check).toEqual({
      ok: true,
      accounts: [
        {
          account_id: account.id,
          current_credits: 3,
          vault_credits: 0.000005,
          held: 0,
          ledger_current: 3,
          ledger_vault: 0.000005,
          holds_total: 0,
          usage_cost: 0,
          ledger_charges: 0,
          ledger_uncharged: 0,
          ok: true,
        },
      ],
    });
  });
});

describe('without the admin token', () => {
  const procedures: Array<{ kind: 'query' | 'mutation'; path: string; input: unknown }> = [
    { kind: 'mutation', path: 'admin.accounts.create', input: { name: 'intruder' } },
    { kind: 'query', path: 'admin.accounts.list', input: {} },
    { kind: 'query', path: 'admin.accounts.get', input: { account_id: 'acct_x' } },
    { kind: 'mutation', path: 'admin.accounts.setPlan', input: { account_id: 'acct_x', plan: 'free' } },
    { kind: 'mutation', path: 'admin.accounts.disable', input: { account_id: 'acct_x' } },
    { kind: 'mutation', path: 'admin.accounts.enable', input: { account_id: 'acct_x' } },
    { kind: 'mutation', path: 'admin.accounts.adjustCredits', input: { account_id: 'acct_x', amount: 100 } },
    { kind: 'mutation', path: 'admin.accounts.setIpAllowlist', input: { account_id: 'acct_x', ip_allowlist: [] } },
    { kind: 'mutation', path: 'admin.keys.create', input: { account_id: 'acct_x' } },
    { kind: 'query', path: 'admin.keys.list', input: { account_id: 'acct_x' } },
    { kind: 'mutation', path: 'admin.keys.rename', input: { key_id: 'key_x', name: 'x' } },
    { kind: 'mutation', path: 'admin.keys.enable', input: { key_id: 'key_x' } },
    { kind: 'mutation', path: 'admin.keys.disable', input: { key_id: 'key_x' } },
    { kind: 'mutation', path: 'admin.keys.delete', input: { key_id: 'key_x' } },
  ];

  function call(procedure: (typeof procedures)[number], token: string | undefined): Promise<TrpcAnswer> {
    return procedure.kind === 'query' ? trpcQuery(gateway.url, procedure.path, procedure.input, token) : trpcMutation(gateway.url, procedure.path, procedure.input, token);
  }

  it('answers HTTP 401 UNAUTHORIZED_ADMIN for every admin procedure called without a token', async () => {
    for (const procedure of procedures) {
      const answer = await call(procedure, undefined);
      expect(answer.status, `${procedure.path}: ${answer.text.slice(0, 300)}`).toBe(401);
      expectTrpcError(answer, 401, 'UNAUTHORIZED_ADMIN');
    }
  });

  it('answers 401 for a wrong token and for a customer API key', async () => {
    const { key } = await gateway.createAccountWithKey();
    for (const token of ['wrong-token', `${gateway.adminToken}x`, key]) {
      for (const procedure of procedures) {
        const answer = await call(procedure, token);
        expectTrpcError(answer, 401, 'UNAUTHORIZED_ADMIN');
      }
    }
    const accounts = dataOf<AccountView[]>(await query('admin.accounts.list', { limit: 1000 }));
    expect(accounts.map((account) => account.name)).not.toContain('intruder');
  });
});

describe('HTTP status of /trpc answers', () => {
  it('is the procedure outcome: 200 on success, 400 for bad input, 404 for a missing record, 401 without the token', async () => {
    const ok = await query('admin.accounts.list', {});
    expect(ok.status, ok.text.slice(0, 300)).toBe(200);
    const created = await mutate('admin.accounts.create', { name: 'status' });
    expect(created.status, created.text.slice(0, 300)).toBe(200);
    const bad = await mutate('admin.accounts.create', {});
    expect(bad.status, bad.text.slice(0, 300)).toBe(400);
    const missing = await query('admin.accounts.get', { account_id: 'acct_missing' });
    expect(missing.status, missing.text.slice(0, 300)).toBe(404);
    const anonymous = await trpcQuery(gateway.url, 'admin.accounts.list', {});
    expect(anonymous.status, anonymous.text.slice(0, 300)).toBe(401);
  });

  it('answers 404 for an unknown procedure, and carries x-request-id', async () => {
    const answer = await getJson(`${gateway.url}/trpc/admin.nothing.here`);
    expect(answer.status, answer.text).toBe(404);
    expect(answer.headers.get('x-request-id')).toBeTruthy();
    // The error shape the README documents; tRPC's own refusal has no gateway code.
    expect(answer.body.error).toMatchObject({ code: -32004, data: { code: 'NOT_FOUND', httpStatus: 404, gatewayCode: null } });
    const posted = await postJson(`${gateway.url}/trpc/admin.accounts.list`, {}, { authorization: `Bearer ${gateway.adminToken}` });
    expect(posted.status).toBeGreaterThanOrEqual(400);
    expect(posted.status).toBeLessThan(500);
  });
});
