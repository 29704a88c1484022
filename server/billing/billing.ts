import { randomBytes } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import { runResetCycles } from './credits.js';
import { LeaseBook } from './credit-leases.js';
import { notify } from '../../db/client.js';
import { readAccountFunds, removeInstance, reserveCredit, upsertInstance, type HeadroomRule } from '../../db/queries/settlement.queries.js';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SettlementEntry, UsageRecord } from './usage-entry.js';
import { SettlementMemory, writeBatch } from './settlement.js';
import { settleJob, tryHoldForJob } from './job-billing.js';
import { recoverAbandonedHolds } from './hold-recovery.js';
import { findJobHold } from '../../db/queries/job-holds.queries.js';

export type { HoldRelease, SettlementEntry, UsageEntry, UsageRecord } from './usage-entry.js';

/** Instances are asked to hand back headroom on this channel (payload: the account id). */
export const BILLING_CHANNEL = 'umg_billing';
/** Headroom is granted only while the account has 1000× the request's hold available, is at most 64 holds' worth and 1/16 of what is left. */
const HEADROOM: HeadroomRule = { minFactor: 1000, multiple: 64, fraction: 16 };
/** Headroom unused this long goes back to the account. */
const LEASE_IDLE_MS = 1_000;
// 25, 50, … 800 ms: about 1.6 s in all for another instance (a loaded one) to hand its headroom back.
const PRESSURE_RETRIES = 6;
const PRESSURE_DELAY_MS = 25;
/** A flush failing on every tick (the database is away) is logged this often. */
const FAILURE_LOG_INTERVAL_MS = 10_000;

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
  private queue: SettlementEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private ticking = false;
  private beating: Promise<void> | undefined;
  /** Derived ids and entries of failed batches, across attempts. */
  private readonly memory = new SettlementMemory();
  private readonly maxBatch: number;
  private readonly leases = new LeaseBook();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly options: BillingOptions,
  ) {
    this.maxBatch = options.maxBatch ?? 500;
  }

  async start(): Promise<void> {
    await upsertInstance(this.db, this.options.instanceId);
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
      const headroom = await reserveCredit(this.db, { instanceId: this.options.instanceId, accountId, amount }, HEADROOM);
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
    const account = await readAccountFunds(this.db, accountId);
    if (!account) throw new GatewayError('INSUFFICIENT_CREDITS', 'The account balance cannot cover this request.');
    const available = account.current + account.vault - account.held;
    const headroomElsewhere = account.held > 0 && available + account.held >= amount;
    if (headroomElsewhere && attempt < PRESSURE_RETRIES) {
      await notify(this.db, BILLING_CHANNEL, accountId);
      await sleep(PRESSURE_DELAY_MS * 2 ** attempt);
      return;
    }
    if (account.dailyLimit !== null && available >= amount) {
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
    for (let attempt = 0; ; attempt++) {
      if (await tryHoldForJob(this.db, accountId, amount, jobId, within)) return;
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
  async settleJob(jobId: string, entry: UsageRecord, guard?: (trx: Transaction<Database>) => Promise<boolean>): Promise<boolean> {
    return settleJob(this.db, jobId, entry, guard);
  }

  /** What is still held for a job (0 once it is settled or released). */
  heldForJob(jobId: string): Promise<number> {
    return findJobHold(this.db, jobId);
  }

  /** Like {@link settleJob} with nothing charged: the job failed or was deleted before it completed. Its usage row has cost 0. */
  async releaseJob(jobId: string, entry: UsageRecord, guard?: (trx: Transaction<Database>) => Promise<boolean>): Promise<boolean> {
    return this.settleJob(jobId, { ...entry, cost: 0 }, guard);
  }

  /** Another instance ran short on this account: hand back our headroom for it now. */
  async onPressure(accountId: string): Promise<void> {
    const released = this.leases.drain(accountId);
    if (released.length === 0) return;
    for (const lease of released) this.release(lease.accountId, lease.amount, `lease-${randomBytes(8).toString('hex')}`);
    await this.writePending();
  }

  /** Queues a finished request for the next batch. Never throws, never waits on the database. */
  record(entry: UsageRecord): void {
    this.enqueue(entry);
  }

  private enqueue(entry: SettlementEntry): void {
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
    this.enqueue({ kind: 'release', requestId, accountId, amount });
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
    this.flushing = writeBatch(this.db, this.options.instanceId, batch, this.memory)
      .then(
        () => {
          this.queue.splice(0, batch.length);
        },
        (error: unknown) => {
          // The commit may have happened all the same: on the retry, a row already stored under an entry's id is its own.
          for (const entry of batch) this.memory.uncertain.add(entry);
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
    await removeInstance(this.db, this.options.instanceId);
  }

  private beats = 0;

  private async heartbeat(): Promise<void> {
    // An upsert, not an update: an instance that others took for dead (and
    // whose row they deleted) registers again instead of having every later
    // hold recovered from under it as an orphan.
    await upsertInstance(this.db, this.options.instanceId);
    await this.recoverAbandonedHolds();
    // Reset cycles are checked every ~30 s; the sweep itself runs on one instance at a time.
    if (this.beats++ % 15 === 0) await runResetCycles(this.db, this.options.log);
  }

  /** Releases holds of instances that stopped heartbeating (crashed or killed). */
  async recoverAbandonedHolds(staleAfterSeconds = 15): Promise<void> {
    await recoverAbandonedHolds(this.db, this.options.instanceId, this.options.log, staleAfterSeconds);
  }
}
