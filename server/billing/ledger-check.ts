import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { readLedgerSums, type LedgerSums } from '../../db/queries/ledger.queries.js';
import { microToCredits } from './money.js';

export interface LedgerCheckRow extends LedgerSums {
  ok: boolean;
}

/**
 * The books of each account agree with its balance: the ledger's deltas sum
 * to both balances (opening balance − Σ charges + Σ credits = balance), the
 * usage rows' costs equal the charge entries (what was drawn plus what the
 * balance could not cover, recorded as uncharged), the holds (instances' and
 * background jobs') sum to `held`, and nothing is negative.
 */
export async function checkLedger(db: Kysely<Database>, accountId?: string): Promise<{ ok: boolean; accounts: LedgerCheckRow[] }> {
  const accounts = (await readLedgerSums(db, accountId)).map((numbers) => {
    const ok =
      numbers.ledger_current === numbers.current_credits &&
      numbers.ledger_vault === numbers.vault_credits &&
      numbers.holds_total === numbers.held &&
      numbers.usage_cost === numbers.ledger_charges + numbers.ledger_uncharged &&
      numbers.current_credits >= 0 &&
      numbers.vault_credits >= 0 &&
      numbers.held >= 0 &&
      numbers.ledger_uncharged >= 0;
    return { ...numbers, ok };
  });
  return { ok: accounts.every((account) => account.ok), accounts };
}

/**
 * The check as the operator reads it (`admin.billing.checkLedger`, the CLI's
 * `billing:check-ledger`): every amount in credits with at most 6 decimals,
 * like every other JSON answer. The comparisons were made in micro-credits.
 */
export function ledgerCheckInCredits(check: { ok: boolean; accounts: LedgerCheckRow[] }): { ok: boolean; accounts: LedgerCheckRow[] } {
  return {
    ok: check.ok,
    accounts: check.accounts.map(({ account_id, ok, ...amounts }) => ({
      account_id,
      ...(Object.fromEntries(Object.entries(amounts).map(([name, micro]) => [name, microToCredits(micro)])) as Omit<LedgerSums, 'account_id'>),
      ok,
    })),
  };
}
