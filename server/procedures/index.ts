import { timingSafeEqual, createHash } from 'node:crypto';
import type { AuthContext } from '../auth/authenticate.js';
import { authorizeRequest } from '../auth/authorize.js';
import { GatewayError } from '../errors.js';
import { baseProcedure, errorConversion, middleware, toTRPCError } from '../trpc.js';

/** No authentication (the public model catalog). */
export const publicProcedure = baseProcedure.use(errorConversion);

/**
 * Authentication, rate limit and error conversion in one middleware: each
 * middleware costs tRPC a copy of the context, and this runs on every
 * request. compat authorises from the headers before it reads a body and
 * hands the result in `ctx.auth`; other callers are authorised here.
 */
const requireApiKey = middleware(async ({ ctx, next }) => {
  let auth: AuthContext;
  try {
    auth = ctx.auth ?? (await authorizeRequest(ctx.services, ctx.credentials, ctx.clientAddress));
  } catch (error) {
    throw toTRPCError(error);
  }
  // With `ctx.auth` already set (compat authorised from the headers) the context is passed on
  // as it is: `next({ ctx })` would copy it property by property (tRPC's object spread), per request.
  const result = ctx.auth === auth ? await (next as unknown as () => ReturnType<typeof next<{ auth: AuthContext }>>)() : await next({ ctx: { auth } });
  if (!result.ok) throw toTRPCError(result.error);
  return result;
});

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
