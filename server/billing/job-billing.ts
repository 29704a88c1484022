/**
 * Billing of background jobs (videos), which outlive the request and the
 * instance: the hold belongs to the job (`job_holds`), not to an instance, so
 * instance recovery never releases it; it ends only when the job is settled
 * or released.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { insertJobHold, takeJobHold } from '../../db/queries/job-holds.queries.js';
import { settleJobRow } from '../../db/queries/settlement.queries.js';
import { toSettlementRow, type UsageRecord } from './usage-entry.js';

/**
 * Reserves `amount` for a job; `within` runs in the same transaction (it
 * records the job), so there is never a hold without its job nor a job
 * without its hold. False when the account cannot cover it (nothing written).
 */
export async function tryHoldForJob(db: Kysely<Database>, accountId: string, amount: number, jobId: string, within: (trx: Transaction<Database>) => Promise<void>): Promise<boolean> {
  if (amount <= 0) {
    await db.transaction().execute(within);
    return true;
  }
  return db.transaction().execute(async (trx) => {
    if (!(await insertJobHold(trx, { jobId, accountId, amount }))) return false;
    await within(trx);
    return true;
  });
}

/**
 * Ends a job's hold with its one usage row, in one transaction: the usage
 * row (its request id is the job id, unique) with its cost, the release, the
 * charge (never below zero; the rest is recorded as uncharged) and its ledger
 * entry. `guard` runs first (the job's own state change); when it answers
 * false nothing is written. A second settlement of the same job finds neither
 * the hold nor room for a second usage row and writes nothing. True when this
 * call settled the job.
 */
export async function settleJob(db: Kysely<Database>, jobId: string, entry: UsageRecord, guard?: (trx: Transaction<Database>) => Promise<boolean>): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    if (guard && !(await guard(trx))) return false;
    const hold = await takeJobHold(trx, jobId);
    const row = toSettlementRow({ ...entry, accountId: hold?.accountId ?? entry.accountId, heldAmount: hold?.amount ?? 0 }, jobId);
    return settleJobRow(trx, row, hold?.amount ?? 0);
  });
}
