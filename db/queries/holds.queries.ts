import type { Executor } from './executor.js';

/** An account's open holds: credits reserved by requests in flight (per instance) and by unfinished video jobs. */
export async function listOpenHolds(db: Executor, accountId: string): Promise<Array<{ kind: 'requests' | 'video'; id: string; amount: number }>> {
  const [requests, jobs] = await Promise.all([
    db.selectFrom('credit_holds').select(['instance_id', 'amount']).where('account_id', '=', accountId).where('amount', '>', 0).execute(),
    db.selectFrom('job_holds').select(['job_id', 'amount']).where('account_id', '=', accountId).execute(),
  ]);
  return [
    ...requests.map((row) => ({ kind: 'requests' as const, id: row.instance_id, amount: Number(row.amount) })),
    ...jobs.map((row) => ({ kind: 'video' as const, id: row.job_id, amount: Number(row.amount) })),
  ];
}
