import { z } from 'zod';
import { MAX_PASSWORD_LENGTH } from '../../server/dashboard/passwords.js';
import { creditsSchema, usageQuerySchema } from '../account/account.schema.js';
import { userViewSchema } from '../shared/views.schema.js';

export const loginInputSchema = z.object({
  email: z.string().trim().min(3).max(320),
  password: z.string().min(1).max(MAX_PASSWORD_LENGTH),
});

export const meSchema = z.object({
  user: userViewSchema,
  /** Send it back as `x-csrf-token` on every mutation. */
  csrf_token: z.string(),
  account: z.object({ id: z.string(), name: z.string(), plan: z.string(), disabled: z.boolean() }).nullable(),
  session_expires_at: z.string(),
});

export const keyIdSchema = z.object({ key_id: z.string().min(1).max(100) });
export const keyNameSchema = z.string().trim().min(1).max(200);

export const allowlistSchema = z.object({
  ip_allowlist: z.array(z.string()),
  /** The address the gateway sees for this browser (what the allowlist is checked against). */
  your_address: z.string(),
});

export const dashboardCreditsSchema = creditsSchema.extend({
  open_holds: z.array(z.object({ kind: z.enum(['requests', 'video']), id: z.string(), amount: z.number() })),
});

export const dashboardUsageQuerySchema = usageQuerySchema.extend({ endpoint: z.string().min(1).max(200).optional() });

export const usageTotalsInputSchema = z.object({ days: z.number().int().min(1).max(366).default(30) });
export const usageTotalsSchema = z.object({
  from: z.string(),
  to: z.string(),
  days: z.array(z.object({ day: z.string(), cost: z.number(), requests: z.number().int() })),
  models: z.array(z.object({ model: z.string(), cost: z.number(), requests: z.number().int() })),
});

export const usageCsvInputSchema = dashboardUsageQuerySchema.omit({ page: true, limit: true });

/** The warnings staff gave the account on its review items (newest first): no request text. */
export const accountWarningsSchema = z.object({
  warnings: z.array(
    z.object({
      /** When staff gave the warning (ISO 8601). */
      given_at: z.string(),
      /** The restricted family of the request warned about. */
      family: z.string(),
      /** The usage rule that flagged or rejected it. */
      rule_id: z.string().nullable(),
      /** What staff wrote with the warning. */
      note: z.string().nullable(),
    }),
  ),
});
