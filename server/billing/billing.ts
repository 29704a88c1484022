import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { MicroPrice } from './money.js';
import { runResetCycles } from './credits.js';
import { LeaseBook } from './credit-leases.js';
import { notify } from '../../db/client.js';
import { insertJobHold, takeJobHold } from '../../db/queries/job-holds.queries.js';
import { setTimeout as sleep } from 'node:timers/promises';

/** Prices are shared per model: serialise each once. */
const priceJsonCache = new WeakMap<object, string>();
function priceJson(price: object): string {
  let json = priceJsonCache.get(price);
  if (json === undefined) {
    json = JSON.stringify(price);
    priceJsonCache.set(price, json);
  }
  return json;
}

/** Instances are asked to hand back headroom on this channel (payload: the account id). */
export const BILLING_CHANNEL = 'umg_billing';
/** Headroom is granted only while the account has this many times the request's hold available… */
const LEASE_MIN_FACTOR = 1000;
/** …and is at most this many holds' worth… */
const LEASE_MULTIPLE = 64;
/** …and at most this fraction of what is left. */
const LEASE_FRACTION = 16;
/** Headroom unused this long goes back to the account. */
const LEASE_IDLE_MS = 1_000;
const PRESSURE_RETRIES = 3;
const PRESSURE_DELAY_MS = 25;
/** A flush failing on every tick (the database is away) is logged this often. */
const FAILURE_LOG_INTERVAL_MS = 10_000;

/** A finished request, as it will be written: one usage row and, when it cost something, one charge. */
export interface UsageEntry {
  requestId: string;
  accountId: string;
  keyId: string | null;
  model: string;
  endpoint: string;
  provider: string | null;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  units: number;
  status: number;
  errorCode: string | null;
  stream: boolean;
  aborted: boolean;
  latencyMs: number;
  /** Cost after discount, micro-credits. */
  cost: number;
  price: MicroPrice | Record<string, never>;
  discountPercentage: number;
  /** The hold taken for this request, released by the same transaction that charges it. */
  heldAmount: number;
  createdAt: Date;
}

export interface BillingOptions {
  instanceId: string;
  flushIntervalMs: number;
  /** A batch never holds more rows than this. */
  maxBatch?: number;
  log: Logger;
}

/**
 * Credit holds and settlement.
 *
 * A hold is one atomic statement in PostgreSQL (raise `accounts.held` only if
 * the balance and the cycle's limit still cover it, and remember it under this
 * instance in `credit_holds`), so the sum of what all instances hold never
 * exceeds a balance. Settlement is off the request path: finished requests
 * queue here and are written in batches, each batch one transaction (usage
 * rows, ledger entries, balances, hold release together), so the balance and
 * the ledger always agree. A usage row's request id is unique: a batch retried
 * after an uncertain commit charges nothing twice. Holds of an instance that
 * stops heartbeating are released by the survivors.
 */
export class Billing {
  private queue: UsageEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private ticking = false;
  private beating: Promise<void> | undefined;
  /** Entries of a batch whose transaction failed (its commit may still have happened). */
  private readonly uncertain = new WeakSet<UsageEntry>();
  /** Ids given to requests whose own id was already taken by another request. */
  private readonly derivedIds = new WeakMap<UsageEntry, string>();
  private readonly maxBatch: number;
  private readonly leases = new LeaseBook();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: BillingOptions,
  ) {
    this.maxBatch = options.maxBatch ?? 500;
  }

  async start(): Promise<void> {
    await this.db
      .insertInto('instances')
      .values({ id: this.options.instanceId, heartbeat_at: new Date() })
      .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat_at: new Date() }))
      .execute();
    this.timer = setInterval(() => {
      // One tick at a time: a flush waiting on an unreachable database must not gather a queue of ticks behind it.
      if (this.ticking) return;
      this.ticking = true;
      this.tick()
        .then(
          (wrote) => {
            if (wrote) this.onFlushSucceeded();
          },
          (error: Error) => this.onFlushFailed(error),
        )
        .finally(() => {
          this.ticking = false;
        });
    }, this.options.flushIntervalMs);
    this.timer.unref();
    this.heartbeatTimer = setInterval(() => {
      this.beating ??= this.heartbeat()
        .catch((error: Error) => this.options.log.warn('billing.heartbeat_failed', { message: error.message }))
        .finally(() => {
          this.beating = undefined;
        });
    }, 2_000);
    this.heartbeatTimer.unref();
    await this.recoverAbandonedHolds();
  }

  /**
   * Reserves `amount` micro-credits for a request, or refuses with 402.
   *
   * Served from this instance's headroom for the account when it has some (no
   * database round trip). Otherwise one atomic statement reserves the amount —
   * plus, when the account has far more credit than the request needs, some
   * headroom for the next requests (at most 1/16 of what is left, so a few
   * instances can never strand much of a balance). When the statement finds
   * the balance short while credit is reserved, other instances are asked to
   * hand their headroom back and the hold is tried again before refusing.
   */
  async hold(accountId: string, amount: number): Promise<void> {
    if (amount <= 0) return;
    if (this.leases.take(accountId, amount)) return;
    for (let attempt = 0; ; attempt++) {
      const headroom = await this.holdInDatabase(accountId, amount);
      if (headroom !== undefined) {
        this.leases.add(accountId, headroom);
        return;
      }
      await this.waitAfterRefusal(accountId, amount, attempt);
    }
  }

  /**
   * A hold was refused. When other holds (instances' headroom) could make
   * room, they are asked to hand it back and this returns after a short wait
   * so the caller tries again; otherwise it throws the 402 to answer.
   */
  private async waitAfterRefusal(accountId: string, amount: number, attempt: number): Promise<void> {
    const account = await this.db
      .selectFrom('accounts')
      .select(['current_credits', 'vault_credits', 'held', 'daily_limit', 'cycle_spent'])
      .where('id', '=', accountId)
      .executeTakeFirst();
    if (!account) throw new GatewayError('INSUFFICIENT_CREDITS', 'The account balance cannot cover this request.');
    const available = account.current_credits + account.vault_credits - account.held;
    const headroomElsewhere = account.held > 0 && available + account.held >= amount;
    if (headroomElsewhere && attempt < PRESSURE_RETRIES) {
      await notify(this.db, BILLING_CHANNEL, accountId);
      await sleep(PRESSURE_DELAY_MS * 2 ** attempt);
      return;
    }
    if (account.daily_limit !== null && available >= amount) {
      throw new GatewayError('DAILY_LIMIT_EXCEEDED', 'The account has reached its spending limit for this reset cycle.');
    }
    throw new GatewayError('INSUFFICIENT_CREDITS', 'The account balance cannot cover this request.');
  }

  /**
   * Reserves `amount` for a background job (a video) that outlives the
   * request and the instance: the hold belongs to the job (`job_holds`), not
   * to this instance, so instance recovery never releases it; it ends only
   * through {@link settleJob} or {@link releaseJob}. `within` runs in the same
   * transaction (it records the job), so there is never a hold without its
   * job nor a job without its hold. 402 when the account cannot cover it.
   */
  async holdForJob(accountId: string, amount: number, jobId: string, within: (trx: Transaction<Database>) => Promise<void>): Promise<void> {
    if (amount <= 0) {
      await this.db.transaction().execute(within);
      return;
    }
    for (let attempt = 0; ; attempt++) {
      const held = await this.db.transaction().execute(async (trx) => {
        if (!(await insertJobHold(trx, { jobId, accountId, amount }))) return false;
        await within(trx);
        return true;
      });
      if (held) return;
      await this.waitAfterRefusal(accountId, amount, attempt);
    }
  }

  /**
   * Ends a job's hold with its one usage row, in one transaction: the usage
   * row (its request id is the job id, unique), the charge (`entry.cost`, at
   * most what the account has once the hold is released), the ledger entry
   * and the release. `guard` runs first in that transaction (the job's own
   * state change, e.g. `processing → completed` while holding the lease);
   * when it answers false nothing is written. A second settlement of the
   * same job finds neither the hold nor room for a second usage row and
   * writes nothing. True when this call settled the job.
   */
  async settleJob(jobId: string, entry: UsageEntry, guard?: (trx: Transaction<Database>) => Promise<boolean>): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      if (guard && !(await guard(trx))) return false;
      return this.closeJobIn(trx, jobId, entry);
    });
  }

  /** Like {@link settleJob} with nothing charged: the job failed or was deleted before it completed. Its usage row has cost 0. */
  async releaseJob(jobId: string, entry: UsageEntry, guard?: (trx: Transaction<Database>) => Promise<boolean>): Promise<boolean> {
    return this.settleJob(jobId, { ...entry, cost: 0 }, guard);
  }

  private async closeJobIn(trx: Transaction<Database>, jobId: string, entry: UsageEntry): Promise<boolean> {
    const hold = await takeJobHold(trx, jobId);
    const accountId = hold?.accountId ?? entry.accountId;
    const account = await trx
      .selectFrom('accounts')
      .select(['current_credits', 'vault_credits', 'held', 'cycle_spent'])
      .where('id', '=', accountId)
      .forNoKeyUpdate()
      .executeTakeFirst();
    if (!account) return false;
    const inserted = await this.insertUsage(trx, [{ ...entry, requestId: jobId, accountId, heldAmount: hold?.amount ?? 0 }]);
    const usageId = inserted.get(jobId);
    if (!hold && usageId === undefined) return false;
    const released = hold?.amount ?? 0;
    const held = Math.max(0, account.held - released);
    let charge = 0;
    if (usageId !== undefined && entry.cost > 0) {
      charge = Math.max(0, Math.min(entry.cost, account.current_credits + account.vault_credits - held));
    }
    const fromCurrent = Math.min(charge, account.current_credits);
    const fromVault = charge - fromCurrent;
    await trx
      .updateTable('accounts')
      .set({
        held,
        current_credits: account.current_credits - fromCurrent,
        vault_credits: account.vault_credits - fromVault,
        cycle_spent: account.cycle_spent + charge,
      })
      .where('id', '=', accountId)
      .execute();
    if (charge > 0 && usageId !== undefined) {
      await trx.updateTable('usage').set({ cost: charge }).where('id', '=', usageId).execute();
      await trx
        .insertInto('ledger')
        .values({ account_id: accountId, kind: 'charge', current_delta: -fromCurrent, vault_delta: -fromVault, usage_id: usageId, request_id: jobId })
        .execute();
    }
    return true;
  }

  /** One statement: reserve `amount` (+ headroom when credit is plentiful); the headroom granted, or undefined when refused. */
  private async holdInDatabase(accountId: string, amount: number): Promise<number | undefined> {
    const result = await sql<{ headroom: number }>`
      WITH account AS (
        SELECT id,
          CASE
            WHEN current_credits + vault_credits - held >= ${amount}::bigint * ${LEASE_MIN_FACTOR}
              AND (daily_limit IS NULL OR daily_limit - cycle_spent - held >= ${amount}::bigint * ${LEASE_MIN_FACTOR})
            THEN LEAST(
              ${amount}::bigint * ${LEASE_MULTIPLE},
              (current_credits + vault_credits - held - ${amount}) / ${LEASE_FRACTION},
              COALESCE((daily_limit - cycle_spent - held - ${amount}) / ${LEASE_FRACTION}, ${amount}::bigint * ${LEASE_MULTIPLE}))
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
      SELECT ${this.options.instanceId}, ${accountId}, ${amount} + headroom FROM reserved
      ON CONFLICT (instance_id, account_id) DO UPDATE SET amount = credit_holds.amount + EXCLUDED.amount
      RETURNING (SELECT headroom FROM reserved) AS headroom`.execute(this.db);
    const row = result.rows[0];
    return row ? Number(row.headroom) : undefined;
  }

  /** Another instance ran short on this account: hand back our headroom for it now. */
  async onPressure(accountId: string): Promise<void> {
    const released = this.leases.drain(accountId);
    if (released.length === 0) return;
    for (const lease of released) this.release(lease.accountId, lease.amount, `lease-${randomBytes(8).toString('hex')}`);
    await this.writePending();
  }

  /** Queues a finished request for the next batch. Never throws, never waits on the database. */
  record(entry: UsageEntry): void {
    this.queue.push(entry);
    // While the database is away the tick keeps retrying; a full batch does not add an attempt per request.
    if (this.queue.length >= this.maxBatch && this.failingSince === undefined) void this.writePending().catch(() => undefined);
  }

  /** Since when flushes fail (the database is away), for the log; undefined while they succeed. */
  private failingSince: number | undefined;
  private lastFailureLog = 0;

  /**
   * A failed flush loses nothing: the batch stays queued and the next tick
   * writes it. During an outage the ticks fail every interval, so the error
   * is logged once and then at most every FAILURE_LOG_INTERVAL_MS.
   */
  private onFlushFailed(error: Error): void {
    const now = Date.now();
    this.failingSince ??= now;
    if (now - this.lastFailureLog < FAILURE_LOG_INTERVAL_MS) return;
    this.lastFailureLog = now;
    this.options.log.error('billing.flush_failed', { message: error.message, pending: this.queue.length, failingForMs: now - this.failingSince });
  }

  private onFlushSucceeded(): void {
    if (this.failingSince === undefined) return;
    this.options.log.warn('billing.flush_recovered', { failedForMs: Date.now() - this.failingSince, pending: this.queue.length });
    this.failingSince = undefined;
    this.lastFailureLog = 0;
  }

  /** Releases a hold for a request that will write no usage row (refused before it reached a provider). */
  release(accountId: string, amount: number, requestId: string): void {
    if (amount <= 0) return;
    this.record({
      requestId,
      accountId,
      keyId: null,
      model: '',
      endpoint: '',
      provider: null,
      inputTokens: 0,
      outputTokens: 0,
      cachedInputTokens: 0,
      units: 0,
      status: 0,
      errorCode: 'RELEASED',
      stream: false,
      aborted: false,
      latencyMs: 0,
      cost: 0,
      price: {},
      discountPercentage: 0,
      heldAmount: amount,
      createdAt: new Date(),
    });
  }

  get pending(): number {
    return this.queue.length;
  }

  /** Hands back all headroom and writes everything queued (tests, shutdown, maintenance). */
  async flush(): Promise<void> {
    for (const lease of this.leases.drain()) this.release(lease.accountId, lease.amount, `lease-${randomBytes(8).toString('hex')}`);
    await this.writePending();
  }

  /** Hands back headroom idle for a while, then writes what is queued (the periodic tick); true when it wrote something. */
  private async tick(): Promise<boolean> {
    for (const lease of this.leases.drainIdle(LEASE_IDLE_MS)) this.release(lease.accountId, lease.amount, `lease-${randomBytes(8).toString('hex')}`);
    return this.writePending();
  }

  /** Writes everything queued; concurrent callers share one flush. True when a batch was written. */
  private async writePending(): Promise<boolean> {
    while (this.flushing) await this.flushing;
    if (this.queue.length === 0) return false;
    const batch = this.queue.slice(0, this.maxBatch);
    this.flushing = this.writeBatch(batch)
      .then(
        () => {
          this.queue.splice(0, batch.length);
        },
        (error: unknown) => {
          // The commit may have happened all the same: on the retry, a row already stored under an entry's id is its own.
          for (const entry of batch) this.uncertain.add(entry);
          throw error;
        },
      )
      .finally(() => {
        this.flushing = undefined;
      });
    await this.flushing;
    if (this.queue.length > 0) await this.writePending();
    return true;
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.heartbeatTimer);
    // A heartbeat under way would register this instance again after it left.
    await this.beating;
    await this.flush();
    // Settled rows go; a hold of a request still running stays and is recovered by the survivors.
    await this.db.deleteFrom('credit_holds').where('instance_id', '=', this.options.instanceId).where('amount', '=', 0).execute();
    await this.db.deleteFrom('instances').where('id', '=', this.options.instanceId).execute();
  }

  private async writeBatch(batch: UsageEntry[]): Promise<void> {
    const accountIds = [...new Set(batch.map((entry) => entry.accountId))].sort();
    await this.db.transaction().execute(async (trx) => {
      // Lock the accounts first, in id order, and with the lock that does not
      // conflict with the foreign-key checks (FOR KEY SHARE) of the usage and
      // ledger inserts: batches of two instances for the same accounts then
      // queue one behind the other instead of deadlocking.
      const accounts = await trx
        .selectFrom('accounts')
        .select(['id', 'current_credits', 'vault_credits', 'held', 'cycle_spent'])
        .where('id', 'in', accountIds)
        .orderBy('id')
        .forNoKeyUpdate()
        .execute();
      // What this instance still holds: a hold that another instance already
      // recovered (this one missed its heartbeats) must not be released twice.
      const ownHolds = await trx
        .selectFrom('credit_holds')
        .select(['account_id', 'amount'])
        .where('instance_id', '=', this.options.instanceId)
        .where('account_id', 'in', accountIds)
        .forUpdate()
        .execute();
      const ownHeld = new Map(ownHolds.map((hold) => [hold.account_id, Number(hold.amount)]));
      const billable = batch.filter((entry) => entry.status !== 0);
      const written = new Map<UsageEntry, number>();
      let pending = billable;
      // Round two writes the requests whose id another request already took.
      for (let round = 0; round < 2 && pending.length > 0; round++) {
        const inserted = await this.insertUsage(trx, pending);
        const collided: UsageEntry[] = [];
        for (const entry of pending) {
          const usageId = inserted.get(this.requestIdOf(entry));
          if (usageId !== undefined) {
            written.set(entry, usageId);
            // A second entry of this batch with the same id does not claim the same row.
            inserted.delete(this.requestIdOf(entry));
          } else if (!this.uncertain.has(entry)) {
            // Not written by an earlier attempt, so another request uses this id
            // (clients may choose their x-request-id): bill it under an id of its own.
            collided.push(entry);
          }
        }
        for (const entry of collided) this.derivedIds.set(entry, `${entry.requestId}~${randomBytes(6).toString('hex')}`);
        pending = collided;
      }
      const state = new Map(accounts.map((account) => [account.id, { ...account, own: ownHeld.get(account.id) ?? 0, released: 0 }]));
      const ledger: Array<{ account_id: string; kind: string; current_delta: number; vault_delta: number; usage_id: number; request_id: string }> = [];
      const charged = new Map<number, number>();
      for (const entry of batch) {
        const account = state.get(entry.accountId);
        if (!account) continue;
        const usageId = written.get(entry);
        // A request already written by an earlier attempt of this batch keeps its hold released only once.
        if (entry.status !== 0 && usageId === undefined) continue;
        const release = Math.min(entry.heldAmount, account.own);
        account.own -= release;
        account.held -= release;
        account.released += release;
        if (usageId === undefined || entry.cost <= 0) continue;
        const available = account.current_credits + account.vault_credits - account.held;
        const charge = Math.max(0, Math.min(entry.cost, available));
        const fromCurrent = Math.min(charge, account.current_credits);
        const fromVault = charge - fromCurrent;
        account.current_credits -= fromCurrent;
        account.vault_credits -= fromVault;
        account.cycle_spent += charge;
        if (charge > 0) {
          charged.set(usageId, charge);
          ledger.push({ account_id: account.id, kind: 'charge', current_delta: -fromCurrent, vault_delta: -fromVault, usage_id: usageId, request_id: this.requestIdOf(entry) });
        }
      }
      // One statement for the batch's costs (a statement per row made batches slow on PGlite).
      const costs = [...charged];
      for (let offset = 0; offset < costs.length; offset += 500) {
        const values = sql.join(costs.slice(offset, offset + 500).map(([usageId, charge]) => sql`(${usageId}::bigint, ${charge}::bigint)`));
        await sql`UPDATE usage SET cost = v.cost FROM (VALUES ${values}) AS v(id, cost) WHERE usage.id = v.id`.execute(trx);
      }
      for (let offset = 0; offset < ledger.length; offset += 500) {
        await trx.insertInto('ledger').values(ledger.slice(offset, offset + 500)).execute();
      }
      for (const account of state.values()) {
        await trx
          .updateTable('accounts')
          .set({ current_credits: account.current_credits, vault_credits: account.vault_credits, held: account.held, cycle_spent: account.cycle_spent })
          .where('id', '=', account.id)
          .execute();
        if (account.released > 0) {
          await trx
            .updateTable('credit_holds')
            .set({ amount: sql`amount - ${account.released}` })
            .where('instance_id', '=', this.options.instanceId)
            .where('account_id', '=', account.id)
            .execute();
        }
      }
    });
  }

  /** The id a usage row is stored under: the request's, or one derived from it when another request had taken it. */
  private requestIdOf(entry: UsageEntry): string {
    return this.derivedIds.get(entry) ?? entry.requestId;
  }

  /** Inserts usage rows (cost 0 until charged), skipping ids already stored; answers the new rows' ids by request id. */
  /**
   * One statement per 500 rows, the columns sent as arrays (`unnest`): far
   * less work per row for the query builder and the driver than a VALUES
   * list with a placeholder per field.
   */
  private async insertUsage(trx: Transaction<Database>, entries: UsageEntry[]): Promise<Map<string, number>> {
    const inserted = new Map<string, number>();
    for (let offset = 0; offset < entries.length; offset += 500) {
      const rows = entries.slice(offset, offset + 500);
      const column = <T>(read: (entry: UsageEntry) => T): T[] => rows.map(read);
      const result = await sql<{ id: number; request_id: string }>`
        INSERT INTO usage (request_id, account_id, key_id, model, endpoint, provider, input_tokens, output_tokens,
          cached_input_tokens, units, status, error_code, stream, aborted, latency_ms, cost, price, discount_percentage, created_at)
        SELECT request_id, account_id, key_id, model, endpoint, provider, input_tokens, output_tokens,
          cached_input_tokens, units, status, error_code, stream, aborted, latency_ms, 0, price, discount_percentage, created_at
        FROM unnest(
          ${column((entry) => this.requestIdOf(entry))}::text[], ${column((entry) => entry.accountId)}::text[],
          ${column((entry) => entry.keyId)}::text[], ${column((entry) => entry.model)}::text[],
          ${column((entry) => entry.endpoint)}::text[], ${column((entry) => entry.provider)}::text[],
          ${column((entry) => entry.inputTokens)}::int[], ${column((entry) => entry.outputTokens)}::int[],
          ${column((entry) => entry.cachedInputTokens)}::int[], ${column((entry) => entry.units)}::bigint[],
          ${column((entry) => entry.status)}::int[], ${column((entry) => entry.errorCode)}::text[],
          ${column((entry) => entry.stream)}::bool[], ${column((entry) => entry.aborted)}::bool[],
          ${column((entry) => Math.round(entry.latencyMs))}::int[], ${column((entry) => priceJson(entry.price))}::jsonb[],
          ${column((entry) => entry.discountPercentage)}::int[], ${column((entry) => entry.createdAt.toISOString())}::timestamptz[]
        ) AS row(request_id, account_id, key_id, model, endpoint, provider, input_tokens, output_tokens,
          cached_input_tokens, units, status, error_code, stream, aborted, latency_ms, price, discount_percentage, created_at)
        ON CONFLICT (request_id) DO NOTHING
        RETURNING id, request_id`.execute(trx);
      for (const row of result.rows) inserted.set(row.request_id, Number(row.id));
    }
    return inserted;
  }


  private beats = 0;

  private async heartbeat(): Promise<void> {
    // An upsert, not an update: an instance that others took for dead (and
    // whose row they deleted) registers again instead of having every later
    // hold recovered from under it as an orphan.
    await this.db
      .insertInto('instances')
      .values({ id: this.options.instanceId, heartbeat_at: new Date() })
      .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat_at: new Date() }))
      .execute();
    await this.recoverAbandonedHolds();
    // Reset cycles are checked every ~30 s; the sweep itself runs on one instance at a time.
    if (this.beats++ % 15 === 0) await runResetCycles(this.db, this.options.log);
  }

  /** Releases holds of instances that stopped heartbeating (crashed or killed). */
  async recoverAbandonedHolds(staleAfterSeconds = 15): Promise<void> {
    const stale = await this.db
      .selectFrom('instances')
      .select('id')
      .where('heartbeat_at', '<', sql<Date>`now() - make_interval(secs => ${staleAfterSeconds})`)
      .where('id', '!=', this.options.instanceId)
      .execute();
    const orphaned = await this.db
      .selectFrom('credit_holds')
      .select('instance_id')
      .distinct()
      .where('instance_id', 'not in', this.db.selectFrom('instances').select('id'))
      .execute();
    const ids = [...new Set([...stale.map((row) => row.id), ...orphaned.map((row) => row.instance_id)])];
    for (const instanceId of ids) {
      await this.db.transaction().execute(async (trx) => {
        // Accounts first, in id order, as settlement locks them: a settlement
        // of the same instance still running (it was only slow) cannot deadlock with this.
        const held = await trx.selectFrom('credit_holds').select('account_id').where('instance_id', '=', instanceId).execute();
        const accountIds = held.map((row) => row.account_id);
        if (accountIds.length > 0) {
          await trx.selectFrom('accounts').select('id').where('id', 'in', accountIds).orderBy('id').forNoKeyUpdate().execute();
        }
        const holds = await trx.deleteFrom('credit_holds').where('instance_id', '=', instanceId).returning(['account_id', 'amount']).execute();
        for (const hold of holds) {
          await trx
            .updateTable('accounts')
            .set({ held: sql`GREATEST(held - ${hold.amount}, 0)` })
            .where('id', '=', hold.account_id)
            .execute();
        }
        await trx.deleteFrom('instances').where('id', '=', instanceId).execute();
      });
      this.options.log.warn('billing.recovered_holds', { instance: instanceId });
    }
  }
}
