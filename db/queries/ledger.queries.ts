import { sql } from 'kysely';
import type { Executor } from './executor.js';

/** Per account: its balances and the sums the ledger check compares them with. */
export interface LedgerSums {
  account_id: string;
  current_credits: number;
  vault_credits: number;
  held: number;
  ledger_current: number;
  ledger_vault: number;
  holds_total: number;
  usage_cost: number;
  ledger_charges: number;
  /** Usage cost the balance could not cover, recorded on charge entries. */
  ledger_uncharged: number;
}

/** The balances, ledger sums, holds and usage costs of every account (or one). */
export async function readLedgerSums(db: Executor, accountId?: string): Promise<LedgerSums[]> {
  const result = await sql<LedgerSums>`
    SELECT a.id AS account_id, a.current_credits, a.vault_credits, a.held,
      COALESCE((SELECT SUM(current_delta) FROM ledger l WHERE l.account_id = a.id), 0)::bigint AS ledger_current,
      COALESCE((SELECT SUM(vault_delta) FROM ledger l WHERE l.account_id = a.id), 0)::bigint AS ledger_vault,
      (COALESCE((SELECT SUM(amount) FROM credit_holds h WHERE h.account_id = a.id), 0)
        + COALESCE((SELECT SUM(amount) FROM job_holds j WHERE j.account_id = a.id), 0))::bigint AS holds_total,
      COALESCE((SELECT SUM(cost) FROM usage u WHERE u.account_id = a.id), 0)::bigint AS usage_cost,
      COALESCE((SELECT -SUM(current_delta + vault_delta) FROM ledger l WHERE l.account_id = a.id AND l.kind = 'charge'), 0)::bigint AS ledger_charges,
      COALESCE((SELECT SUM(uncharged) FROM ledger l WHERE l.account_id = a.id AND l.kind = 'charge'), 0)::bigint AS ledger_uncharged
    FROM accounts a
    ${accountId ? sql`WHERE a.id = ${accountId}` : sql``}
    ORDER BY a.id`.execute(db);
  return result.rows.map((row) => Object.fromEntries(Object.entries(row).map(([key, value]) => [key, key === 'account_id' ? value : Number(value)])) as unknown as LedgerSums);
}
