/**
 * Requests per minute per API key, shared by every gateway instance through
 * Redis or the database.
 *
 * Algorithm: a fixed one-minute window aligned to the Unix epoch, one counter
 * per key and window, incremented on every check (refused ones too). We chose
 * it over the sliding-window approximation (previous minute weighted by its
 * overlap) because it needs exactly one atomic increment per check on both
 * backends (Redis INCR, PostgreSQL INSERT … ON CONFLICT DO UPDATE), admits
 * exactly `limit` requests per window however many instances race, and makes
 * `retryAfterSeconds` exact: the counter is new at the next window start.
 * The sliding approximation would need the previous minute's count in the
 * same atomic step and gives only an estimated retry time. The cost of the
 * fixed window is a burst of up to 2 × limit across a minute boundary,
 * which is acceptable for a per-minute abuse guard.
 * Counting refused checks costs nothing later: the next window starts at zero.
 *
 * Window boundaries come from each instance's own clock (or the `now` passed
 * in), so instances should keep NTP time; a skew of a second or two only
 * moves the boundary.
 *
 * This module holds the contract and the window arithmetic that the stores
 * share; `create-rate-limiter.ts` picks a store.
 */

export interface RateLimitResult {
  allowed: boolean;
  /** Requests still allowed in the current window (0 when refused); Infinity when unlimited. */
  remaining: number;
  /**
   * Whole seconds until the current window ends and the count starts again,
   * at least 1: on a refusal, when the client may retry (the `Retry-After`
   * value). 0 only for an unlimited key.
   */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /**
   * Counts one request of `keyId` and says whether it is within
   * `limitPerMinute` (0 = unlimited, answered without a round trip).
   * Rejects when the backend fails; `GuardedRateLimiter` (what
   * `createRateLimiter` builds) turns that into the configured fail mode.
   */
  check(keyId: string, limitPerMinute: number, now?: number): Promise<RateLimitResult>;
  /** Releases connections the limiter opened itself. */
  close(): Promise<void>;
}

export type RateLimiterLog = (event: string, fields: Record<string, unknown>) => void;

export const WINDOW_MS = 60_000;

export const UNLIMITED: Readonly<RateLimitResult> = Object.freeze({ allowed: true, remaining: Infinity, retryAfterSeconds: 0 });

/** The whole limit, or a RangeError for a negative or non-numeric one; fractions round down. */
export function normalizeLimit(limitPerMinute: number): number {
  if (!Number.isFinite(limitPerMinute) || limitPerMinute < 0) {
    throw new RangeError(`limitPerMinute must be a non-negative number, got ${limitPerMinute}`);
  }
  return Math.floor(limitPerMinute);
}

/** The one-minute window containing `now` (ms since the epoch): start inclusive, end exclusive. */
export function minuteWindow(now: number): { start: number; end: number } {
  if (!Number.isFinite(now)) throw new RangeError(`now must be a number of ms, got ${now}`);
  const start = Math.floor(now / WINDOW_MS) * WINDOW_MS;
  return { start, end: start + WINDOW_MS };
}

/** The verdict for the `count`-th request of a window. */
export function toRateLimitResult(count: number, limit: number, now: number): RateLimitResult {
  const { end } = minuteWindow(now);
  return {
    allowed: count <= limit,
    remaining: Math.max(0, limit - count),
    retryAfterSeconds: Math.max(1, Math.ceil((end - now) / 1000)),
  };
}
