/**
 * Access grants to restricted model families: the request-time check, and what an operator
 * does with them (grant, revoke, list). Every change announces the account on the cache
 * channel, so each instance reloads that account's grants before its next request.
 */
import type { Kysely } from 'kysely';
import { notify } from '../../db/client.js';
import {
  findCurrentGrantForUpdate,
  holdsAnyGrant,
  insertGrant,
  listGrants,
  markGrantRevoked,
  type AccessGrantRow,
} from '../../db/queries/access-grants.queries.js';
import { findAccount, lockAccount, updateAccountColumns } from '../../db/queries/accounts.queries.js';
import type { Database } from '../../db/schema.js';
import { newId } from '../auth/api-keys.js';
import { CACHE_CHANNEL, type CacheInvalidation, type CachedAccount } from '../auth/auth-cache.js';
import { GatewayError } from '../errors.js';
import type { RestrictedFamilies } from './families.js';
import type { Executor } from '../../db/queries/executor.js';

/** Whether the account holds an unrevoked, unexpired grant on `family` at `now` (epoch ms). */
export function hasLiveGrant(account: Pick<CachedAccount, 'grants'>, family: string, now: number): boolean {
  if (!account.grants.has(family)) return false;
  const expiresAt = account.grants.get(family);
  return expiresAt === null || expiresAt === undefined || expiresAt > now;
}

/** A grant as admin procedures show it. */
export interface GrantView {
  id: string;
  accountId: string;
  family: string;
  grantedBy: string;
  grantedAt: string;
  expiresAt: string | null;
  note: string | null;
  revokedAt: string | null;
  revokedBy: string | null;
  revokeNote: string | null;
  /** Unrevoked and unexpired now. */
  active: boolean;
}

const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString());

export function toGrantView(row: AccessGrantRow, now = Date.now()): GrantView {
  const expiresAt = row.expires_at === null ? null : new Date(row.expires_at).getTime();
  return {
    id: row.id,
    accountId: row.account_id,
    family: row.family,
    grantedBy: row.granted_by,
    grantedAt: iso(row.granted_at)!,
    expiresAt: iso(row.expires_at),
    note: row.note,
    revokedAt: iso(row.revoked_at),
    revokedBy: row.revoked_by,
    revokeNote: row.revoke_note,
    active: row.revoked_at === null && (expiresAt === null || expiresAt > now),
  };
}

export async function announceAccount(db: Kysely<Database>, accountId: string): Promise<void> {
  const message: CacheInvalidation = { type: 'account', id: accountId };
  await notify(db, CACHE_CHANNEL, JSON.stringify(message));
}

/** Keeps the legacy account flag in step with the grants (it no longer gives access). */
async function mirrorLegacyFlag(db: Executor, accountId: string): Promise<void> {
  await updateAccountColumns(db, accountId, { restricted_access: await holdsAnyGrant(db, accountId) });
}

export interface GrantInput {
  accountId: string;
  family: string;
  expiresAt?: Date | null;
  note?: string | null;
}

/**
 * Grants `family` to the account, inside `db` (a transaction or the database). An unrevoked
 * grant on the same family (expired or not) is superseded: revoked with a note, so the history
 * keeps every grant. The caller announces the account after its transaction commits.
 */
export async function insertAccessGrant(db: Executor, input: GrantInput, actor: string, now = new Date()): Promise<AccessGrantRow> {
  const account = await lockAccount(db, input.accountId);
  if (!account) throw new GatewayError('NOT_FOUND', `No account "${input.accountId}".`, { param: 'accountId' });
  if (input.expiresAt && input.expiresAt.getTime() <= now.getTime()) {
    throw new GatewayError('INVALID_REQUEST', 'expiresAt must be in the future.', { param: 'expiresAt' });
  }
  const id = newId('grant');
  const previous = await findCurrentGrantForUpdate(db, input.accountId, input.family);
  if (previous) await markGrantRevoked(db, previous.id, actor, `superseded by ${id}`);
  const grant = await insertGrant(db, { id, accountId: input.accountId, family: input.family, grantedBy: actor, expiresAt: input.expiresAt ?? null, note: input.note ?? null });
  await mirrorLegacyFlag(db, input.accountId);
  return grant;
}

/** Revokes the account's unrevoked grant on `family` inside `db`; undefined when there is none. */
export async function revokeAccessGrant(db: Executor, accountId: string, family: string, actor: string, note: string | null): Promise<AccessGrantRow | undefined> {
  const current = await findCurrentGrantForUpdate(db, accountId, family);
  if (!current) return undefined;
  const revoked = await markGrantRevoked(db, current.id, actor, note);
  await mirrorLegacyFlag(db, accountId);
  return revoked;
}

/** `admin.restricted.grants.grant`: only families the catalog marks restricted can be granted. */
export async function grantAccess(db: Kysely<Database>, families: RestrictedFamilies, input: GrantInput, actor: string): Promise<GrantView> {
  if (!families.has(input.family)) {
    throw new GatewayError('INVALID_REQUEST', `"${input.family}" is not a restricted family of the catalog (known: ${families.names().join(', ') || 'none'}).`, { param: 'family' });
  }
  const grant = await db.transaction().execute((trx) => insertAccessGrant(trx, input, actor));
  await announceAccount(db, input.accountId);
  return toGrantView(grant);
}

/** `admin.restricted.grants.revoke`: NOT_FOUND when the account holds no unrevoked grant on the family. */
export async function revokeAccess(db: Kysely<Database>, input: { accountId: string; family: string; note?: string | null }, actor: string): Promise<GrantView> {
  if (!(await findAccount(db, input.accountId))) throw new GatewayError('NOT_FOUND', `No account "${input.accountId}".`, { param: 'accountId' });
  const revoked = await db.transaction().execute((trx) => revokeAccessGrant(trx, input.accountId, input.family, actor, input.note ?? null));
  if (!revoked) throw new GatewayError('NOT_FOUND', `Account "${input.accountId}" holds no grant on "${input.family}".`, { param: 'family' });
  await announceAccount(db, input.accountId);
  return toGrantView(revoked);
}

export async function listGrantViews(
  db: Kysely<Database>,
  filter: { accountId?: string; family?: string; includeInactive?: boolean; limit?: number },
): Promise<GrantView[]> {
  const now = new Date();
  const rows = await listGrants(db, { accountId: filter.accountId, family: filter.family, includeInactive: filter.includeInactive ?? false, now, limit: filter.limit ?? 500 });
  return rows.map((row) => toGrantView(row, now.getTime()));
}
