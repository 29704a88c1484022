import { timingSafeEqual, createHash } from 'node:crypto';
import { authenticate } from '../auth/authenticate.js';
import { GatewayError } from '../errors.js';
import { baseProcedure, errorConversion, middleware, toTRPCError } from '../trpc.js';
import type { Services } from '../services.js';

/** No authentication (the public model catalog). */
export const publicProcedure = baseProcedure.use(errorConversion);

/**
 * Authentication, rate limit and error conversion in one middleware: each
 * middleware costs tRPC a copy of the context, and this runs on every request.
 */
const requireApiKey = middleware(async ({ ctx, next }) => {
  let auth;
  try {
    auth = await authenticate(ctx.services.authCache, ctx.credentials, ctx.clientAddress);
    ctx.services.keyUsage.touch(auth.key.id);
    await enforceRateLimit(ctx.services, auth.key.id, auth.account.plan);
  } catch (error) {
    throw toTRPCError(error);
  }
  const result = await next({ ctx: { auth } });
  if (!result.ok) throw toTRPCError(result.error);
  return result;
});

/** Requests per minute per key, by plan, across instances (Redis or the database). */
async function enforceRateLimit(services: Services, keyId: string, plan: string): Promise<void> {
  const limit = services.config.rateLimits[plan] ?? services.config.rateLimits.pro ?? 0;
  if (limit <= 0) return;
  // The limiter answers for its store's failures itself (RATE_LIMIT_FAIL_MODE: allowed, or a 503).
  const result = await services.rateLimiter.check(keyId, limit);
  if (!result.allowed) {
    throw new GatewayError('RATE_LIMITED', `Rate limit of ${limit} requests per minute for this key exceeded.`, { retryAfter: result.retryAfterSeconds });
  }
}

/** Every public operation but the catalog: a valid key of an enabled account, from an allowed address. */
export const apiKeyProcedure = baseProcedure.use(requireApiKey);

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

const requireAdmin = middleware(async ({ ctx, next }) => {
  const presented = ctx.credentials.kind === 'token' ? ctx.credentials.token : undefined;
  const expected = ctx.services.adminTokenHash;
  if (!presented || !expected || !sameHash(createHash('sha256').update(presented).digest('hex'), expected)) {
    throw new GatewayError('UNAUTHORIZED_ADMIN', 'Admin procedures need the admin token as "Authorization: Bearer <token>".');
  }
  return next({ ctx: { admin: true as const } });
});

/** Operator procedures (accounts, keys, ledger): the admin token. */
export const adminProcedure = publicProcedure.use(requireAdmin);
