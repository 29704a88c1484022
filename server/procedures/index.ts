import { timingSafeEqual, createHash } from 'node:crypto';
import type { AuthContext } from '../auth/authenticate.js';
import { authorizeRequest } from '../auth/authorize.js';
import { accountAuthOf } from '../dashboard/session-auth.js';
import { requireSession } from '../dashboard/sessions.js';
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

/** Whether a presented token is the admin token whose SHA-256 (hex) is `expectedHash` (none set: never). */
export function isAdminToken(presented: string | undefined, expectedHash: string): boolean {
  return !!presented && !!expectedHash && sameHash(createHash('sha256').update(presented).digest('hex'), expectedHash);
}

const requireAdmin = middleware(async ({ ctx, next, type }) => {
  const presented = ctx.credentials.kind === 'token' ? ctx.credentials.token : undefined;
  const expected = ctx.services.adminTokenHash;
  if (!isAdminToken(presented, expected)) {
    // A staff member signed in to the dashboard may do what the admin token may (mutations with the session's CSRF token).
    if (!presented && ctx.web?.cookie) {
      const staff = await requireSession(ctx, type);
      // Admin actions (e.g. on the review queue) are recorded as taken by this staff user.
      if (staff.user.role === 'staff') return next({ ctx: { admin: true as const, adminActor: `staff:${staff.user.email}` } });
    }
    throw new GatewayError('UNAUTHORIZED_ADMIN', 'Admin procedures need the admin token as "Authorization: Bearer <token>".');
  }
  return next({ ctx: { admin: true as const } });
});

/** Operator procedures (accounts, keys, ledger): the admin token. */
export const adminProcedure = publicProcedure.use(requireAdmin);

/** Dashboard procedures of a signed-in person (any role); mutations need the session's CSRF token. */
export const sessionProcedure = publicProcedure.use(async ({ ctx, next, type }) => next({ ctx: { session: await requireSession(ctx, type) } }));

/**
 * Dashboard procedures on the session's own account (owners and members):
 * `ctx.auth` is that account as an API key would see it, so the services of
 * the key-authorised procedures serve it unchanged. The account never comes
 * from the client. The account's allowlist and its being disabled hold here
 * as for its keys (session-auth.ts).
 */
export const accountSessionProcedure = sessionProcedure.use(async ({ ctx, next, type }) => next({ ctx: { auth: await accountAuthOf(ctx, ctx.session.user, type) } }));

/** Changes only an account's owner may make (keys, allowlist, deleting videos). */
export const ownerSessionProcedure = accountSessionProcedure.use(({ ctx, next }) => {
  if (ctx.session.user.role !== 'owner') throw new GatewayError('FORBIDDEN', "Only the account's owners may change this.");
  return next();
});

/** Staff pages: a signed-in staff member. */
export const staffProcedure = sessionProcedure.use(({ ctx, next }) => {
  if (ctx.session.user.role !== 'staff') throw new GatewayError('FORBIDDEN', 'Staff only.');
  return next();
});
