/**
 * The SQL of credit holds and settlement (server/billing): reserving credit,
 * writing a batch of finished requests, the instances' heartbeats and the
 * recovery of holds left by instances that stopped.
 */
import { sql, type Insertable, type Selectable } from 'kysely';
import type { UsageTable } from '../schema.js';
import type { Executor } from './executor.js';

/** How a hold grows into headroom for the next requests of the same account. */
export interface HeadroomRule {
  /** Headroom only while the account has this many times the hold available… */
  minFactor: number;
  /** …at most this many holds' worth… */
  multiple: number;
  /** …and at most this fraction of what is left. */
  fraction: number;
}

/**
 * One statement: reserves `amount` (plus headroom when credit is plentiful)
 * under `instanceId` if the balance and the cycle's limit cover it. Answers
 * the headroom granted, or undefined when refused (nothing changed).
 */
export async function reserveCredit(db: Executor, hold: { instanceId: string; accountId: string; amount: number }, rule: HeadroomRule): Promise<number | undefined> {
  const { instanceId, accountId, amount } = hold;
  const result = await sql<{ headroom: number }>`
    WITH account AS (
      SELECT id,
        CASE
          WHEN current_credits + vault_credits - held >= ${amount}::bigint * ${rule.minFactor}
            AND (daily_limit IS NULL OR daily_limit - cycle_spent - held >= ${amount}::bigint * ${rule.minFactor})
          THEN LEAST(
            ${amount}::bigint * ${rule.multiple},
            (current_credits + vault_credits - held - ${amount}) / ${rule.fraction},
            COALESCE((daily_limit - cycle_spent - held - ${amount}) / ${rule.fraction}, ${amount}::bigint * ${rule.multiple}))
          ELSE 0
        END AS headroom
      FROM accounts
      WHERE id = ${accountId}
        AND current_credits + vault_credits - held >= ${amount}
        AND (daily_limit IS NULL OR cycle_spent + held + ${amount} <= daily_limit)
      FOR NO KEY UPDATE
    ),
    reserved AS (
      UPDATE accounts SET held = accounts.held + ${amount} + account.headroom
      FROM account WHERE accounts.id = account.id
      RETURNING account.headroom
    )
    INSERT INTO credit_holds (instance_id, account_id, amount)
    SELECT ${instanceId}, ${accountId}, ${amount} + headroom FROM reserved
    ON CONFLICT (instance_id, account_id) DO UPDATE SET amount = credit_holds.amount + EXCLUDED.amount
    RETURNING (SELECT headroom FROM reserved) AS headroom`.execute(db);
  const row = result.rows[0];
  return row ? Number(row.headroom) : undefined;
}

/** An account's balances and what is held on it, for the answer to a refused hold; undefined when no such account. */
export async function readAccountFunds(db: Executor, accountId: string) {
  const row = await db.selectFrom('accounts').select(['current_credits', 'vault_credits', 'held', 'daily_limit', 'cycle_spent']).where('id', '=', accountId).executeTakeFirst();
  if (!row) return undefined;
  return { current: Number(row.current_credits), vault: Number(row.vault_credits), held: Number(row.held), dailyLimit: row.daily_limit === null ? null : Number(row.daily_limit) };
}

/** Registers the instance, or renews its heartbeat. */
export async function upsertInstance(db: Executor, instanceId: string): Promise<void> {
  await db
    .insertInto('instances')
    .values({ id: instanceId, heartbeat_at: new Date() })
    .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat_at: new Date() }))
    .execute();
}

/** A stopping instance leaves: its settled (empty) holds and its registration go; open holds stay for recovery. */
export async function removeInstance(db: Executor, instanceId: string): Promise<void> {
  await db.deleteFrom('credit_holds').where('instance_id', '=', instanceId).where('amount', '=', 0).execute();
  await db.deleteFrom('instances').where('id', '=', instanceId).execute();
}

/** Instances other than `instanceId` that stopped heartbeating, and holders of holds that no longer have an instance row. */
export async function findAbandonedInstances(db: Executor, instanceId: string, staleAfterSeconds: number): Promise<string[]> {
  const stale = await db
    .selectFrom('instances')
    .select('id')
    .where('heartbeat_at', '<', sql<Date>`now() - make_interval(secs => ${staleAfterSeconds})`)
    .where('id', '!=', instanceId)
    .execute();
  const orphaned = await db
    .selectFrom('credit_holds')
    .select('instance_id')
    .distinct()
    .where('instance_id', 'not in', db.selectFrom('instances').select('id'))
    .execute();
  return [...new Set([...stale.map((row) => row.id), ...orphaned.map((row) => row.instance_id)])];
}

/**
 * Releases every hold of an abandoned instance and forgets the instance; run
 * inside a transaction. Accounts are locked first, in id order, as settlement
 * locks them: a settlement of that instance still running (it was only slow)
 * cannot deadlock with this.
 */
export async function releaseInstanceHolds(trx: Executor, instanceId: string): Promise<void> {
  const held = await trx.selectFrom('credit_holds').select('account_id').where('instance_id', '=', instanceId).execute();
  await lockAccounts(trx, held.map((row) => row.account_id));
  const holds = await trx.deleteFrom('credit_holds').where('instance_id', '=', instanceId).returning(['account_id', 'amount']).execute();
  for (const hold of holds) {
    await trx
      .updateTable('accounts')
      .set({ held: sql`GREATEST(held - ${hold.amount}, 0)` })
      .where('id', '=', hold.account_id)
      .execute();
  }
  await trx.deleteFrom('instances').where('id', '=', instanceId).execute();
}

/**
 * Locks accounts for settlement, in id order, with the lock that does not
 * conflict with the foreign-key checks (FOR KEY SHARE) of usage and ledger
 * inserts: settlements of two instances for the same accounts queue one
 * behind the other instead of deadlocking, and every statement after this
 * one in the transaction sees the accounts' and holds' latest state.
 */
export async function lockAccounts(trx: Executor, accountIds: string[]): Promise<void> {
  if (accountIds.length === 0) return;
  await sql`SELECT id FROM accounts WHERE id = ANY(${[...accountIds].sort()}::text[]) ORDER BY id FOR NO KEY UPDATE`.execute(trx);
}

/** `snake_case` → `camelCase`, for column names. */
type CamelCase<Name extends string> = Name extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : Name;

/**
 * A usage row's values as the gateway handles them: the `usage` table's
 * columns (db/schema.ts) in camelCase, without the generated id and the
 * stored price (carried as an object or as JSON text by the users of this).
 */
export type UsageColumns = { [Column in Exclude<keyof Selectable<UsageTable>, 'id' | 'price'> as CamelCase<Column>]: Selectable<UsageTable>[Column] };

/** A finished request, or a hold release, as settlement writes it. */
export interface SettlementRow extends UsageColumns {
  /** The price as JSON text (one per model, shared by its rows). */
  priceJson: string;
  /** The hold to release (at most what this instance still holds for the account). */
  heldAmount: number;
  /** False for a release without a usage row (a request refused before a provider, handed-back headroom). */
  billable: boolean;
}

/** The `usage` table's insert of a row. */
function toUsageInsert(row: SettlementRow): Insertable<UsageTable> {
  return {
    request_id: row.requestId, account_id: row.accountId, key_id: row.keyId, model: row.model, endpoint: row.endpoint, provider: row.provider,
    input_tokens: row.inputTokens, output_tokens: row.outputTokens, cached_input_tokens: row.cachedInputTokens, units: row.units,
    status: row.status, error_code: row.errorCode, stream: row.stream, aborted: row.aborted, latency_ms: Math.round(row.latencyMs),
    cost: row.cost, price: row.priceJson, discount_percentage: row.discountPercentage, created_at: row.createdAt,
  };
}

/**
 * Settles rows in ONE statement (the database function `umg_settle`, whose
 * plans each connection keeps), inside a transaction: locks their accounts as
 * {@link lockAccounts} does, then inserts the billable rows' usage (each once
 * and with its final cost; a request id already stored is skipped), then per
 * account releases the holds of the rows written (and of the releases),
 * charges the written rows' costs — from current_credits first, then the
 * vault, never below zero: what the balance cannot cover is recorded as the
 * ledger entry's `uncharged` — and writes one ledger entry for the batch.
 * Answers the request ids that were inserted.
 */
export async function settleRows(trx: Executor, batch: { instanceId: string; batchId: string; rows: SettlementRow[] }): Promise<Set<string>> {
  const prices: string[] = [];
  const priceIndex = new Map<string, number>();
  const rows = batch.rows.map((row) => {
    let index = priceIndex.get(row.priceJson);
    if (index === undefined) {
      index = prices.length;
      priceIndex.set(row.priceJson, index);
      prices.push(row.priceJson);
    }
    // Short keys: the whole batch goes as one JSON parameter.
    return {
      q: row.requestId, a: row.accountId, k: row.keyId, m: row.model, e: row.endpoint, p: row.provider,
      it: row.inputTokens, ot: row.outputTokens, ct: row.cachedInputTokens, u: row.units, s: row.status, x: row.errorCode,
      st: row.stream, ab: row.aborted, l: Math.round(row.latencyMs), c: row.cost, pi: index, d: row.discountPercentage,
      t: row.createdAt.toISOString(), h: row.heldAmount, b: row.billable,
    };
  });
  // One statement: umg_settle (migration 2026-11-24T0400) locks the accounts, then writes.
  const result = await sql<{ request_id: string }>`SELECT umg_settle(${batch.instanceId}, ${batch.batchId}, ${JSON.stringify(rows)}::json, ${`[${prices.join(',')}]`}::jsonb) AS request_id`.execute(trx);
  return new Set(result.rows.map((row) => row.request_id));
}

/**
 * Closes a background job's billing inside a transaction that has taken the
 * job's hold (`released`, 0 when it held nothing): inserts its usage row once
 * (its request id is the job id), releases the hold and charges the cost as a
 * batch does (never below zero, the rest `uncharged`). False when the account
 * is gone, or when there was neither a hold nor room for the usage row (the
 * job was settled already).
 */
export async function settleJobRow(trx: Executor, row: SettlementRow, released: number): Promise<boolean> {
  const account = await trx
    .selectFrom('accounts')
    .select(['current_credits', 'vault_credits', 'held'])
    .where('id', '=', row.accountId)
    .forNoKeyUpdate()
    .executeTakeFirst();
  if (!account) return false;
  const inserted = await trx
    .insertInto('usage')
    .values(toUsageInsert(row))
    .onConflict((oc) => oc.column('request_id').doNothing())
    .returning('request_id')
    .executeTakeFirst();
  if (released === 0 && !inserted) return false;
  const current = Number(account.current_credits);
  const held = Math.max(0, Number(account.held) - released);
  const cost = inserted ? row.cost : 0;
  const charge = Math.max(0, Math.min(cost, current + Number(account.vault_credits) - held));
  const fromCurrent = Math.min(charge, current);
  const fromVault = charge - fromCurrent;
  await trx
    .updateTable('accounts')
    .set({
      held,
      current_credits: sql`current_credits - ${fromCurrent}`,
      vault_credits: sql`vault_credits - ${fromVault}`,
      cycle_spent: sql`cycle_spent + ${charge}`,
    })
    .where('id', '=', row.accountId)
    .execute();
  if (cost > 0) {
    await trx
      .insertInto('ledger')
      .values({ account_id: row.accountId, kind: 'charge', current_delta: -fromCurrent, vault_delta: -fromVault, uncharged: cost - charge, request_id: row.requestId, note: '1 requests' })
      .execute();
  }
  return true;
}
