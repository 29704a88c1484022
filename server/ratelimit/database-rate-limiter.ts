import type { Kysely } from 'kysely';
import { addToRateWindow, deleteRateWindowsBefore } from '../../db/queries/rate-limits.queries.js';
import type { Database } from '../../db/schema.js';
import {
  UNLIMITED,
  WINDOW_MS,
  minuteWindow,
  normalizeLimit,
  toRateLimitResult,
  type RateLimitResult,
  type RateLimiter,
  type RateLimiterLog,
} from './rate-limiter.js';

export interface DatabaseRateLimiterOptions {
  /** Windows that ended longer ago than this are deleted. Default 5 minutes. */
  retentionMs?: number;
  log?: RateLimiterLog;
}

const DEFAULT_RETENTION_MS = 5 * WINDOW_MS;

/**
 * Fixed one-minute windows in the `rate_limits` table (see rate-limiter.ts
 * for the choice), for deployments without Redis. Each check is one upsert;
 * the row lock taken by ON CONFLICT DO UPDATE serialises concurrent checks on
 * the same key and window, from any instance.
 */
export class DatabaseRateLimiter implements RateLimiter {
  private readonly retentionMs: number;
  private readonly log: RateLimiterLog | undefined;
  private lastPrunedWindow = Number.NEGATIVE_INFINITY;
  /** Requests reserved ahead in the current window, per key (see `check`), and what the window had left beyond them. */
  private readonly spare = new Map<string, { windowStart: number; count: number; beyond: number }>();
  /** A reservation on its way to the database, per key: settles (never rejects) when it is done. */
  private readonly reserving = new Map<string, Promise<void>>();
  private pruning: Promise<void> | undefined;

  constructor(
    private readonly db: Kysely<Database>,
    options: DatabaseRateLimiterOptions = {},
  ) {
    this.retentionMs = options.retentionMs ?? DEFAULT_RETENTION_MS;
    this.log = options.log;
  }

  async check(keyId: string, limitPerMinute: number, now: number = Date.now()): Promise<RateLimitResult> {
    const limit = normalizeLimit(limitPerMinute);
    if (limit === 0) return { ...UNLIMITED };
    const window = minuteWindow(now);
    // Checks that arrive while this key's reservation is on its way wait for it and take from
    // what it reserved, instead of each paying a round trip of its own (50 concurrent requests
    // of one key were ~10 upserts per 64 requests before; now one).
    for (;;) {
      const fromSpare = this.takeSpare(keyId, window.start, limit, now);
      if (fromSpare) return fromSpare;
      const pending = this.reserving.get(keyId);
      if (!pending) break;
      await pending;
    }
    this.pruneOncePerWindow(window.start);
    if (this.spare.size > 100_000) this.spare.clear();
    // High limits reserve a few requests ahead (1/64 of the limit, at most 63) so that only one
    // check in so many pays a round trip; limits under 64 per minute stay exact. What one
    // instance reserved and did not use can make a key spread over instances be refused up
    // to that many requests early, never late: the window's count never passes the limit
    // for requests that were allowed.
    const ahead = Math.min(63, Math.floor(limit / 64));
    const take = 1 + ahead;
    const reservation = addToRateWindow(this.db, keyId, new Date(window.start), take).then((count) => {
      // Of the `take` requests just counted, those within the limit are ours: this one and the spare.
      const granted = Math.max(0, Math.min(take, limit - (count - take)));
      if (granted > 1) this.spare.set(keyId, { windowStart: window.start, count: granted - 1, beyond: Math.max(0, limit - count) });
      else this.spare.delete(keyId);
      return { count, granted };
    });
    const settled = reservation.then(
      () => undefined,
      () => undefined,
    );
    this.reserving.set(keyId, settled);
    try {
      const { count, granted } = await reservation;
      if (granted === 0) return toRateLimitResult(count, limit, now);
      return { allowed: true, remaining: Math.max(0, limit - count) + granted - 1, retryAfterSeconds: toRateLimitResult(0, limit, now).retryAfterSeconds };
    } finally {
      if (this.reserving.get(keyId) === settled) this.reserving.delete(keyId);
    }
  }

  /** One request from what this instance reserved ahead for the key in this window, if any is left. */
  private takeSpare(keyId: string, windowStart: number, limit: number, now: number): RateLimitResult | undefined {
    const reserved = this.spare.get(keyId);
    if (!reserved || reserved.windowStart !== windowStart || reserved.count <= 0) return undefined;
    reserved.count--;
    return { allowed: true, remaining: reserved.beyond + reserved.count, retryAfterSeconds: toRateLimitResult(0, limit, now).retryAfterSeconds };
  }

  /**
   * The first check this instance sees in a new window deletes old windows,
   * in the background so that no request waits for it. With several
   * instances each deletes about once a minute; the deletes are idempotent.
   */
  private pruneOncePerWindow(windowStart: number): void {
    if (windowStart <= this.lastPrunedWindow || this.pruning) return;
    this.lastPrunedWindow = windowStart;
    const cutoff = new Date(windowStart - this.retentionMs);
    this.pruning = deleteRateWindowsBefore(this.db, cutoff).then(
        () => undefined,
        (error: Error) => this.log?.('ratelimit.prune_failed', { message: error.message }),
      )
      .finally(() => {
        this.pruning = undefined;
      });
  }

  /** Waits for a running prune; the database handle belongs to the caller. */
  async close(): Promise<void> {
    await this.pruning;
  }
}
