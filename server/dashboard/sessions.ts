import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { deleteSession, deleteUserSessions, findLiveSession, findUserByEmail, insertSession } from '../../db/queries/users.queries.js';
import type { Kysely } from 'kysely';
import type { Database, User, UserSession } from '../../db/schema.js';
import { newId } from '../auth/api-keys.js';
import type { AuthCache } from '../auth/auth-cache.js';
import type { GatewayConfig } from '../config.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { RateLimiter } from '../ratelimit/rate-limiter.js';
import { verifyPassword } from './passwords.js';
import { normalizeEmail } from './users.service.js';

/**
 * Dashboard sessions. The browser holds a random token in an httpOnly,
 * SameSite=Strict cookie; the database holds only its SHA-256, so neither a
 * dump nor a log line can sign anyone in. Each session also has a CSRF token
 * the page reads from `dashboard.auth.me` and sends back in `x-csrf-token`
 * on every mutation: a page of another origin can make the browser send the
 * cookie (were SameSite ever relaxed), but cannot read the token.
 */

export const SESSION_COOKIE = 'umg_session';

/** What the dashboard's sign-in reads from and writes to the HTTP exchange. */
export interface WebRequest {
  /** The `Cookie` header. */
  cookie: string | undefined;
  /** The `x-csrf-token` header. */
  csrfToken: string | undefined;
  /** Whether the browser reached us over TLS (directly, or per a trusted proxy's `X-Forwarded-Proto`). */
  secure: boolean;
  /** Adds a `Set-Cookie` header to the answer. */
  setCookie(value: string): void;
}

/** What sessions read of a request (a procedure's context has all of it). */
export interface SessionRequest {
  services: { db: Kysely<Database>; config: Pick<GatewayConfig, 'dashboard'>; rateLimiter: RateLimiter; log: Logger; authCache: AuthCache };
  requestId: string;
  clientAddress: string;
  /** The browser side of the request; absent for callers other than the dashboard. */
  web?: WebRequest;
}

export interface SessionContext {
  session: UserSession;
  user: User;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const index = part.indexOf('=');
    if (index > 0 && part.slice(0, index).trim() === name) return part.slice(index + 1).trim() || undefined;
  }
  return undefined;
}

function cookie(web: WebRequest, value: string, maxAgeSeconds: number): string {
  return [`${SESSION_COOKIE}=${value}`, 'Path=/', 'HttpOnly', 'SameSite=Strict', `Max-Age=${maxAgeSeconds}`, ...(web.secure ? ['Secure'] : [])].join('; ');
}

function requireWeb(ctx: SessionRequest): WebRequest {
  if (!ctx.web) throw new GatewayError('SESSION_REQUIRED', 'Dashboard sessions are used over HTTP at /trpc.');
  return ctx.web;
}

/** The session named by the request's cookie, or undefined. */
export async function readSession(ctx: SessionRequest): Promise<SessionContext | undefined> {
  return findSessionOfCookie(ctx.services.db, ctx.web?.cookie);
}

/** The live session a `Cookie` header names, or undefined (no cookie, a malformed one, an ended session). */
export async function findSessionOfCookie(db: Kysely<Database>, cookieHeader: string | undefined): Promise<SessionContext | undefined> {
  const token = readCookie(cookieHeader, SESSION_COOKIE);
  if (!token || token.length > 200) return undefined;
  return findLiveSession(db, sha256(token));
}

/** The session, and for a mutation its CSRF token checked; or SESSION_REQUIRED / CSRF_REJECTED. */
export async function requireSession(ctx: SessionRequest, type: string): Promise<SessionContext> {
  const found = await readSession(ctx);
  if (!found) throw new GatewayError('SESSION_REQUIRED', 'Sign in to the dashboard first (no session, or it has ended).');
  if (type !== 'query') {
    const presented = ctx.web?.csrfToken;
    if (!presented || !sameSecret(presented, found.session.csrf_token)) {
      throw new GatewayError('CSRF_REJECTED', 'This change needs the session\'s CSRF token in the "x-csrf-token" header.');
    }
  }
  return found;
}

async function checkLoginRate(ctx: SessionRequest, email: string): Promise<void> {
  const { loginAttemptsPerUser, loginAttemptsPerAddress } = ctx.services.config.dashboard;
  const [byUser, byAddress] = await Promise.all([
    ctx.services.rateLimiter.check(`login:user:${sha256(email)}`, loginAttemptsPerUser),
    ctx.services.rateLimiter.check(`login:address:${ctx.clientAddress}`, loginAttemptsPerAddress),
  ]);
  const refused = [byUser, byAddress].filter((result) => !result.allowed);
  if (refused.length > 0) {
    const retryAfter = Math.max(...refused.map((result) => result.retryAfterSeconds));
    throw new GatewayError('RATE_LIMITED', `Too many sign-in attempts; try again in ${retryAfter} s.`, { retryAfter });
  }
}

/** Signs in: a new session row and its cookie. Wrong email and wrong password answer alike. */
export async function login(ctx: SessionRequest, input: { email: string; password: string }): Promise<SessionContext> {
  const web = requireWeb(ctx);
  const email = normalizeEmail(input.email);
  await checkLoginRate(ctx, email);
  const user = await findUserByEmail(ctx.services.db, email);
  const valid = await verifyPassword(user?.password_hash, input.password);
  if (!user || !valid) {
    ctx.services.log.info('dashboard.login_failed', { requestId: ctx.requestId, address: ctx.clientAddress });
    throw new GatewayError('INVALID_CREDENTIALS', 'Wrong email or password.');
  }
  const token = randomBytes(32).toString('base64url');
  const ttlSeconds = ctx.services.config.dashboard.sessionTtlHours * 3600;
  const session: UserSession = {
    id: newId('sess'),
    token_hash: sha256(token),
    user_id: user.id,
    csrf_token: randomBytes(24).toString('base64url'),
    created_at: new Date(),
    last_seen_at: new Date(),
    expires_at: new Date(Date.now() + ttlSeconds * 1000),
    client_address: ctx.clientAddress,
  };
  await insertSession(ctx.services.db, session);
  web.setCookie(cookie(web, token, ttlSeconds));
  ctx.services.log.info('dashboard.login', { requestId: ctx.requestId, user: user.id });
  return { session, user };
}

export async function logout(ctx: SessionRequest, current: SessionContext, everywhere: boolean): Promise<number> {
  const web = requireWeb(ctx);
  let ended = 1;
  if (everywhere) ended = await deleteUserSessions(ctx.services.db, current.user.id);
  else await deleteSession(ctx.services.db, current.session.id);
  web.setCookie(cookie(web, '', 0));
  return ended;
}
