import { z } from 'zod';
import { isWholeMicroCredits, MAX_CREDITS } from '../../server/billing/money.js';

/** An amount of credits the ledger holds exactly: whole micro-credits, within a safe integer (else a 400, not a RangeError's 500). */
const credits = z.number().min(-MAX_CREDITS).max(MAX_CREDITS).refine(isWholeMicroCredits, 'at most 6 decimals');
const accountId = z.string().min(1);

export const createAccountInputSchema = z.object({
  name: z.string().min(1).max(200),
  plan: z.string().min(1).max(50).default('pro'),
  credits: credits.nonnegative().default(0),
  vault_credits: credits.nonnegative().default(0),
  daily_limit: credits.nonnegative().nullable().optional(),
  restricted_access: z.boolean().optional(),
  reset_cycle_days: z.number().int().min(1).max(365).optional(),
  ip_allowlist: z.array(z.string()).max(1000).optional(),
});

export const accountIdInputSchema = z.object({ account_id: accountId });
export const listAccountsInputSchema = z.object({ limit: z.number().int().min(1).max(1000).default(100), offset: z.number().int().min(0).default(0) });
export const setPlanInputSchema = z.object({ account_id: accountId, plan: z.string().min(1).max(50) });
export const setAllowlistInputSchema = z.object({ account_id: accountId, ip_allowlist: z.array(z.string()).max(1000) });
export const adjustCreditsInputSchema = z.object({
  account_id: accountId,
  amount: credits,
  balance: z.enum(['current', 'vault']).default('current'),
  note: z.string().max(500).optional(),
});
export const updateAccountInputSchema = z.object({
  account_id: accountId,
  name: z.string().min(1).max(200).optional(),
  daily_limit: credits.nonnegative().nullable().optional(),
  restricted_access: z.boolean().optional(),
  reset_cycle_days: z.number().int().min(1).max(365).optional(),
});

export const accountViewSchema = z.object({
  id: z.string(),
  name: z.string(),
  plan: z.string(),
  disabled: z.boolean(),
  current_credits: z.number(),
  vault_credits: z.number(),
  held_credits: z.number(),
  daily_limit: z.number().nullable(),
  credits_used: z.number(),
  ip_allowlist: z.array(z.string()),
  restricted_access: z.boolean(),
  reset_cycle_days: z.number(),
  last_reset: z.string(),
  created_at: z.string(),
});
