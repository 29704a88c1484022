import { sql } from 'kysely';
import type { Executor } from './executor.js';

/**
 * Reserves `amount` for a job in one statement, under the same conditions as
 * an instance's hold (the balance and the cycle's limit still cover it):
 * raises `accounts.held` and records the hold under the job. False when the
 * account cannot cover it (nothing changed).
 */
export async function insertJobHold(db: Executor, hold: { jobId: string; accountId: string; amount: number }): Promise<boolean> {
  const result = await sql<{ job_id: string }>`
    WITH reserved AS (
      UPDATE accounts SET held = held + ${hold.amount}
      WHERE id = ${hold.accountId}
        AND current_credits + vault_credits - held >= ${hold.amount}
        AND (daily_limit IS NULL OR cycle_spent + held + ${hold.amount} <= daily_limit)
      RETURNING id
    )
    INSERT INTO job_holds (job_id, account_id, amount)
    SELECT ${hold.jobId}, id, ${hold.amount} FROM reserved
    RETURNING job_id`.execute(db);
  return result.rows.length === 1;
}

/** Removes a job's hold and answers it; undefined when the job holds nothing (already settled or released). */
export async function takeJobHold(db: Executor, jobId: string): Promise<{ accountId: string; amount: number } | undefined> {
  const row = await db.deleteFrom('job_holds').where('job_id', '=', jobId).returning(['account_id', 'amount']).executeTakeFirst();
  return row ? { accountId: row.account_id, amount: Number(row.amount) } : undefined;
}

/** What a job holds now (0 when nothing). */
export async function findJobHold(db: Executor, jobId: string): Promise<number> {
  const row = await db.selectFrom('job_holds').select('amount').where('job_id', '=', jobId).executeTakeFirst();
  return row ? Number(row.amount) : 0;
}
