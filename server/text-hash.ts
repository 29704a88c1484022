/**
 * The small non-cryptographic hashes the gateway uses to fingerprint text
 * (mock answers and embeddings, the moderation lexicon): 32-bit FNV-1a over
 * UTF-16 code units, finished with MurmurHash3's fmix32 where the low bits
 * must depend on every input bit.
 */
export const FNV_OFFSET = 0x811c9dc5;
export const FNV_PRIME = 0x01000193;

/** MurmurHash3's fmix32, as an unsigned 32-bit number. */
export function finishHash(hash: number): number {
  let value = hash;
  value ^= value >>> 16;
  value = Math.imul(value, 0x85ebca6b);
  value ^= value >>> 13;
  value = Math.imul(value, 0xc2b2ae35);
  value ^= value >>> 16;
  return value >>> 0;
}
