import { isWellFormedApiKey } from '../server/auth/api-keys.js';
import type { Credentials } from '../server/auth/authenticate.js';
import { findSessionOfCookie } from '../server/dashboard/sessions.js';
import { isAdminToken } from '../server/procedures/index.js';
import type { Services } from '../server/services.js';

/**
 * The largest body a /trpc request without a valid credential may send: the
 * sign-in's email and password, with room to spare. Without this bound anyone
 * could hold up to BODY_LIMIT_BYTES per request of the body budget that /v1
 * shares, and make every tenant's requests answer 503.
 */
export const ANONYMOUS_TRPC_BODY_BYTES = 64 * 1024;

/**
 * Whether a /trpc request's headers carry a credential that holds (the admin
 * token, a usable API key, or a live dashboard session), checked before its
 * body is read: from memory for tokens and keys, one lookup for a session
 * cookie. The procedures check again what each of them needs.
 */
export async function presentsValidCredential(services: Pick<Services, 'adminTokenHash' | 'authCache' | 'db'>, credentials: Credentials, cookie: string | undefined): Promise<boolean> {
  if (credentials.kind === 'token') {
    const { token } = credentials;
    if (isAdminToken(token, services.adminTokenHash)) return true;
    if (isWellFormedApiKey(token) && (await services.authCache.getKey(services.authCache.hashOf(token)))?.usable) return true;
  }
  return cookie !== undefined && (await findSessionOfCookie(services.db, cookie)) !== undefined;
}
