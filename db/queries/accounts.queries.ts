import { sql, type Insertable, type Updateable } from 'kysely';
import type { Account, ApiKey, Database } from '../schema.js';
import type { Executor } from './executor.js';

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

/** Inserts an account row and answers it. */
export function insertAccount(db: Executor, row: Insertable<Database['accounts']>): Promise<Account> {
  return db.insertInto('accounts').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Changes some columns of an account (and its `updated_at`); undefined when there is no such account. */
export function updateAccountColumns(db: Executor, id: string, changes: Updateable<Database['accounts']>): Promise<Account | undefined> {
  return db
    .updateTable('accounts')
    .set({ ...changes, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** The account, locked until the transaction ends. */
export function lockAccount(db: Executor, id: string): Promise<Account | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Adds `delta` micro-credits to one balance column of an account, in the database (no read-modify-write). */
export function addToAccountBalance(db: Executor, id: string, column: 'current_credits' | 'vault_credits', delta: number): Promise<Account> {
  return db
    .updateTable('accounts')
    .set({ [column]: sql`${sql.ref(column)} + ${delta}`, updated_at: new Date() })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** One entry of an account's books. */
export async function insertLedgerEntry(db: Executor, entry: Insertable<Database['ledger']>): Promise<void> {
  await db.insertInto('ledger').values(entry).execute();
}

/** Inserts a key row and answers it. */
export function insertApiKey(db: Executor, row: Insertable<Database['api_keys']>): Promise<ApiKey> {
  return db.insertInto('api_keys').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Changes some columns of a key and answers it. */
export function updateApiKeyColumns(db: Executor, id: string, changes: Updateable<Database['api_keys']>): Promise<ApiKey> {
  return db.updateTable('api_keys').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** What authentication needs of a key, by the hash of the key. */
export function findKeyForAuth(db: Executor, hash: string) {
  return db.selectFrom('api_keys').select(['id', 'account_id', 'enabled', 'deleted_at']).where('key_hash', '=', hash).executeTakeFirst();
}

/** What authentication needs of an account. */
export function findAccountForAuth(db: Executor, id: string) {
  return db.selectFrom('accounts').select(['id', 'plan', 'disabled', 'ip_allowlist']).where('id', '=', id).executeTakeFirst();
}

/** Whether any account exists (the demo account is made only in an empty database). */
export async function anyAccountExists(db: Executor): Promise<boolean> {
  return (await db.selectFrom('accounts').select('id').limit(1).executeTakeFirst()) !== undefined;
}
