import { GatewayError } from '../errors.js';
import { isWellFormedApiKey } from './api-keys.js';
import type { AuthCache, CachedAccount, CachedKey } from './auth-cache.js';

/** What the client presented, read from the headers by compat (GAPS.md: Authorization wins over x-api-key). */
export type Credentials =
  | { kind: 'missing' }
  | { kind: 'malformed' }
  | { kind: 'token'; token: string; scheme: 'bearer' | 'x-api-key' };

export function readCredentials(authorization: string | undefined, apiKeyHeader: string | undefined): Credentials {
  if (authorization !== undefined) {
    const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
    return match ? { kind: 'token', token: match[1]!, scheme: 'bearer' } : { kind: 'malformed' };
  }
  if (apiKeyHeader !== undefined && apiKeyHeader.trim() !== '') return { kind: 'token', token: apiKeyHeader.trim(), scheme: 'x-api-key' };
  return { kind: 'missing' };
}

export interface AuthContext {
  key: CachedKey;
  account: CachedAccount;
}

/** Checks a key and its account; every failure is one of SPEC's authentication codes. */
export async function authenticate(cache: AuthCache, credentials: Credentials, clientAddress: string): Promise<AuthContext> {
  if (credentials.kind === 'missing') {
    throw new GatewayError('MISSING_HEADER', 'No API key provided. Send it as "Authorization: Bearer <API_KEY>" or "x-api-key: <API_KEY>".');
  }
  if (credentials.kind === 'malformed') {
    throw new GatewayError('INVALID_FORMAT', 'The Authorization header must have the form "Bearer <API_KEY>".');
  }
  // A string that cannot be a key is refused without hashing it or asking the database.
  const key = isWellFormedApiKey(credentials.token) ? await cache.getKey(cache.hashOf(credentials.token)) : null;
  if (!key || !key.usable) throw new GatewayError('INVALID_KEY', 'The API key is invalid, disabled or deleted.');
  const account = await cache.getAccount(key.accountId);
  if (!account) throw new GatewayError('INVALID_KEY', 'The API key is invalid, disabled or deleted.');
  if (account.disabled) throw new GatewayError('ACCOUNT_DISABLED', 'This account is disabled.');
  if (!account.allowlist.allows(clientAddress)) {
    throw new GatewayError('IP_ACCESS_DENIED', `Requests from ${clientAddress} are not allowed for this account.`);
  }
  return { key, account };
}
