import { Redis } from 'ioredis';
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

export const DEFAULT_REDIS_KEY_PREFIX = 'umg:rl:';

/**
 * Increments the window's counter and sets its expiry when the key is new,
 * atomically and in one round trip. Setting the expiry only once keeps a
 * counter from living on when the key is hammered.
 */
const COUNT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return count
`;

const COMMAND_NAME = 'umgRateLimitCount';

type RedisWithCount = Redis & {
  [COMMAND_NAME](key: string, ttlMs: number): Promise<number>;
};

export interface RedisRateLimiterOptions {
  /** Prefix of every key; tests use their own. Default `umg:rl:`. */
  keyPrefix?: string;
  log?: RateLimiterLog;
}

/**
 * Fixed one-minute windows in Redis (see rate-limiter.ts for the choice).
 * Keys are `<prefix><keyId>:<minute since the epoch>`; the minute is the
 * last field, so a key id containing `:` cannot collide with another.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: RedisWithCount;
  private readonly ownsConnection: boolean;
  private readonly keyPrefix: string;

  /** Opens its own connection from a URL (closed by `close()`), or uses a given client (left open). */
  constructor(connection: string | Redis, options: RedisRateLimiterOptions = {}) {
    this.keyPrefix = options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    this.ownsConnection = typeof connection === 'string';
    const redis =
      typeof connection === 'string'
        ? new Redis(connection, {
            // A request must not wait long on an unreachable Redis: fail the
            // check quickly and let the caller decide.
            maxRetriesPerRequest: 1,
            commandTimeout: 2_000,
            connectTimeout: 5_000,
            enableAutoPipelining: true,
          })
        : connection;
    if (this.ownsConnection) {
      redis.on('error', (error: Error) => options.log?.('ratelimit.redis_error', { message: error.message }));
    }
    // EVALSHA with an automatic EVAL fallback after a Redis restart.
    redis.defineCommand(COMMAND_NAME, { numberOfKeys: 1, lua: COUNT_SCRIPT });
    this.redis = redis as RedisWithCount;
  }

  async check(keyId: string, limitPerMinute: number, now: number = Date.now()): Promise<RateLimitResult> {
    const limit = normalizeLimit(limitPerMinute);
    if (limit === 0) return { ...UNLIMITED };
    const window = minuteWindow(now);
    const key = `${this.keyPrefix}${keyId}:${window.start / WINDOW_MS}`;
    // The key outlives its window by one more minute, for instances whose clock is behind.
    const ttlMs = window.end - now + WINDOW_MS;
    const count = Number(await this.redis[COMMAND_NAME](key, ttlMs));
    return toRateLimitResult(count, limit, now);
  }

  async close(): Promise<void> {
    if (!this.ownsConnection) return;
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}
