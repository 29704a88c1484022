/**
 * The shape of the gateway's own API keys (`sk-umg-` and base62), a leaf that configuration can
 * check a bootstrap key against without importing authentication.
 */
export const KEY_PREFIX = 'sk-umg-';
const KEY_PATTERN = /^sk-umg-[0-9A-Za-z]{40,}$/;

export function isWellFormedApiKey(key: string): boolean {
  return KEY_PATTERN.test(key);
}
