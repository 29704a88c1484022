import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, User } from '../../db/schema.js';
import { deleteUserSessions, findUserByEmail, findUserById, insertUser, listUsers as listUserRows, updateUserPassword } from '../../db/queries/users.queries.js';
import { newId } from '../auth/api-keys.js';
import { requireAccount } from '../accounts/accounts.service.js';
import { GatewayError } from '../errors.js';
import { hashPassword, MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './passwords.js';

/** Dashboard users, as the operator (CLI) manages them. No view ever carries the password hash. */

export type UserRole = 'owner' | 'member' | 'staff';

export interface UserView {
  id: string;
  email: string;
  role: UserRole;
  account_id: string | null;
  created_at: string;
}

export function toUserView(user: User): UserView {
  return { id: user.id, email: user.email, role: user.role, account_id: user.account_id, created_at: new Date(user.created_at).toISOString() };
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    throw new GatewayError('INVALID_REQUEST', `A password has ${MIN_PASSWORD_LENGTH} to ${MAX_PASSWORD_LENGTH} characters.`, { param: 'password' });
  }
}

/** A password for the demo account's first sign-in: 20 characters of base64url. */
export function generatePassword(): string {
  return randomBytes(15).toString('base64url');
}

export async function createUser(db: Kysely<Database>, input: { email: string; password: string; role: UserRole; accountId?: string | null }): Promise<User> {
  const email = normalizeEmail(input.email);
  checkPassword(input.password);
  if (input.role === 'staff' && input.accountId) throw new GatewayError('INVALID_REQUEST', 'Staff users belong to no account.', { param: 'account_id' });
  if (input.role !== 'staff') {
    if (!input.accountId) throw new GatewayError('INVALID_REQUEST', 'Owners and members belong to an account: give its id.', { param: 'account_id' });
    await requireAccount(db, input.accountId);
  }
  if (await findUserByEmail(db, email)) throw new GatewayError('INVALID_REQUEST', `A user with the email "${email}" exists already.`, { param: 'email' });
  return insertUser(db, {
    id: newId('user'),
    email,
    password_hash: await hashPassword(input.password),
    role: input.role,
    account_id: input.role === 'staff' ? null : input.accountId!,
  });
}

/** Sets a new password and ends every session of the user. */
export async function resetPassword(db: Kysely<Database>, input: { email?: string; userId?: string; password: string }): Promise<User> {
  checkPassword(input.password);
  const user = input.userId ? await findUserById(db, input.userId) : input.email ? await findUserByEmail(db, normalizeEmail(input.email)) : undefined;
  if (!user) throw new GatewayError('NOT_FOUND', 'No such user.', { param: input.userId ? 'user_id' : 'email' });
  const updated = await updateUserPassword(db, user.id, await hashPassword(input.password));
  await deleteUserSessions(db, user.id);
  return updated!;
}

export function listUsers(db: Kysely<Database>, filter: { accountId?: string; limit: number; offset: number }): Promise<User[]> {
  return listUserRows(db, filter);
}
