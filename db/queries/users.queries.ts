import type { Insertable } from 'kysely';
import type { User, UserSession, UsersTable, UserSessionsTable } from '../schema.js';
import type { Executor } from './executor.js';

export function insertUser(db: Executor, row: Insertable<UsersTable>): Promise<User> {
  return db.insertInto('users').values(row).returningAll().executeTakeFirstOrThrow();
}

export function findUserByEmail(db: Executor, email: string): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

export function findUserById(db: Executor, id: string): Promise<User | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listUsers(db: Executor, filter: { accountId?: string; limit: number; offset: number }): Promise<User[]> {
  let query = db.selectFrom('users').selectAll();
  if (filter.accountId) query = query.where('account_id', '=', filter.accountId);
  return query.orderBy('created_at').orderBy('id').limit(filter.limit).offset(filter.offset).execute();
}

export function updateUserPassword(db: Executor, id: string, passwordHash: string): Promise<User | undefined> {
  return db.updateTable('users').set({ password_hash: passwordHash, updated_at: new Date() }).where('id', '=', id).returningAll().executeTakeFirst();
}

export async function insertSession(db: Executor, row: Insertable<UserSessionsTable>): Promise<void> {
  await db.insertInto('user_sessions').values(row).execute();
}

/** A session that has not expired, with its user. */
export async function findLiveSession(db: Executor, tokenHash: string): Promise<{ session: UserSession; user: User } | undefined> {
  const session = await db.selectFrom('user_sessions').selectAll().where('token_hash', '=', tokenHash).where('expires_at', '>', new Date()).executeTakeFirst();
  if (!session) return undefined;
  const user = await findUserById(db, session.user_id);
  return user ? { session, user } : undefined;
}

export async function deleteSession(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('user_sessions').where('id', '=', id).execute();
}

/** Every session of a user (logout everywhere, a password reset); returns how many went. */
export async function deleteUserSessions(db: Executor, userId: string): Promise<number> {
  const result = await db.deleteFrom('user_sessions').where('user_id', '=', userId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteExpiredSessions(db: Executor): Promise<void> {
  await db.deleteFrom('user_sessions').where('expires_at', '<=', new Date()).execute();
}
