import { z } from 'zod';
import { findKeyById } from '../../db/queries/accounts.queries.js';
import { listOpenHolds } from '../../db/queries/holds.queries.js';
import { chargedUsageTotals, listChargedUsage } from '../../db/queries/usage.queries.js';
import { createKey, listKeys, requireAccount, toKeyView, updateAccount, updateKey } from '../../server/accounts/accounts.service.js';
import { readCredits } from '../../server/billing/credits.js';
import { microToCredits } from '../../server/billing/money.js';
import { toUsageCsv } from '../../server/dashboard/usage-csv.js';
import { GatewayError } from '../../server/errors.js';
import type { Context } from '../../server/context.js';
import { accountSessionProcedure, ownerSessionProcedure } from '../../server/procedures/index.js';
import { videoIdInputSchema, videoListQuerySchema, videoListSchema, videoDeleteResultSchema } from '../../server/providers/openai/openai-videos.wire.js';
import { accountWarnings } from '../../server/restricted/review.service.js';
import { deleteVideo, listVideos } from '../../server/videos/videos.service.js';
import { router } from '../../server/trpc.js';
import { discountResultSchema, usageListSchema } from '../account/account.schema.js';
import { toDate, toUsageItem } from '../account/usage-item.js';
import { keyViewSchema } from '../shared/views.schema.js';
import {
  accountWarningsSchema,
  allowlistSchema,
  dashboardCreditsSchema,
  dashboardUsageQuerySchema,
  keyIdSchema,
  keyNameSchema,
  usageCsvInputSchema,
  usageTotalsInputSchema,
  usageTotalsSchema,
} from './dashboard.schema.js';

/**
 * What an account's people see and change on the dashboard. Every procedure
 * works on `ctx.auth.account` — the session's account — and takes no account
 * id from the client; a key id of another account is answered as unknown.
 */

const DAY_MS = 86_400_000;
const CSV_MAX_ROWS = 10_000;

async function ownKey(ctx: Context & { auth: { account: { id: string } } }, keyId: string) {
  const key = await findKeyById(ctx.services.db, keyId);
  if (!key || key.deleted_at || key.account_id !== ctx.auth.account.id) throw new GatewayError('NOT_FOUND', `No key "${keyId}".`, { param: 'key_id' });
  return key;
}

const keysRouter = router({
  list: accountSessionProcedure.output(z.array(keyViewSchema)).query(async ({ ctx }) => (await listKeys(ctx.services.db, ctx.auth.account.id, false)).map(toKeyView)),
  /** The answer's `key` is the only time the full key is shown. */
  create: ownerSessionProcedure
    .input(z.object({ name: keyNameSchema }))
    .output(keyViewSchema.extend({ key: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const { key, record } = await createKey(ctx.services.db, ctx.auth.account.id, input.name);
      return { ...toKeyView(record), key };
    }),
  rename: ownerSessionProcedure
    .input(keyIdSchema.extend({ name: keyNameSchema }))
    .output(keyViewSchema)
    .mutation(async ({ ctx, input }) => toKeyView(await updateKey(ctx.services.db, (await ownKey(ctx, input.key_id)).id, { name: input.name }))),
  enable: ownerSessionProcedure
    .input(keyIdSchema)
    .output(keyViewSchema)
    .mutation(async ({ ctx, input }) => toKeyView(await updateKey(ctx.services.db, (await ownKey(ctx, input.key_id)).id, { enabled: true }))),
  disable: ownerSessionProcedure
    .input(keyIdSchema)
    .output(keyViewSchema)
    .mutation(async ({ ctx, input }) => toKeyView(await updateKey(ctx.services.db, (await ownKey(ctx, input.key_id)).id, { enabled: false }))),
  delete: ownerSessionProcedure
    .input(keyIdSchema)
    .output(keyViewSchema)
    .mutation(async ({ ctx, input }) => toKeyView(await updateKey(ctx.services.db, (await ownKey(ctx, input.key_id)).id, { deleted: true }))),
});

const allowlistRouter = router({
  get: accountSessionProcedure.output(allowlistSchema).query(async ({ ctx }) => ({
    ip_allowlist: (await requireAccount(ctx.services.db, ctx.auth.account.id)).ip_allowlist,
    your_address: ctx.clientAddress,
  })),
  /** Validated entry by entry with the gateway's own parser; an empty list allows every address. */
  set: ownerSessionProcedure
    .input(z.object({ ip_allowlist: z.array(z.string().trim().min(1).max(100)).max(1000) }))
    .output(allowlistSchema)
    .mutation(async ({ ctx, input }) => ({
      ip_allowlist: (await updateAccount(ctx.services.db, ctx.auth.account.id, { ipAllowlist: input.ip_allowlist })).ip_allowlist,
      your_address: ctx.clientAddress,
    })),
});

function usageFilter(accountId: string, input: z.infer<typeof usageCsvInputSchema>) {
  return { accountId, model: input.model, endpoint: input.endpoint, from: toDate(input.from), to: toDate(input.to) };
}

const usageRouter = router({
  list: accountSessionProcedure
    .input(dashboardUsageQuerySchema)
    .output(usageListSchema)
    .query(async ({ ctx, input }) => {
      const { rows, total } = await listChargedUsage(ctx.services.db, {
        ...usageFilter(ctx.auth.account.id, input),
        limit: input.limit,
        offset: (input.page - 1) * input.limit,
      });
      return { data: rows.map(toUsageItem), pagination: { page: input.page, limit: input.limit, total } };
    }),
  /** Spend per UTC day and per model over the last `days` days (credits). */
  totals: accountSessionProcedure
    .input(usageTotalsInputSchema)
    .output(usageTotalsSchema)
    .query(async ({ ctx, input }) => {
      const to = new Date(Math.ceil(Date.now() / DAY_MS) * DAY_MS);
      const from = new Date(to.getTime() - input.days * DAY_MS);
      const totals = await chargedUsageTotals(ctx.services.db, { accountId: ctx.auth.account.id, from, to });
      return {
        from: from.toISOString(),
        to: to.toISOString(),
        days: totals.days.map((row) => ({ ...row, cost: microToCredits(row.cost) })),
        models: totals.models.map((row) => ({ ...row, cost: microToCredits(row.cost) })),
      };
    }),
  /** The filtered rows as CSV (newest first, at most 10,000). */
  csv: accountSessionProcedure
    .input(usageCsvInputSchema)
    .output(z.object({ filename: z.string(), csv: z.string(), rows: z.number().int(), truncated: z.boolean() }))
    .query(async ({ ctx, input }) => {
      const { rows, total } = await listChargedUsage(ctx.services.db, { ...usageFilter(ctx.auth.account.id, input), limit: CSV_MAX_ROWS, offset: 0 });
      return { filename: `usage-${ctx.auth.account.id}.csv`, csv: toUsageCsv(rows.map(toUsageItem)), rows: rows.length, truncated: total > rows.length };
    }),
});

const videosRouter = router({
  list: accountSessionProcedure.input(videoListQuerySchema).output(videoListSchema).query(({ ctx, input }) => listVideos(ctx, input)),
  delete: ownerSessionProcedure.input(videoIdInputSchema).output(videoDeleteResultSchema).mutation(({ ctx, input }) => deleteVideo(ctx, input.id)),
});

export const dashboardOwnerRouter = router({
  keys: keysRouter,
  allowlist: allowlistRouter,
  /** Every field of `/v1/credits`, and the open holds behind `held_credits`. */
  credits: accountSessionProcedure.output(dashboardCreditsSchema).query(async ({ ctx }) => {
    const [credits, holds] = await Promise.all([readCredits(ctx.services.db, ctx.auth.account.id), listOpenHolds(ctx.services.db, ctx.auth.account.id)]);
    return { ...credits, open_holds: holds.map((hold) => ({ ...hold, amount: microToCredits(hold.amount) })) };
  }),
  usage: usageRouter,
  discounts: accountSessionProcedure.output(discountResultSchema).query(({ ctx }) => ctx.services.discounts.resultFor(ctx.auth.account.id, new Date())),
  videos: videosRouter,
  /** The warnings staff gave this account on its restricted-family review items, newest first (the last 50). */
  warnings: accountSessionProcedure
    .output(accountWarningsSchema)
    .query(async ({ ctx }) => ({ warnings: await accountWarnings(ctx.services.db, ctx.auth.account.id) })),
});
