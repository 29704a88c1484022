import type { Kysely, Transaction } from 'kysely';
import type { Account, ApiKey, Database } from '../schema.js';

type Executor = Kysely<Database> | Transaction<Database>;

export function findAccount(db: Executor, id: string): Promise<Account | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listAccounts(db: Executor, options: { limit: number; offset: number }): Promise<Account[]> {
  return db.selectFrom('accounts').selectAll().orderBy('created_at').orderBy('id').limit(options.limit).offset(options.offset).execute();
}

export function findKeyById(db: Executor, id: string): Promise<ApiKey | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
}

export function findKeyByHash(db: Executor, hash: string): Promise<ApiKey | undefined> {
  return db.selectFrom('api_keys').selectAll().where('key_hash', '=', hash).executeTakeFirst();
}

export function listKeys(db: Executor, accountId: string, includeDeleted: boolean): Promise<ApiKey[]> {
  let query = db.selectFrom('api_keys').selectAll().where('account_id', '=', accountId);
  if (!includeDeleted) query = query.where('deleted_at', 'is', null);
  return query.orderBy('created_at').orderBy('id').execute();
}
