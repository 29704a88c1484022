import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { DatabaseRateLimiter } from './database-rate-limiter.js';
import { GuardedRateLimiter, type RateLimitFailMode } from './guarded-rate-limiter.js';
import type { RateLimiterLog } from './rate-limiter.js';
import { RedisRateLimiter } from './redis-rate-limiter.js';

export interface CreateRateLimiterOptions {
  /** When set, counts live in Redis; otherwise in the database. */
  redisUrl?: string;
  db: Kysely<Database>;
  log?: RateLimiterLog;
  /** While the store fails: let requests through (`open`, the default) or answer 503 (`closed`). */
  failMode?: RateLimitFailMode;
  /** How long checks skip a failing store before trying it again, ms. Default 10 000. */
  breakerOpenMs?: number;
}

/** The store's limiter behind a circuit breaker and the fail mode. */
export function createRateLimiter(options: CreateRateLimiterOptions): GuardedRateLimiter {
  const backend = options.redisUrl ? new RedisRateLimiter(options.redisUrl, { log: options.log }) : new DatabaseRateLimiter(options.db, { log: options.log });
  return new GuardedRateLimiter(backend, { failMode: options.failMode ?? 'open', breaker: { openMs: options.breakerOpenMs }, log: options.log });
}
