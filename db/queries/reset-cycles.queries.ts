import { sql } from 'kysely';
import type { Executor } from './executor.js';

/**
 * Takes the transaction-scoped lock that keeps the reset sweep on one
 * instance at a time; false when another instance holds it.
 */
export async function tryResetSweepLock(db: Executor): Promise<boolean> {
  const lock = await sql<{ locked: boolean }>`SELECT pg_try_advisory_xact_lock(727001) AS locked`.execute(db);
  return lock.rows[0]?.locked === true;
}

/**
 * Starts new reset cycles for the accounts whose cycle ended by `now`:
 * `cycle_spent` back to zero, `last_reset` moved on by whole cycles. The
 * condition makes each reset happen once; answers each reset account with
 * the spend of the cycle that ended.
 */
export async function resetDueCycles(db: Executor, now: Date): Promise<Array<{ id: string; cycle_spent: number }>> {
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
    RETURNING accounts.id, due.cycle_spent`.execute(db);
  return reset.rows;
}
