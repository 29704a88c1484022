import type { Kysely } from 'kysely';
import type { Account, ApiKey, Database } from '../../db/schema.js';
import { notify } from '../../db/client.js';
import {
  addToAccountBalance,
  findAccount,
  findKeyById,
  insertAccount,
  insertApiKey,
  insertLedgerEntry,
  listKeys,
  lockAccount,
  updateAccountColumns,
  updateApiKeyColumns,
} from '../../db/queries/accounts.queries.js';
import { describeKey, generateApiKey, hashApiKey, newId } from '../auth/api-keys.js';
import { CACHE_CHANNEL, type CacheInvalidation } from '../auth/auth-cache.js';
import { validateAllowlistEntry } from '../auth/ip-allowlist.js';
import { creditsToMicro, microToCredits } from '../billing/money.js';
import { GatewayError } from '../errors.js';
import { LEGACY_RESTRICTED_FAMILY } from '../catalog/catalog.schema.js';
import { insertAccessGrant, revokeAccessGrant } from '../restricted/grants.js';

/** Who a grant made through the legacy `restricted_access` account flag is recorded as given by. */
const LEGACY_FLAG_ACTOR = 'restricted_access flag';

/**
 * Accounts and keys, as the operator manages them. Every change announces
 * itself on the cache channel so all instances drop stale entries at once.
 */

export interface AccountView {
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

export interface KeyView {
  id: string;
  account_id: string;
  name: string;
  display: string;
  enabled: boolean;
  created_at: string;
  last_used_at: string | null;
  deleted_at: string | null;
}

export function toAccountView(account: Account): AccountView {
  return {
    id: account.id,
    name: account.name,
    plan: account.plan,
    disabled: account.disabled,
    current_credits: microToCredits(account.current_credits),
    vault_credits: microToCredits(account.vault_credits),
    held_credits: microToCredits(account.held),
    daily_limit: account.daily_limit === null ? null : microToCredits(account.daily_limit),
    credits_used: microToCredits(account.cycle_spent),
    ip_allowlist: account.ip_allowlist,
    restricted_access: account.restricted_access,
    reset_cycle_days: account.reset_cycle_days,
    last_reset: new Date(account.last_reset).toISOString(),
    created_at: new Date(account.created_at).toISOString(),
  };
}

export function toKeyView(key: ApiKey): KeyView {
  return {
    id: key.id,
    account_id: key.account_id,
    name: key.name,
    display: `${key.display_prefix}…${key.last_four}`,
    enabled: key.enabled,
    created_at: new Date(key.created_at).toISOString(),
    last_used_at: key.last_used_at ? new Date(key.last_used_at).toISOString() : null,
    deleted_at: key.deleted_at ? new Date(key.deleted_at).toISOString() : null,
  };
}

async function announce(db: Kysely<Database>, message: CacheInvalidation): Promise<void> {
  await notify(db, CACHE_CHANNEL, JSON.stringify(message));
}

export interface CreateAccountInput {
  id?: string;
  name: string;
  plan: string;
  credits?: number;
  vaultCredits?: number;
  dailyLimit?: number | null;
  restrictedAccess?: boolean;
  resetCycleDays?: number;
  ipAllowlist?: string[];
}

/**
 * Plans are the keys of RATE_LIMITS (`free` and `pro` always, and those it
 * adds): an account is never given a plan the gateway has no limit for.
 */
export function requireKnownPlan(plan: string, rateLimits: Readonly<Record<string, number>>): void {
  if (Object.hasOwn(rateLimits, plan)) return;
  const known = Object.keys(rateLimits).map((name) => `"${name}"`).join(', ');
  throw new GatewayError('INVALID_REQUEST', `Unknown plan "${plan}": the plans are ${known} (RATE_LIMITS adds more).`, { param: 'plan' });
}

/** Accounts whose plan is no longer in RATE_LIMITS (they get the pro limit): said at start, not silently. */
export async function findAccountsOnUnknownPlans(db: Kysely<Database>, rateLimits: Readonly<Record<string, number>>): Promise<Array<{ plan: string; accounts: number }>> {
  const rows = await db.selectFrom('accounts').select(['plan', db.fn.countAll<number>().as('accounts')]).groupBy('plan').execute();
  return rows.filter((row) => !Object.hasOwn(rateLimits, row.plan)).map((row) => ({ plan: row.plan, accounts: Number(row.accounts) }));
}

function checkAllowlist(entries: string[]): void {
  entries.forEach((entry, index) => {
    const problem = validateAllowlistEntry(entry);
    if (problem) throw new GatewayError('INVALID_REQUEST', problem, { param: `ip_allowlist[${index}]` });
  });
}

export async function createAccount(db: Kysely<Database>, input: CreateAccountInput): Promise<Account> {
  const current = creditsToMicro(input.credits ?? 0);
  const vault = creditsToMicro(input.vaultCredits ?? 0);
  checkAllowlist(input.ipAllowlist ?? []);
  const id = input.id ?? newId('acct');
  return db.transaction().execute(async (trx) => {
    const account = await insertAccount(trx, {
      id,
      name: input.name,
      plan: input.plan,
      current_credits: current,
      vault_credits: vault,
      daily_limit: input.dailyLimit == null ? null : creditsToMicro(input.dailyLimit),
      restricted_access: input.restrictedAccess ?? false,
      reset_cycle_days: input.resetCycleDays ?? 1,
      ip_allowlist: JSON.stringify(input.ipAllowlist ?? []),
      last_reset: new Date(),
    });
    await insertLedgerEntry(trx, { account_id: id, kind: 'opening', current_delta: current, vault_delta: vault, note: 'account created' });
    // The legacy flag is a shorthand for a grant on the legacy restricted family: access comes from grants.
    if (input.restrictedAccess === true) await insertAccessGrant(trx, { accountId: id, family: LEGACY_RESTRICTED_FAMILY }, LEGACY_FLAG_ACTOR);
    return account;
  });
}

export async function requireAccount(db: Kysely<Database>, id: string): Promise<Account> {
  const account = await findAccount(db, id);
  if (!account) throw new GatewayError('NOT_FOUND', `No account "${id}".`, { param: 'account_id' });
  return account;
}

export async function updateAccount(
  db: Kysely<Database>,
  id: string,
  changes: { plan?: string; disabled?: boolean; ipAllowlist?: string[]; restrictedAccess?: boolean; dailyLimit?: number | null; resetCycleDays?: number; name?: string },
): Promise<Account> {
  if (changes.ipAllowlist) checkAllowlist(changes.ipAllowlist);
  const account = await updateAccountColumns(db, id, {
    ...(changes.plan !== undefined ? { plan: changes.plan } : {}),
    ...(changes.name !== undefined ? { name: changes.name } : {}),
    ...(changes.disabled !== undefined ? { disabled: changes.disabled } : {}),
    ...(changes.restrictedAccess !== undefined ? { restricted_access: changes.restrictedAccess } : {}),
    ...(changes.resetCycleDays !== undefined ? { reset_cycle_days: changes.resetCycleDays } : {}),
    ...(changes.dailyLimit !== undefined ? { daily_limit: changes.dailyLimit === null ? null : creditsToMicro(changes.dailyLimit) } : {}),
    ...(changes.ipAllowlist !== undefined ? { ip_allowlist: JSON.stringify(changes.ipAllowlist) } : {}),
  });
  if (!account) throw new GatewayError('NOT_FOUND', `No account "${id}".`, { param: 'account_id' });
  if (changes.restrictedAccess !== undefined) {
    // The legacy flag grants or revokes the legacy restricted family (see createAccount).
    await db.transaction().execute(async (trx) => {
      if (changes.restrictedAccess) await insertAccessGrant(trx, { accountId: id, family: LEGACY_RESTRICTED_FAMILY }, LEGACY_FLAG_ACTOR);
      else await revokeAccessGrant(trx, id, LEGACY_RESTRICTED_FAMILY, LEGACY_FLAG_ACTOR, null);
    });
    await announce(db, { type: 'account', id });
    return (await findAccount(db, id))!;
  }
  await announce(db, { type: 'account', id });
  return account;
}

/** Adds (or with a negative amount removes) credits, with its ledger entry, in one transaction. */
export async function adjustCredits(
  db: Kysely<Database>,
  id: string,
  input: { amount: number; balance: 'current' | 'vault'; note?: string },
): Promise<Account> {
  const delta = creditsToMicro(input.amount);
  return db.transaction().execute(async (trx) => {
    const account = await lockAccount(trx, id);
    if (!account) throw new GatewayError('NOT_FOUND', `No account "${id}".`, { param: 'account_id' });
    const column = input.balance === 'vault' ? 'vault_credits' : 'current_credits';
    const next = account[column] + delta;
    // Credits already held for requests in flight cannot be taken away.
    const available = account.current_credits + account.vault_credits - account.held;
    if (next < 0 || (delta < 0 && available + delta < 0)) {
      throw new GatewayError('INVALID_REQUEST', 'The adjustment would make the balance negative.', { param: 'amount' });
    }
    // Past a safe integer of micro-credits the balance could no longer be counted exactly.
    if (!Number.isSafeInteger(next)) throw new GatewayError('INVALID_REQUEST', 'The adjustment would take the balance past the largest amount.', { param: 'amount' });
    const updated = await addToAccountBalance(trx, id, column, delta);
    await insertLedgerEntry(trx, {
      account_id: id,
      kind: delta >= 0 ? 'topup' : 'adjustment',
      current_delta: input.balance === 'current' ? delta : 0,
      vault_delta: input.balance === 'vault' ? delta : 0,
      note: input.note ?? null,
    });
    return updated;
  });
}

/** Creates a key; the only time the full key exists outside the client. */
export async function createKey(
  db: Kysely<Database>,
  accountId: string,
  name: string,
  presetKey?: string,
): Promise<{ key: string; record: ApiKey }> {
  await requireAccount(db, accountId);
  const key = presetKey ?? generateApiKey();
  const hash = hashApiKey(key);
  const { displayPrefix, lastFour } = describeKey(key);
  const record = await insertApiKey(db, { id: newId('key'), account_id: accountId, name, key_hash: hash, display_prefix: displayPrefix, last_four: lastFour, last_used_at: null, deleted_at: null });
  await announce(db, { type: 'key', hash });
  return { key, record };
}

export async function updateKey(
  db: Kysely<Database>,
  id: string,
  changes: { name?: string; enabled?: boolean; deleted?: true },
): Promise<ApiKey> {
  const existing = await findKeyById(db, id);
  if (!existing || existing.deleted_at) throw new GatewayError('NOT_FOUND', `No key "${id}".`, { param: 'key_id' });
  const record = await updateApiKeyColumns(db, id, {
    ...(changes.name !== undefined ? { name: changes.name } : {}),
    ...(changes.enabled !== undefined ? { enabled: changes.enabled } : {}),
    ...(changes.deleted ? { deleted_at: new Date(), enabled: false } : {}),
  });
  await announce(db, { type: 'key', hash: existing.key_hash });
  return record;
}

export { listKeys };
