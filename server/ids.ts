import { randomBytes } from 'node:crypto';

/**
 * Identifiers on the hot path: a random tag per process (so instances never
 * collide) followed by a counter, instead of fresh random bytes per request.
 * They identify; they are not secrets.
 */
const PROCESS_TAG = randomBytes(9).toString('base64url').replace(/[-_]/g, 'x');
let counter = 0;

export function nextId(prefix: string): string {
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${prefix}${PROCESS_TAG}${counter.toString(36).padStart(6, '0')}`;
}
