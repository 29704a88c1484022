import { z } from 'zod';
import { publicProcedure, sessionProcedure } from '../../server/procedures/index.js';
import { login, logout, sameSecret, type SessionContext } from '../../server/dashboard/sessions.js';
import { toUserView } from '../../server/dashboard/users.service.js';
import { findAccount } from '../../db/queries/accounts.queries.js';
import { GatewayError } from '../../server/errors.js';
import type { Context } from '../../server/context.js';
import { router } from '../../server/trpc.js';
import { loginInputSchema, meSchema } from './dashboard.schema.js';

async function describe(ctx: Context, found: SessionContext): Promise<z.infer<typeof meSchema>> {
  const account = found.user.account_id ? await findAccount(ctx.services.db, found.user.account_id) : undefined;
  return {
    user: toUserView(found.user),
    csrf_token: found.session.csrf_token,
    account: account ? { id: account.id, name: account.name, plan: account.plan, disabled: account.disabled } : null,
    session_expires_at: new Date(found.session.expires_at).toISOString(),
  };
}

export const dashboardAuthRouter = router({
  /**
   * Signs in and sets the session cookie. Needs `x-csrf-token: login`: a
   * custom header no cross-site form can send, so no other site can sign a
   * browser in to an account of its choosing.
   */
  login: publicProcedure
    .input(loginInputSchema)
    .output(meSchema)
    .mutation(async ({ ctx, input }) => {
      if (!ctx.web?.csrfToken || !sameSecret(ctx.web.csrfToken, 'login')) {
        throw new GatewayError('CSRF_REJECTED', 'Sign-in needs the header "x-csrf-token: login".');
      }
      return describe(ctx, await login(ctx, input));
    }),

  /** Who is signed in, and the CSRF token for this session's mutations. */
  me: sessionProcedure.output(meSchema).query(({ ctx }) => describe(ctx, ctx.session)),

  logout: sessionProcedure.output(z.object({ ended: z.number().int() })).mutation(async ({ ctx }) => ({ ended: await logout(ctx, ctx.session, false) })),

  /** Ends every session of this user, on every browser. */
  logoutEverywhere: sessionProcedure
    .output(z.object({ ended: z.number().int() }))
    .mutation(async ({ ctx }) => ({ ended: await logout(ctx, ctx.session, true) })),
});
