/**
 * Readers of what billing wrote, straight from a test gateway's database:
 * usage rows, balances and holds. Billing queues rows and charges and writes
 * them in batches, so a reader either flushes first (and says so) or reads
 * what the database holds right now, which is what durability tests look at.
 */
import { sql } from 'kysely';
import type { UsageRow } from '../../db/schema.js';
import type { TestGateway } from './gateway.js';
import { waitFor } from './wait.js';

/**
 * How long a usage row may take to appear: a stream's row is queued when the
 * pipeline notices the end (after an abort, a moment after the client left).
 * Milliseconds on an idle machine; the budget is for a busy one.
 */
const USAGE_ROW_BUDGET_MS = 15_000;

/** Writes every queued usage row and charge of these instances. */
export async function flushAll(...gateways: TestGateway[]): Promise<void> {
  for (const gateway of gateways) await gateway.gateway.services.billing.flush();
}

/** The usage rows of an account as the database holds them now (no flush), oldest first. */
export async function usageRowsOf(gateway: TestGateway, accountId: string): Promise<UsageRow[]> {
  return gateway.gateway.services.db.selectFrom('usage').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
}

/** The usage row of one request, flushing the instance until billing has written it. */
export async function usageRowOf(gateway: TestGateway, requestId: string, timeoutMs = USAGE_ROW_BUDGET_MS): Promise<UsageRow> {
  const { db, billing } = gateway.gateway.services;
  let row: UsageRow | undefined;
  await waitFor(
    async () => {
      await billing.flush();
      row = await db.selectFrom('usage').selectAll().where('request_id', '=', requestId).executeTakeFirst();
      return row !== undefined;
    },
    { timeoutMs, intervalMs: 20, message: `the usage row of request ${requestId} to be written` },
  );
  return row!;
}

/** An account's balances in micro-credits. */
export interface Balances {
  current: number;
  vault: number;
  /** The account's `held` column. */
  held: number;
  cycleSpent: number;
  /** Σ credit_holds of the account, every instance. */
  holds: number;
}

/** One statement, so balances and holds are read from one snapshot even while requests run. No flush. */
export async function balancesOf(gateway: TestGateway, accountId: string): Promise<Balances> {
  const { rows } = await sql<{ current_credits: number; vault_credits: number; held: number; cycle_spent: number; holds: number | null }>`
    SELECT current_credits, vault_credits, held, cycle_spent,
      (SELECT SUM(amount) FROM credit_holds h WHERE h.account_id = a.id) AS holds
    FROM accounts a WHERE a.id = ${accountId}`.execute(gateway.gateway.services.db);
  const account = rows[0];
  if (!account) throw new Error(`no account ${accountId}`);
  return {
    current: Number(account.current_credits),
    vault: Number(account.vault_credits),
    held: Number(account.held),
    cycleSpent: Number(account.cycle_spent),
    holds: Number(account.holds ?? 0),
  };
}

/** Σ of an account's ledger deltas per balance, no flush. */
export async function ledgerSumsOf(gateway: TestGateway, accountId: string): Promise<{ current: number; vault: number }> {
  const ledger = await gateway.gateway.services.db
    .selectFrom('ledger')
    .select((eb) => [eb.fn.sum<string>('current_delta').as('current'), eb.fn.sum<string>('vault_delta').as('vault')])
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return { current: Number(ledger.current), vault: Number(ledger.vault) };
}
