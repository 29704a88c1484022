import { createHash, randomBytes } from 'node:crypto';

import { KEY_PREFIX } from '../key-format.js';

export { isWellFormedApiKey, KEY_PREFIX } from '../key-format.js';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 48;

/** A new API key: the fixed prefix and 48 random base62 characters (~285 bits). */
export function generateApiKey(): string {
  let out = KEY_PREFIX;
  // Rejection sampling keeps every character uniformly likely.
  while (out.length < KEY_PREFIX.length + RANDOM_LENGTH) {
    for (const byte of randomBytes(64)) {
      if (byte < 248 && out.length < KEY_PREFIX.length + RANDOM_LENGTH) out += BASE62[byte % 62];
    }
  }
  return out;
}

/**
 * Keys are high-entropy random strings, so one SHA-256 is enough to make the
 * stored hash useless to a reader of the database (no salt or slow hash needed).
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function describeKey(key: string): { displayPrefix: string; lastFour: string } {
  return { displayPrefix: KEY_PREFIX, lastFour: key.slice(-4) };
}

/** Short random ids with a readable prefix (`acct_…`, `key_…`). */
export function newId(prefix: string, length = 20): string {
  let out = `${prefix}_`;
  for (const byte of randomBytes(length * 2)) {
    if (byte < 248 && out.length < prefix.length + 1 + length) out += BASE62[byte % 62];
  }
  return out;
}
