import { sql, type Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import {
  UNLIMITED,
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

// A literal, not 5 * WINDOW_MS: rate-limiter.ts imports this module, so its values are not initialised yet here.
const DEFAULT_RETENTION_MS = 300_000;

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
    this.pruneOncePerWindow(window.start);
    const result = await sql<{ count: number }>`
      INSERT INTO rate_limits (key_id, window_start, count)
      VALUES (${keyId}, ${new Date(window.start)}, 1)
      ON CONFLICT (key_id, window_start) DO UPDATE SET count = rate_limits.count + 1
      RETURNING count
    `.execute(this.db);
    return toRateLimitResult(Number(result.rows[0].count), limit, now);
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
    this.pruning = sql`DELETE FROM rate_limits WHERE window_start < ${cutoff}`
      .execute(this.db)
      .then(
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
