import type { Kysely } from 'kysely';
import type { Account, Database } from '../../db/schema.js';
import { findAccount, insertLedgerEntry } from '../../db/queries/accounts.queries.js';
import { resetDueCycles, tryResetSweepLock } from '../../db/queries/reset-cycles.queries.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import { microToCredits } from './money.js';

const DAY_MS = 86_400_000;

/** `GET /v1/credits` (SPEC "Credits", types per GAPS.md "Account data"). */
export interface CreditsView {
  current_credits: number;
  vault_credits: number;
  daily_limit: number | null;
  credits_used: number;
  /** Credits reserved by requests in flight, on every instance. */
  held_credits: number;
  /** What can be spent now: both balances less the holds. */
  available_credits: number;
  plan: string;
  last_reset: string;
  reset_time: string;
  reset_cycle_days: number;
}

export function toCreditsView(account: Account): CreditsView {
  const lastReset = new Date(account.last_reset);
  return {
    current_credits: microToCredits(account.current_credits),
    vault_credits: microToCredits(account.vault_credits),
    daily_limit: account.daily_limit === null ? null : microToCredits(account.daily_limit),
    credits_used: microToCredits(account.cycle_spent),
    held_credits: microToCredits(account.held),
    available_credits: microToCredits(Math.max(0, account.current_credits + account.vault_credits - account.held)),
    plan: account.plan,
    last_reset: lastReset.toISOString(),
    reset_time: new Date(lastReset.getTime() + account.reset_cycle_days * DAY_MS).toISOString(),
    reset_cycle_days: account.reset_cycle_days,
  };
}

export async function readCredits(db: Kysely<Database>, accountId: string): Promise<CreditsView> {
  const account = await findAccount(db, accountId);
  if (!account) throw new GatewayError('INVALID_KEY', 'The API key is invalid, disabled or deleted.');
  return toCreditsView(account);
}

/**
 * Starts new reset cycles for the accounts whose cycle has ended: the cycle's
 * spend (`credits_used`) returns to zero and `last_reset` moves on by whole
 * cycles. The update's own condition makes each reset happen once whichever
 * instance runs it; an advisory lock keeps the sweep on one instance at a time.
 */
export async function runResetCycles(db: Kysely<Database>, log: Logger, now = new Date()): Promise<number> {
  return db.transaction().execute(async (trx) => {
    if (!(await tryResetSweepLock(trx))) return 0;
    const reset = await resetDueCycles(trx, now);
    for (const row of reset) {
      await insertLedgerEntry(trx, { account_id: row.id, kind: 'reset', current_delta: 0, vault_delta: 0, note: `cycle reset; credits_used was ${microToCredits(row.cycle_spent)}` });
    }
    if (reset.length > 0) log.info('credits.cycles_reset', { accounts: reset.length });
    return reset.length;
  });
}
