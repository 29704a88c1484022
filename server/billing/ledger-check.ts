import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

export interface LedgerCheckRow {
  account_id: string;
  current_credits: number;
  vault_credits: number;
  held: number;
  ledger_current: number;
  ledger_vault: number;
  holds_total: number;
  usage_cost: number;
  ledger_charges: number;
  ok: boolean;
}

/**
 * The books of each account agree with its balance: the ledger's deltas sum
 * to both balances (opening balance − Σ charges + Σ credits = balance), the
 * usage rows' costs equal the charge entries, the holds (instances' and
 * background jobs') sum to `held`,
 * and nothing is negative.
 */
export async function checkLedger(db: Kysely<Database>, accountId?: string): Promise<{ ok: boolean; accounts: LedgerCheckRow[] }> {
  const result = await sql<Omit<LedgerCheckRow, 'ok'>>`
    SELECT a.id AS account_id, a.current_credits, a.vault_credits, a.held,
      COALESCE((SELECT SUM(current_delta) FROM ledger l WHERE l.account_id = a.id), 0)::bigint AS ledger_current,
      COALESCE((SELECT SUM(vault_delta) FROM ledger l WHERE l.account_id = a.id), 0)::bigint AS ledger_vault,
      (COALESCE((SELECT SUM(amount) FROM credit_holds h WHERE h.account_id = a.id), 0)
        + COALESCE((SELECT SUM(amount) FROM job_holds j WHERE j.account_id = a.id), 0))::bigint AS holds_total,
      COALESCE((SELECT SUM(cost) FROM usage u WHERE u.account_id = a.id), 0)::bigint AS usage_cost,
      COALESCE((SELECT -SUM(current_delta + vault_delta) FROM ledger l WHERE l.account_id = a.id AND l.kind = 'charge'), 0)::bigint AS ledger_charges
    FROM accounts a
    ${accountId ? sql`WHERE a.id = ${accountId}` : sql``}
    ORDER BY a.id`.execute(db);
  const accounts = result.rows.map((row) => {
    const numbers = Object.fromEntries(Object.entries(row).map(([key, value]) => [key, key === 'account_id' ? value : Number(value)])) as Omit<LedgerCheckRow, 'ok'>;
    const ok =
      numbers.ledger_current === numbers.current_credits &&
      numbers.ledger_vault === numbers.vault_credits &&
      numbers.holds_total === numbers.held &&
      numbers.usage_cost === numbers.ledger_charges &&
      numbers.current_credits >= 0 &&
      numbers.vault_credits >= 0 &&
      numbers.held >= 0;
    return { ...numbers, ok };
  });
  return { ok: accounts.every((account) => account.ok), accounts };
}
