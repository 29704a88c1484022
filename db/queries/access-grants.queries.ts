import type { Selectable } from 'kysely';
import type { Database } from '../schema.js';
import type { Executor } from './executor.js';

export type AccessGrantRow = Selectable<Database['access_grants']>;

/** The account's unrevoked grants (expired ones included: expiry is checked at request time). */
export function listCurrentGrants(db: Executor, accountId: string): Promise<Array<Pick<AccessGrantRow, 'family' | 'expires_at'>>> {
  return db.selectFrom('access_grants').select(['family', 'expires_at']).where('account_id', '=', accountId).where('revoked_at', 'is', null).execute();
}

/** The unrevoked grant of an account on a family, locked for the caller's transaction. */
export function findCurrentGrantForUpdate(db: Executor, accountId: string, family: string): Promise<AccessGrantRow | undefined> {
  return db
    .selectFrom('access_grants')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('family', '=', family)
    .where('revoked_at', 'is', null)
    .forUpdate()
    .executeTakeFirst();
}

export function insertGrant(
  db: Executor,
  grant: { id: string; accountId: string; family: string; grantedBy: string; expiresAt: Date | null; note: string | null },
): Promise<AccessGrantRow> {
  return db
    .insertInto('access_grants')
    .values({ id: grant.id, account_id: grant.accountId, family: grant.family, granted_by: grant.grantedBy, expires_at: grant.expiresAt, note: grant.note, revoked_at: null, revoked_by: null, revoke_note: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function markGrantRevoked(db: Executor, id: string, revokedBy: string, note: string | null): Promise<AccessGrantRow> {
  return db
    .updateTable('access_grants')
    .set({ revoked_at: new Date(), revoked_by: revokedBy, revoke_note: note })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface GrantFilter {
  accountId?: string;
  family?: string;
  /** Also revoked and expired grants. */
  includeInactive: boolean;
  now: Date;
  limit: number;
}

/** Grants, newest first. */
export function listGrants(db: Executor, filter: GrantFilter): Promise<AccessGrantRow[]> {
  let query = db.selectFrom('access_grants').selectAll();
  if (filter.accountId !== undefined) query = query.where('account_id', '=', filter.accountId);
  if (filter.family !== undefined) query = query.where('family', '=', filter.family);
  if (!filter.includeInactive) {
    query = query.where('revoked_at', 'is', null).where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', filter.now)]));
  }
  return query.orderBy('granted_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute();
}

/** Whether the account holds any unrevoked grant (the legacy `restricted_access` mirror). */
export async function holdsAnyGrant(db: Executor, accountId: string): Promise<boolean> {
  const row = await db.selectFrom('access_grants').select('id').where('account_id', '=', accountId).where('revoked_at', 'is', null).executeTakeFirst();
  return row !== undefined;
}
