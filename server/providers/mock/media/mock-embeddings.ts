/**
 * Embeddings for the offline `mock` provider: deterministic, unit length, and meaningful
 * enough for a test suite or a demo (texts that share words are closer than texts that do not).
 *
 * The method is feature hashing (the "hashing trick"): each feature of the text is hashed to a
 * bucket in `[0, dimensions)` and a sign, and its weight is added there. The dot product of two
 * such vectors approximates the dot product of their (unbounded) feature-count vectors, so
 * cosine similarity tracks how many weighted features two texts share. Features:
 *
 * | feature | weight | why |
 * | --- | --- | --- |
 * | word (lower-cased, NFKC, letters/digits/marks; one CJK character) | 1.0, stop words 0.2 | shared vocabulary dominates |
 * | adjacent word pair | 0.5 | word order and phrases count a little |
 * | character trigram of `#word#` | 0.6 / √(trigrams in the word) each | inflections and typos ("embedding"/"embeddings") stay close; scripts without spaces still compare |
 *
 * Only the first {@link EMBEDDING_SCAN_LIMIT} code units are read (real embedding models refuse
 * input beyond ~8k tokens anyway), and words longer than {@link MAX_WORD_LENGTH} contribute only
 * their first trigrams, so the cost of one call is bounded whatever the input.
 *
 * A text with no word at all (empty, whitespace, punctuation or emoji only) hashes a single
 * sentinel feature made of its trimmed text, so `''` gives one fixed unit vector and `'🙂'` another.
 *
 * Unlike OpenAI's `text-embedding-3-*`, a reduced `dimensions` is not the prefix of the full
 * vector: each size hashes into its own buckets, which keeps small sizes as meaningful as large.
 */
import { finishHash, FNV_OFFSET, FNV_PRIME } from '../../../text-hash.js';

/** How many UTF-16 code units of the input are read. */
export const EMBEDDING_SCAN_LIMIT = 32 * 1024;

/** The largest `dimensions` accepted (text-embedding-3-large). */
export const MAX_EMBEDDING_DIMENSIONS = 3072;

/** Words longer than this feed only their first `MAX_WORD_LENGTH` characters to trigrams. */
const MAX_WORD_LENGTH = 64;

const WORD_WEIGHT = 1;
const STOP_WORD_WEIGHT = 0.2;
const PAIR_WEIGHT = 0.5;
/** The trigrams of one word share this weight (each gets `TRIGRAM_WEIGHT / √count`). */
const TRIGRAM_WEIGHT = 0.6;

const STOP_WORDS = new Set([
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'but', 'by', 'for', 'from', 'has', 'have', 'i', 'if', 'in', 'is', 'it',
  'its', 'of', 'on', 'or', 'so', 'that', 'the', 'this', 'to', 'was', 'we', 'were', 'with', 'you',
]);

/** Character classes of the tokenizer: a word character, a character that is a word alone, or neither. */
const OTHER = 1;
const WORD = 2;
const SOLO = 3;

const WORD_CHARACTER = /^[\p{L}\p{N}\p{M}]$/u;
const SOLO_CHARACTER = /^[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}]$/u;

/** Classes of BMP characters, computed on first sight (0 = not yet known). */
const bmpClasses = new Uint8Array(0x10000);

function classify(character: string): number {
  if (SOLO_CHARACTER.test(character)) return SOLO;
  return WORD_CHARACTER.test(character) ? WORD : OTHER;
}

function classOfCodeUnit(code: number, character: string): number {
  if (code < 0x80) {
    return (code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39) || (code >= 0x41 && code <= 0x5a) ? WORD : OTHER;
  }
  let known = bmpClasses[code];
  if (known === 0) {
    known = classify(character);
    bmpClasses[code] = known;
  }
  return known;
}

/**
 * Word spans of `text` as [start, end) pairs of code-unit offsets. A word is a run of
 * letters, digits and marks, except that each Han, Hiragana or Katakana character is a word of
 * its own: those scripts write no spaces, and single characters with their adjacent pairs are
 * the usual way to compare such text.
 */
function wordSpansOf(text: string): number[] {
  const spans: number[] = [];
  let wordStart = -1;
  for (let index = 0; index < text.length; ) {
    const code = text.charCodeAt(index);
    let width = 1;
    let kind: number;
    if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        width = 2;
        kind = classify(text.slice(index, index + 2));
      } else {
        kind = OTHER;
      }
    } else if (code >= 0xd800 && code <= 0xdfff) {
      kind = OTHER;
    } else {
      kind = classOfCodeUnit(code, text[index]);
    }
    if (kind !== WORD && wordStart >= 0) {
      spans.push(wordStart, index);
      wordStart = -1;
    }
    if (kind === WORD && wordStart < 0) wordStart = index;
    if (kind === SOLO) spans.push(index, index + width);
    index += width;
  }
  if (wordStart >= 0) spans.push(wordStart, text.length);
  return spans;
}


/** FNV-1a step over the code units text[start, end). */
function hashRange(hash: number, text: string, start: number, end: number): number {
  let value = hash;
  for (let index = start; index < end; index++) {
    value ^= text.charCodeAt(index);
    value = Math.imul(value, FNV_PRIME);
  }
  return value;
}

function hashCodeUnit(hash: number, code: number): number {
  return Math.imul(hash ^ code, FNV_PRIME);
}


/** Distinct seeds keep a word, a pair and a trigram with the same characters apart. */
const WORD_SEED = hashCodeUnit(FNV_OFFSET, 0x77);
const PAIR_SEED = hashCodeUnit(FNV_OFFSET, 0x70);
const TRIGRAM_SEED = hashCodeUnit(FNV_OFFSET, 0x74);
const SENTINEL_SEED = hashCodeUnit(FNV_OFFSET, 0x73);
/** The `#` that frames a word for its trigrams. */
const FRAME = 0x23;

function addFeature(vector: Float64Array, featureHash: number, weight: number): void {
  const hash = finishHash(featureHash);
  // The sign comes from the top bit and the bucket from the rest, so colliding features cancel
  // as often as they add up.
  const sign = hash & 0x80000000 ? -1 : 1;
  vector[(hash & 0x7fffffff) % vector.length] += sign * weight;
}

function addTrigrams(vector: Float64Array, text: string, start: number, end: number): void {
  const last = Math.min(end, start + MAX_WORD_LENGTH);
  const weight = TRIGRAM_WEIGHT / Math.sqrt(last - start);
  // Trigrams of "#word#": position -1 and `last` stand for the frame characters.
  for (let first = start - 1; first + 2 <= last; first++) {
    let hash = TRIGRAM_SEED;
    for (let index = first; index < first + 3; index++) {
      hash = hashCodeUnit(hash, index < start || index >= last ? FRAME : text.charCodeAt(index));
    }
    addFeature(vector, hash, weight);
  }
}

/** The input cut to the scan limit, never between the two halves of a surrogate pair. */
function scannedPart(text: string): string {
  if (text.length <= EMBEDDING_SCAN_LIMIT) return text;
  let end = EMBEDDING_SCAN_LIMIT;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return text.slice(0, end);
}

/**
 * A deterministic unit-length embedding of `text` with `dimensions` components (float32 values;
 * see the module comment for the method).
 * @throws RangeError when `dimensions` is not an integer in 1..{@link MAX_EMBEDDING_DIMENSIONS}.
 */
export function embedMock(text: string, dimensions: number): Float32Array {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_EMBEDDING_DIMENSIONS) {
    throw new RangeError(`dimensions must be an integer from 1 to ${MAX_EMBEDDING_DIMENSIONS}`);
  }
  const vector = new Float64Array(dimensions);
  const normalized = scannedPart(text).normalize('NFKC').toLowerCase();
  const spans = wordSpansOf(normalized);
  for (let pair = 0; pair < spans.length; pair += 2) {
    const start = spans[pair];
    const end = spans[pair + 1];
    const wordHash = hashRange(WORD_SEED, normalized, start, end);
    const isStopWord = end - start <= 5 && STOP_WORDS.has(normalized.slice(start, end));
    addFeature(vector, wordHash, isStopWord ? STOP_WORD_WEIGHT : WORD_WEIGHT);
    if (pair > 0) {
      const previousHash = hashRange(PAIR_SEED, normalized, spans[pair - 2], spans[pair - 1]);
      addFeature(vector, hashRange(hashCodeUnit(previousHash, 0x20), normalized, start, end), PAIR_WEIGHT);
    }
    addTrigrams(vector, normalized, start, end);
  }
  if (spans.length === 0) {
    const sentinel = normalized.trim();
    addFeature(vector, hashRange(SENTINEL_SEED, sentinel, 0, sentinel.length), 1);
  }

  let squaredNorm = 0;
  for (const value of vector) squaredNorm += value * value;
  // Features can cancel exactly in a tiny vector (dimensions = 1, say): fall back to the first axis.
  if (squaredNorm === 0) {
    vector[0] = 1;
    squaredNorm = 1;
  }
  const norm = Math.sqrt(squaredNorm);
  const result = new Float32Array(dimensions);
  for (let index = 0; index < dimensions; index++) result[index] = vector[index] / norm;
  return result;
}
