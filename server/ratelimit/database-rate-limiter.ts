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
  /** Requests reserved ahead in the current window, per key (see `check`). */
  private readonly spare = new Map<string, { windowStart: number; count: number }>();
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
    const reserved = this.spare.get(keyId);
    if (reserved && reserved.windowStart === window.start && reserved.count > 0) {
      reserved.count--;
      return { allowed: true, remaining: reserved.count, retryAfterSeconds: toRateLimitResult(0, limit, now).retryAfterSeconds };
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
    const count = await addToRateWindow(this.db, keyId, new Date(window.start), take);
    // Of the `take` requests just counted, those within the limit are ours: this one and the spare.
    const granted = Math.max(0, Math.min(take, limit - (count - take)));
    if (granted === 0) return toRateLimitResult(count, limit, now);
    if (granted > 1) this.spare.set(keyId, { windowStart: window.start, count: granted - 1 });
    else this.spare.delete(keyId);
    return { allowed: true, remaining: Math.max(0, limit - count) + granted - 1, retryAfterSeconds: toRateLimitResult(0, limit, now).retryAfterSeconds };
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
