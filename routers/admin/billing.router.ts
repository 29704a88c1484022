import { z } from 'zod';
import { checkLedger, ledgerCheckInCredits } from '../../server/billing/ledger-check.js';
import { adminProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';

const poolSchema = z.object({
  models: z.array(z.string()),
  minPercentage: z.number().int(),
  maxPercentage: z.number().int(),
  perAccount: z.number().int(),
});

export const billingRouter = router({
  /** Checks that every account's ledger, usage rows and holds agree with its balances; amounts in credits. */
  checkLedger: adminProcedure
    .input(z.object({ account_id: z.string().optional() }))
    .query(async ({ ctx, input }) => ledgerCheckInCredits(await checkLedger(ctx.services.db, input.account_id))),

  /** Flushes this instance's pending usage rows and charges now (tests, maintenance). */
  flush: adminProcedure.mutation(async ({ ctx }) => {
    await ctx.services.billing.flush();
    return { pending: ctx.services.billing.pending };
  }),

  discountPool: adminProcedure.output(poolSchema).query(({ ctx }) => {
    const { models, minPercentage, maxPercentage, perAccount } = ctx.services.discounts.current;
    return { models, minPercentage, maxPercentage, perAccount };
  }),

  /** Which models take part in the daily discounts, and by how much (integer percent). */
  setDiscountPool: adminProcedure
    .input(
      z.object({
        models: z.array(z.string().min(1)).max(1000).optional(),
        minPercentage: z.number().int().min(1).max(100).optional(),
        maxPercentage: z.number().int().min(1).max(100).optional(),
        perAccount: z.number().int().min(0).max(1000).optional(),
      }).refine((pool) => pool.minPercentage === undefined || pool.maxPercentage === undefined || pool.minPercentage <= pool.maxPercentage, {
        message: 'must not be above maxPercentage',
        path: ['minPercentage'],
      }),
    )
    .output(poolSchema)
    .mutation(async ({ ctx, input }) => {
      const next = await ctx.services.discounts.update(input);
      return { models: next.models, minPercentage: next.minPercentage, maxPercentage: next.maxPercentage, perAccount: next.perAccount };
    }),
});
