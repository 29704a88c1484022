import { GatewayError } from '../errors.js';
import { CircuitBreaker, type CircuitBreakerOptions, type CircuitState } from './circuit-breaker.js';
import { UNLIMITED, minuteWindow, normalizeLimit, type RateLimitResult, type RateLimiter, type RateLimiterLog } from './rate-limiter.js';

/**
 * What a request gets while the limiter's store (Redis or the database) is
 * failing: `open` lets it through unlimited, `closed` refuses it with
 * 503 SERVICE_UNAVAILABLE and `retry-after`.
 */
export type RateLimitFailMode = 'open' | 'closed';

export interface GuardedRateLimiterOptions {
  failMode: RateLimitFailMode;
  breaker?: CircuitBreakerOptions;
  log?: RateLimiterLog;
  /** The "limits not enforced" warning is logged at most this often, ms. Default 30 000. */
  warnIntervalMs?: number;
}

const DEFAULT_WARN_INTERVAL_MS = 30_000;

/**
 * A limiter whose store failures never reach the request as a 500 nor make
 * it wait: the backend's failures feed a circuit breaker, and while it is
 * open checks are answered without the backend, by the fail mode. Checks
 * resume on their own when a trial call succeeds.
 */
export class GuardedRateLimiter implements RateLimiter {
  private readonly breaker: CircuitBreaker;
  private readonly failMode: RateLimitFailMode;
  private readonly log: RateLimiterLog | undefined;
  private readonly warnIntervalMs: number;
  private lastWarning = Number.NEGATIVE_INFINITY;
  private uncheckedSinceWarning = 0;
  private failing = false;
  /** Checks that went to the backend. */
  backendChecks = 0;
  /** Checks answered by the fail mode because the backend failed or the circuit was open. */
  uncheckedChecks = 0;

  constructor(
    readonly backend: RateLimiter,
    options: GuardedRateLimiterOptions,
  ) {
    this.failMode = options.failMode;
    this.breaker = new CircuitBreaker(options.breaker);
    this.log = options.log;
    this.warnIntervalMs = options.warnIntervalMs ?? DEFAULT_WARN_INTERVAL_MS;
  }

  get breakerState(): CircuitState {
    return this.breaker.state;
  }

  async check(keyId: string, limitPerMinute: number, now?: number): Promise<RateLimitResult> {
    // Bad arguments are the caller's bug, not the store's failure: they throw before the breaker counts anything.
    if (normalizeLimit(limitPerMinute) === 0) return { ...UNLIMITED };
    if (now !== undefined) minuteWindow(now);
    if (!this.breaker.tryPass()) return this.answerUnchecked(undefined);
    this.backendChecks++;
    let result: RateLimitResult;
    try {
      result = await this.backend.check(keyId, limitPerMinute, now);
    } catch (error) {
      this.breaker.fail();
      return this.answerUnchecked(error as Error);
    }
    this.breaker.succeed();
    if (this.failing) {
      this.failing = false;
      this.log?.('ratelimit.recovered', { unchecked: this.uncheckedSinceWarning });
      this.uncheckedSinceWarning = 0;
      this.lastWarning = Number.NEGATIVE_INFINITY;
    }
    return result;
  }

  private answerUnchecked(error: Error | undefined): RateLimitResult {
    this.failing = true;
    this.uncheckedChecks++;
    this.uncheckedSinceWarning++;
    const retryAfter = Math.max(1, Math.ceil(this.breaker.retryInMs() / 1000));
    const now = Date.now();
    if (now - this.lastWarning >= this.warnIntervalMs) {
      this.lastWarning = now;
      this.log?.('ratelimit.unavailable', {
        failMode: this.failMode,
        breaker: this.breaker.state,
        unchecked: this.uncheckedSinceWarning,
        ...(error ? { message: error.message } : {}),
      });
      this.uncheckedSinceWarning = 0;
    }
    if (this.failMode === 'closed') {
      throw new GatewayError('SERVICE_UNAVAILABLE', 'Rate limiting is temporarily unavailable; retry shortly.', { retryAfter, cause: error });
    }
    return { ...UNLIMITED };
  }

  close(): Promise<void> {
    return this.backend.close();
  }
}
