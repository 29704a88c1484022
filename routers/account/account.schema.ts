import { z } from 'zod';

export const creditsSchema = z.object({
  current_credits: z.number(),
  vault_credits: z.number(),
  daily_limit: z.number().nullable(),
  credits_used: z.number(),
  held_credits: z.number(),
  available_credits: z.number(),
  plan: z.string(),
  last_reset: z.string(),
  reset_time: z.string(),
  reset_cycle_days: z.number().int(),
});

/** The latest time a query may name (the end of year 9999, as PostgreSQL timestamps allow). */
const MAX_UNIX_SECONDS = 253_402_300_799;

/** Unix seconds or an ISO 8601 time, as a query string, within years 1970–9999. */
const timestamp = z.string().refine((value) => {
  const milliseconds = /^\d+$/.test(value) ? Number(value) * 1000 : Date.parse(value);
  return Number.isFinite(milliseconds) && milliseconds >= 0 && milliseconds <= MAX_UNIX_SECONDS * 1000;
}, 'expected unix seconds or an ISO 8601 time between 1970 and 9999');

export const usageQuerySchema = z.object({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  model: z.string().min(1).optional(),
  /** Unix seconds or an ISO 8601 time. */
  from: timestamp.optional(),
  to: timestamp.optional(),
});
export type UsageQuery = z.infer<typeof usageQuerySchema>;

export const usageItemSchema = z.object({
  id: z.string(),
  created_at: z.number().int(),
  endpoint: z.string(),
  model: z.string(),
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cached_input_tokens: z.number().int(),
  cost: z.number(),
  discount_percentage: z.number(),
  status: z.number().int(),
  stream: z.boolean(),
  aborted: z.boolean(),
  /** The price used, credits per million tokens (and per unit), so the charge can be recomputed. */
  price: z.record(z.string(), z.number()),
});

export const usageListSchema = z.object({
  data: z.array(usageItemSchema),
  pagination: z.object({ page: z.number().int(), limit: z.number().int(), total: z.number().int() }),
});

export const discountResultSchema = z.object({
  discounts: z.array(z.object({ model: z.string(), percentage: z.number(), expires_at: z.number().int(), time_remaining: z.string() })),
  next_rotation: z.number().int(),
});
