import { sql, type Kysely } from 'kysely';
import type { Account, Database } from '../../db/schema.js';
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
  const account = await db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst();
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
    const lock = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(727001) AS locked`.execute(trx);
    if (!lock.rows[0]?.locked) return 0;
    const reset = await sql<{ id: string; cycle_spent: number }>`
      WITH due AS (
        SELECT id, cycle_spent,
               floor(extract(epoch FROM (${now}::timestamptz - last_reset)) / (reset_cycle_days * 86400))::int AS cycles
        FROM accounts
        WHERE last_reset + make_interval(days => reset_cycle_days) <= ${now}::timestamptz
        ORDER BY id
        FOR NO KEY UPDATE
      )
      UPDATE accounts SET
        cycle_spent = 0,
        last_reset = accounts.last_reset + make_interval(days => accounts.reset_cycle_days * due.cycles),
        updated_at = now()
      FROM due WHERE accounts.id = due.id
      RETURNING accounts.id, due.cycle_spent`.execute(trx);
    for (const row of reset.rows) {
      await trx
        .insertInto('ledger')
        .values({ account_id: row.id, kind: 'reset', current_delta: 0, vault_delta: 0, note: `cycle reset; credits_used was ${microToCredits(row.cycle_spent)}` })
        .execute();
    }
    if (reset.rows.length > 0) log.info('credits.cycles_reset', { accounts: reset.rows.length });
    return reset.rows.length;
  });
}
