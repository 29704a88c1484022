import type { GatewayConfig } from '../config.js';
import { GatewayError } from '../errors.js';
import type { RateLimiter } from '../ratelimit/rate-limiter.js';
import type { AuthCache } from './auth-cache.js';
import type { AuthFailureLimiter } from './auth-failures.js';
import { authenticate, type AuthContext, type Credentials } from './authenticate.js';
import type { KeyUsageTracker } from './key-usage.js';

/** What authorizing a request reads and touches (the gateway's services provide each). */
export interface AuthorizeDependencies {
  authCache: AuthCache;
  /** Failed authentications per client address. */
  authFailures: AuthFailureLimiter;
  keyUsage: KeyUsageTracker;
  rateLimiter: RateLimiter;
  config: Pick<GatewayConfig, 'rateLimits'>;
}

/**
 * Everything the headers can tell about a request, checked before a byte of
 * its body is read: the key, the account's state and allowlist, and the
 * key's rate limit. compat calls it ahead of the body; the API-key procedure
 * middleware calls it for every other caller.
 */
export async function authorizeRequest(services: AuthorizeDependencies, credentials: Credentials, clientAddress: string): Promise<AuthContext> {
  const waitSeconds = services.authFailures.blockedFor(clientAddress);
  if (waitSeconds > 0) {
    throw new GatewayError('RATE_LIMITED', 'Too many failed authentications from this address; retry later.', { retryAfter: waitSeconds });
  }
  let auth: AuthContext;
  try {
    auth = await authenticate(services.authCache, credentials, clientAddress);
  } catch (error) {
    if (error instanceof GatewayError && (error.code === 'INVALID_KEY' || error.code === 'INVALID_FORMAT' || error.code === 'MISSING_HEADER')) {
      services.authFailures.record(clientAddress);
    }
    throw error;
  }
  services.keyUsage.touch(auth.key.id);
  await enforceRateLimit(services, auth.key.id, auth.account.plan);
  return auth;
}

/** Requests per minute per key, by plan, across instances (Redis or the database). */
async function enforceRateLimit(services: AuthorizeDependencies, keyId: string, plan: string): Promise<void> {
  const limit = services.config.rateLimits[plan] ?? services.config.rateLimits.pro ?? 0;
  if (limit <= 0) return;
  // The limiter answers for its store's failures itself (RATE_LIMIT_FAIL_MODE: allowed, or a 503).
  const result = await services.rateLimiter.check(keyId, limit);
  if (!result.allowed) {
    throw new GatewayError('RATE_LIMITED', `Rate limit of ${limit} requests per minute for this key exceeded.`, { retryAfter: result.retryAfterSeconds });
  }
}
