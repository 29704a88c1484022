import { z } from 'zod';
import { adminProcedure } from '../../server/procedures/index.js';
import { MAX_PASSWORD_LENGTH } from '../../server/dashboard/passwords.js';
import { createUser, listUsers, resetPassword, toUserView } from '../../server/dashboard/users.service.js';
import { router } from '../../server/trpc.js';
import { userViewSchema } from '../shared/views.schema.js';

/** Dashboard users, for the operator (admin CLI `users:*`). Answers never carry a password or its hash. */
export const usersRouter = router({
  create: adminProcedure
    .input(
      z.object({
        email: z.string().trim().email().max(320),
        password: z.string().max(MAX_PASSWORD_LENGTH),
        role: z.enum(['owner', 'member', 'staff']),
        account_id: z.string().min(1).nullable().optional(),
      }),
    )
    .output(userViewSchema)
    .mutation(async ({ ctx, input }) =>
      toUserView(await createUser(ctx.services.db, { email: input.email, password: input.password, role: input.role, accountId: input.account_id ?? null })),
    ),
  /** A new password; every session of the user ends. */
  resetPassword: adminProcedure
    .input(z.object({ email: z.string().trim().min(1).max(320), password: z.string().max(MAX_PASSWORD_LENGTH) }))
    .output(userViewSchema)
    .mutation(async ({ ctx, input }) => toUserView(await resetPassword(ctx.services.db, { email: input.email, password: input.password }))),
  list: adminProcedure
    .input(z.object({ account_id: z.string().min(1).optional(), limit: z.number().int().min(1).max(1000).default(100), offset: z.number().int().min(0).default(0) }))
    .output(z.array(userViewSchema))
    .query(async ({ ctx, input }) => (await listUsers(ctx.services.db, { accountId: input.account_id, limit: input.limit, offset: input.offset })).map(toUserView)),
});
