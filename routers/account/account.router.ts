import { listChargedUsage } from '../../db/queries/usage.queries.js';
import { readCredits } from '../../server/billing/credits.js';
import { apiKeyProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import { toDate, toUsageItem } from './usage-item.js';
import { creditsSchema, discountResultSchema, usageListSchema, usageQuerySchema } from './account.schema.js';

export const accountRouter = router({
  credits: apiKeyProcedure
    .output(creditsSchema)
    .query(({ ctx }) => readCredits(ctx.services.db, ctx.auth.account.id)),

  discounts: apiKeyProcedure
    .output(discountResultSchema)
    .query(({ ctx }) => ctx.services.discounts.resultFor(ctx.auth.account.id, new Date())),

  usage: apiKeyProcedure
    .input(usageQuerySchema)
    .output(usageListSchema)
    .query(async ({ ctx, input }) => {
      const { rows, total } = await listChargedUsage(ctx.services.db, {
        accountId: ctx.auth.account.id,
        model: input.model,
        from: toDate(input.from),
        to: toDate(input.to),
        limit: input.limit,
        offset: (input.page - 1) * input.limit,
      });
      return {
        data: rows.map(toUsageItem),
        pagination: { page: input.page, limit: input.limit, total },
      };
    }),
});
