import { listChargedUsage } from '../../db/queries/usage.queries.js';
import { readCredits } from '../../server/billing/credits.js';
import { microToCredits } from '../../server/billing/money.js';
import { apiKeyProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import { creditsSchema, discountResultSchema, usageListSchema, usageQuerySchema } from './account.schema.js';

function toDate(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  return /^\d+$/.test(value) ? new Date(Number(value) * 1000) : new Date(value);
}

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
        data: rows.map((row) => ({
          id: row.request_id,
          created_at: Math.floor(new Date(row.created_at).getTime() / 1000),
          endpoint: row.endpoint,
          model: row.model,
          input_tokens: row.input_tokens,
          output_tokens: row.output_tokens,
          cached_input_tokens: row.cached_input_tokens,
          cost: microToCredits(row.cost),
          discount_percentage: row.discount_percentage,
          status: row.status,
          stream: row.stream,
          aborted: row.aborted,
          price: Object.fromEntries(Object.entries(row.price as Record<string, number>).map(([name, micro]) => [name, microToCredits(micro)])),
        })),
        pagination: { page: input.page, limit: input.limit, total },
      };
    }),
});
