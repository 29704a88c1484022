import { z } from 'zod';
import { listAccounts } from '../../db/queries/accounts.queries.js';
import {
  adjustCredits,
  createAccount,
  requireAccount,
  requireKnownPlan,
  toAccountView,
  updateAccount,
} from '../../server/accounts/accounts.service.js';
import { adminProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import {
  accountIdInputSchema,
  accountViewSchema,
  adjustCreditsInputSchema,
  createAccountInputSchema,
  listAccountsInputSchema,
  setAllowlistInputSchema,
  setPlanInputSchema,
  updateAccountInputSchema,
} from './accounts.schema.js';

export const accountsRouter = router({
  create: adminProcedure
    .input(createAccountInputSchema)
    .output(accountViewSchema)
    .mutation(async ({ ctx, input }) => {
      requireKnownPlan(input.plan, ctx.services.config.rateLimits);
      return toAccountView(
        await createAccount(ctx.services.db, {
          name: input.name,
          plan: input.plan,
          credits: input.credits,
          vaultCredits: input.vault_credits,
          dailyLimit: input.daily_limit,
          restrictedAccess: input.restricted_access,
          resetCycleDays: input.reset_cycle_days,
          ipAllowlist: input.ip_allowlist,
        }),
      );
    }),
  list: adminProcedure
    .input(listAccountsInputSchema)
    .output(z.array(accountViewSchema))
    .query(async ({ ctx, input }) => (await listAccounts(ctx.services.db, input)).map(toAccountView)),
  get: adminProcedure
    .input(accountIdInputSchema)
    .output(accountViewSchema)
    .query(async ({ ctx, input }) => toAccountView(await requireAccount(ctx.services.db, input.account_id))),
  update: adminProcedure
    .input(updateAccountInputSchema)
    .output(accountViewSchema)
    .mutation(async ({ ctx, input }) =>
      toAccountView(
        await updateAccount(ctx.services.db, input.account_id, {
          name: input.name,
          dailyLimit: input.daily_limit,
          restrictedAccess: input.restricted_access,
          resetCycleDays: input.reset_cycle_days,
        }),
      ),
    ),
  setPlan: adminProcedure
    .input(setPlanInputSchema)
    .output(accountViewSchema)
    .mutation(async ({ ctx, input }) => {
      requireKnownPlan(input.plan, ctx.services.config.rateLimits);
      return toAccountView(await updateAccount(ctx.services.db, input.account_id, { plan: input.plan }));
    }),
  disable: adminProcedure
    .input(accountIdInputSchema)
    .output(accountViewSchema)
    .mutation(async ({ ctx, input }) => toAccountView(await updateAccount(ctx.services.db, input.account_id, { disabled: true }))),
  enable: adminProcedure
    .input(accountIdInputSchema)
    .output(accountViewSchema)
    .mutation(async ({ ctx, input }) => toAccountView(await updateAccount(ctx.services.db, input.account_id, { disabled: false }))),
  setIpAllowlist: adminProcedure
    .input(setAllowlistInputSchema)
    .output(accountViewSchema)
    .mutation(async ({ ctx, input }) => toAccountView(await updateAccount(ctx.services.db, input.account_id, { ipAllowlist: input.ip_allowlist }))),
  adjustCredits: adminProcedure
    .input(adjustCreditsInputSchema)
    .output(accountViewSchema)
    .mutation(async ({ ctx, input }) =>
      toAccountView(await adjustCredits(ctx.services.db, input.account_id, { amount: input.amount, balance: input.balance, note: input.note })),
    ),
});
