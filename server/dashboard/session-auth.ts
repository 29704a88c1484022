import type { User } from '../../db/schema.js';
import type { AuthContext } from '../auth/authenticate.js';
import { GatewayError } from '../errors.js';
import { requireSession, type SessionRequest } from './sessions.js';

/**
 * The session user's account as an API key's AuthContext, so procedures and
 * services written for keys serve the dashboard unchanged. The account comes
 * from the session's user, never from the request. The account's rules hold
 * as they do for its keys: from an address outside its allowlist nothing is
 * read or changed (403 IP_ACCESS_DENIED); a disabled account's people may
 * sign in and read, and every change answers 403 ACCOUNT_DISABLED. Both are
 * read from the auth cache (no database round trip).
 */
export async function accountAuthOf(ctx: SessionRequest, user: User, type: string): Promise<AuthContext> {
  if (!user.account_id) throw new GatewayError('FORBIDDEN', 'Staff users have no account of their own; use the staff pages.');
  const account = await ctx.services.authCache.getAccount(user.account_id);
  if (!account) throw new GatewayError('NOT_FOUND', 'The account of this user no longer exists.');
  if (type !== 'query' && account.disabled) throw new GatewayError('ACCOUNT_DISABLED', 'This account is disabled: its pages can be read, not changed.');
  if (!account.allowlist.allows(ctx.clientAddress)) {
    throw new GatewayError('IP_ACCESS_DENIED', `Requests from ${ctx.clientAddress} are not allowed for this account (its IP allowlist).`);
  }
  return { key: { id: `session:${user.id}`, accountId: account.id, usable: true }, account };
}

/** The session (from its cookie) and its account, as {@link accountAuthOf} checks them (the dashboard's video previews). */
export async function sessionAccountAuth(ctx: SessionRequest, type = 'query'): Promise<AuthContext> {
  const { user } = await requireSession(ctx, type);
  return accountAuthOf(ctx, user, type);
}
