import type { AuthContext } from '../auth/authenticate.js';
import type { Context } from '../context.js';
import { GatewayError } from '../errors.js';
import { requireSession } from './sessions.js';

/**
 * The session's account as an API key's AuthContext, so procedures and
 * services written for keys serve the dashboard unchanged. The account comes
 * from the session's user, never from the request.
 */
export async function sessionAccountAuth(ctx: Context, type = 'query'): Promise<AuthContext> {
  const { user } = await requireSession(ctx, type);
  if (!user.account_id) throw new GatewayError('FORBIDDEN', 'Staff users have no account of their own; use the staff pages.');
  const account = await ctx.services.authCache.getAccount(user.account_id);
  if (!account) throw new GatewayError('NOT_FOUND', 'The account of this user no longer exists.');
  return { key: { id: `session:${user.id}`, accountId: account.id, usable: true }, account };
}
