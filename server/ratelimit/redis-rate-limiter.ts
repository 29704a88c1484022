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
  /** Own connection: longest connect attempt, ms. Default 1000. */
  connectTimeoutMs?: number;
  /** Own connection: longest wait for a command's answer, ms. Default 1000. */
  commandTimeoutMs?: number;
}

const DEFAULT_CONNECT_TIMEOUT_MS = 1_000;
const DEFAULT_COMMAND_TIMEOUT_MS = 1_000;
/** Connection errors are logged at most this often (ioredis reports every reconnect attempt). */
const ERROR_LOG_INTERVAL_MS = 30_000;

/**
 * Fixed one-minute windows in Redis (see rate-limiter.ts for the choice).
 * Keys are `<prefix><keyId>:<minute since the epoch>`; the minute is the
 * last field, so a key id containing `:` cannot collide with another.
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: RedisWithCount;
  private readonly ownsConnection: boolean;
  private readonly keyPrefix: string;
  private readonly connectTimeoutMs: number;
  /** Shared by the checks that arrive while a connection attempt is under way. */
  private connecting: Promise<void> | undefined;

  /** Opens its own connection from a URL (closed by `close()`), or uses a given client (left open). */
  constructor(connection: string | Redis, options: RedisRateLimiterOptions = {}) {
    this.keyPrefix = options.keyPrefix ?? DEFAULT_REDIS_KEY_PREFIX;
    this.ownsConnection = typeof connection === 'string';
    this.connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
    const redis =
      typeof connection === 'string'
        ? new Redis(connection, {
            // A request must not wait on an unreachable Redis: a command sent
            // while disconnected fails at once instead of queueing until a
            // reconnect (the offline queue), one cut by a lost connection is
            // not resent, and a silent server is given up on quickly. The
            // caller's circuit breaker then stops trying for a while.
            enableOfflineQueue: false,
            maxRetriesPerRequest: 0,
            connectTimeout: this.connectTimeoutMs,
            commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
            enableAutoPipelining: true,
          })
        : connection;
    if (this.ownsConnection) {
      let lastErrorLog = Number.NEGATIVE_INFINITY;
      redis.on('error', (error: Error) => {
        const now = Date.now();
        if (now - lastErrorLog < ERROR_LOG_INTERVAL_MS) return;
        lastErrorLog = now;
        options.log?.('ratelimit.redis_error', { message: error.message });
      });
    }
    // EVALSHA with an automatic EVAL fallback after a Redis restart.
    redis.defineCommand(COMMAND_NAME, { numberOfKeys: 1, lua: COUNT_SCRIPT });
    this.redis = redis as RedisWithCount;
  }

  async check(keyId: string, limitPerMinute: number, now: number = Date.now()): Promise<RateLimitResult> {
    const limit = normalizeLimit(limitPerMinute);
    if (limit === 0) return { ...UNLIMITED };
    const window = minuteWindow(now);
    // Without the offline queue a command sent before the connection is ready
    // fails; right after start (or a reconnect) the attempt under way is
    // worth its short wait. Between attempts the command fails at once.
    if (this.redis.status === 'connecting' || this.redis.status === 'connect') await this.untilReady();
    const key = `${this.keyPrefix}${keyId}:${window.start / WINDOW_MS}`;
    // The key outlives its window by one more minute, for instances whose clock is behind.
    const ttlMs = window.end - now + WINDOW_MS;
    const count = Number(await this.redis[COMMAND_NAME](key, ttlMs));
    return toRateLimitResult(count, limit, now);
  }

  /** Resolves when the connection attempt under way succeeds, rejects when it fails or takes longer than the connect timeout. */
  private untilReady(): Promise<void> {
    this.connecting ??= new Promise<void>((resolve, reject) => {
      const settle = (error?: Error) => {
        clearTimeout(timer);
        this.redis.off('ready', onReady);
        this.redis.off('close', onClose);
        this.connecting = undefined;
        if (error) reject(error);
        else resolve();
      };
      const onReady = () => settle();
      const onClose = () => settle(new Error('Redis connection closed while connecting'));
      const timer = setTimeout(() => settle(new Error('Redis did not become ready in time')), this.connectTimeoutMs);
      this.redis.once('ready', onReady);
      this.redis.once('close', onClose);
    });
    return this.connecting;
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
