import { listChargedUsage } from '../../db/queries/usage.queries.js';
import { readCredits } from '../../server/billing/credits.js';
import { apiKeyProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import { toDate, toUsageItem } from './usage-item.js';
import { creditsSchema, discountResultSchema, usageListSchema, usageQuerySchema } from './account.schema.js';

export const accountRouter = router({
  credits: apiKeyProcedure
    .meta({ openapi: { method: 'GET', path: '/v1/credits', tags: ['account'], summary: 'Credit balance' } })
    .output(creditsSchema)
    .query(({ ctx }) => readCredits(ctx.services.db, ctx.auth.account.id)),

  discounts: apiKeyProcedure
    .meta({ openapi: { method: 'GET', path: '/v1/discounts/my-discounts', tags: ['account'], summary: "Today's discounts" } })
    .output(discountResultSchema)
    .query(({ ctx }) => ctx.services.discounts.resultFor(ctx.auth.account.id, new Date())),

  usage: apiKeyProcedure
    .meta({ openapi: { method: 'GET', path: '/v1/usage', tags: ['account'], summary: 'Charged requests, newest first' } })
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
