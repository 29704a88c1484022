/**
 * Bounded reading of untrusted text for the moderation heuristics: which parts of a huge text
 * are read, and how text becomes the normalized word tokens the lexicon is written in.
 *
 * Sampling rule ({@link sampleForScan}): a text of at most `budget` UTF-16 code units is read
 * whole. A longer one is read as its first half-budget, its last quarter-budget, and
 * {@link MIDDLE_WINDOW_COUNT} evenly spaced windows sharing the remaining quarter across the
 * middle. Each cut is moved to a nearby whitespace (so "skill" is never read as "kill") and
 * never falls inside a surrogate pair. The parts are scanned separately, so a phrase cannot be
 * assembled across a cut. Cost is therefore O(budget) whatever the input size; content that
 * sits only in the unread middle of a multi-megabyte text is missed, which is the price of a
 * bounded check.
 *
 * Token rule ({@link tokenize}): the text is NFKC-normalized (full-width and compatibility
 * letters become plain ones) and lower-cased; a token is a run of letters, digits and marks.
 * Inside a token, apostrophes are dropped ("don't" → "dont", "I'm" → "im") and, when the token
 * has letters, common leetspeak is undone (0→o 1→i 3→e 4→a 5→s 7→t @→a $→s), except in
 * tokens such as "14yo", "3rd" or "10am" where the digits are a number. A token with a run of
 * three or more equal letters ("kiiiill") is also tried with that run shortened to one and to
 * two letters. Tokens longer than {@link MAX_TOKEN_LENGTH} keep their position but match nothing.
 */

/** Middle windows used when a text exceeds its scan budget. */
export const MIDDLE_WINDOW_COUNT = 16;

/** Tokens longer than this can match no lexicon entry and are kept as empty placeholders. */
export const MAX_TOKEN_LENGTH = 40;

/** How far a cut may move to reach whitespace. */
const CUT_SLACK = 64;

function isWhitespaceCode(code: number): boolean {
  return code === 0x20 || (code >= 0x09 && code <= 0x0d) || code === 0xa0 || code === 0x3000 || code === 0x2028 || code === 0x2029;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** A cut position moved forward to just after whitespace, or at least off a low surrogate. */
function adjustStart(text: string, position: number): number {
  if (position <= 0) return 0;
  const limit = Math.min(text.length, position + CUT_SLACK);
  for (let index = position; index < limit; index++) {
    if (isWhitespaceCode(text.charCodeAt(index))) return index + 1;
  }
  // No whitespace nearby (one long word, CJK): drop the cut word's first token instead of
  // reading it as a different word. Position + slack lands inside it, so skipping to the next
  // boundary would be unbounded; the leading fragment is marked by the caller instead.
  return isLowSurrogate(text.charCodeAt(position)) ? position + 1 : position;
}

/** A cut position moved back to whitespace, or at least off the middle of a surrogate pair. */
function adjustEnd(text: string, position: number): number {
  if (position >= text.length) return text.length;
  const limit = Math.max(0, position - CUT_SLACK);
  for (let index = position; index > limit; index--) {
    if (isWhitespaceCode(text.charCodeAt(index - 1))) return index - 1;
  }
  return isLowSurrogate(text.charCodeAt(position)) ? position - 1 : position;
}

/**
 * The parts of `text` to scan under a budget of `budget` code units (see the module comment).
 * Each part comes with whether its edges were cut inside a word, so the tokenizer can ignore
 * the partial word there.
 */
export function sampleForScan(text: string, budget: number): ScanPart[] {
  if (text.length <= budget) return [{ text, cutStart: false, cutEnd: false }];
  const parts: ScanPart[] = [];
  const push = (start: number, end: number): void => {
    const from = adjustStart(text, start);
    const to = adjustEnd(text, end);
    if (to <= from) return;
    parts.push({
      text: text.slice(from, to),
      cutStart: from > 0 && !isWhitespaceCode(text.charCodeAt(from - 1)),
      cutEnd: to < text.length && !isWhitespaceCode(text.charCodeAt(to)),
    });
  };
  const headLength = Math.floor(budget / 2);
  const tailLength = Math.floor(budget / 4);
  push(0, headLength);
  const middleStart = headLength;
  const middleEnd = text.length - tailLength;
  const windowLength = Math.floor((budget - headLength - tailLength) / MIDDLE_WINDOW_COUNT);
  if (windowLength > 0) {
    const stride = (middleEnd - middleStart) / MIDDLE_WINDOW_COUNT;
    for (let window = 0; window < MIDDLE_WINDOW_COUNT; window++) {
      // Each window sits in the middle of its stride, clear of the head and tail.
      const start = Math.floor(middleStart + stride * window + (stride - windowLength) / 2);
      push(start, start + windowLength);
    }
  }
  push(middleEnd, text.length);
  return parts;
}

/** One part of a sampled text. */
export interface ScanPart {
  text: string;
  /** The part starts inside a word of the original text. */
  cutStart: boolean;
  /** The part ends inside a word of the original text. */
  cutEnd: boolean;
}

/** Normalized tokens of one part. `variants[i]` lists extra forms of token i, when it has any. */
export interface TokenStream {
  tokens: string[];
  variants: Map<number, string[]>;
  /** `sentenceEnds[i]` is true when a sentence break (. ! ? ; : newline) follows token i. */
  sentenceEnds: boolean[];
}

function isSentenceBreak(code: number): boolean {
  return code === 0x2e || code === 0x21 || code === 0x3f || code === 0x3b || code === 0x3a || code === 0x0a || code === 0x0d ||
    code === 0x3002 || code === 0xff01 || code === 0xff1f || code === 0x2026;
}

const OTHER = 1;
const WORD = 2;
/** Apostrophes, `@` and `$`: part of a word only between word characters (see {@link tokenize}). */
const JOINER = 3;

const WORD_CHARACTER = /^[\p{L}\p{N}\p{M}]$/u;
const bmpClasses = new Uint8Array(0x10000);

/** Classes of ASCII characters, so the common case is one array read. */
const ASCII_CLASSES = new Uint8Array(0x80).fill(OTHER);
for (let code = 0x30; code <= 0x39; code++) ASCII_CLASSES[code] = WORD;
for (let code = 0x41; code <= 0x5a; code++) ASCII_CLASSES[code] = WORD;
for (let code = 0x61; code <= 0x7a; code++) ASCII_CLASSES[code] = WORD;
for (const code of [0x27, 0x40, 0x24]) ASCII_CLASSES[code] = JOINER;

function classOfCode(code: number, text: string, index: number): number {
  if (code === 0x2019 || code === 0x02bc) return JOINER;
  if (code >= 0xd800 && code <= 0xdbff) {
    const next = text.charCodeAt(index + 1);
    if (!isLowSurrogate(next)) return OTHER;
    return WORD_CHARACTER.test(text.slice(index, index + 2)) ? WORD : OTHER;
  }
  if (isLowSurrogate(code)) return OTHER;
  let known = bmpClasses[code];
  if (known === 0) {
    known = WORD_CHARACTER.test(String.fromCharCode(code)) ? WORD : OTHER;
    bmpClasses[code] = known;
  }
  return known;
}

const LEET: Record<string, string> = { '0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '@': 'a', $: 's' };
const NUMBER_WITH_SUFFIX = /^\d+[a-z]{1,3}$/;
const HAS_LETTER = /[a-z]/;
const LEET_CHARACTER = /[013457@$]/g;
const JOINER_CHARACTERS = /['’ʼ]/g;
const MONEY_OR_HANDLE = /[@$]/g;
const REPEATED_LETTERS = /(\p{L})\1{2,}/u;

/** The normalized form of one raw token (already NFKC and lower case); see the module comment. */
export function normalizeToken(raw: string): string {
  let token = raw.replace(JOINER_CHARACTERS, '');
  if (HAS_LETTER.test(token) && !NUMBER_WITH_SUFFIX.test(token)) {
    token = token.replace(LEET_CHARACTER, (character) => LEET[character]);
  } else {
    token = token.replace(MONEY_OR_HANDLE, '');
  }
  return token;
}

/** Whether a token has a run of three or more equal characters ("kiiill"); a plain loop, as this runs per token. */
function hasTripleRun(token: string): boolean {
  for (let index = 2; index < token.length; index++) {
    const code = token.charCodeAt(index);
    if (code === token.charCodeAt(index - 1) && code === token.charCodeAt(index - 2)) return true;
  }
  return false;
}

function variantsOf(token: string): string[] | null {
  if (token.length < 3 || !hasTripleRun(token) || !REPEATED_LETTERS.test(token)) return null;
  return [token.replace(/(\p{L})\1{2,}/gu, '$1'), token.replace(/(\p{L})\1{2,}/gu, '$1$1')];
}

function isJoinerCode(code: number): boolean {
  return code === 0x27 || code === 0x40 || code === 0x24 || code === 0x2019 || code === 0x02bc;
}

/**
 * The normalized tokens of one part (see the module comment). A word cut at the part's start
 * or end is replaced by a placeholder, so a fragment of "skill" is never read as "kill".
 */
export function tokenize(part: ScanPart): TokenStream {
  const text = part.text.normalize('NFKC').toLowerCase();
  const tokens: string[] = [];
  const variants = new Map<number, string[]>();
  const sentenceEnds: boolean[] = [];
  let start = -1;
  let needsCleaning = false;
  // One index past the end, so that the last word is finished inside the loop.
  for (let index = 0; index <= text.length; index++) {
    let kind = OTHER;
    let code = 0;
    if (index < text.length) {
      code = text.charCodeAt(index);
      kind = code < 0x80 ? ASCII_CLASSES[code] : classOfCode(code, text, index);
    }
    if (kind === WORD) {
      if (start < 0) start = index;
      if (code >= 0x30 && code <= 0x39) needsCleaning = true;
      // A letter outside the BMP takes two code units.
      if (code >= 0xd800 && code <= 0xdbff) index++;
      continue;
    }
    if (kind === JOINER) {
      if (start >= 0) needsCleaning = true;
      else if (code === 0x40 || code === 0x24) {
        // `@` or `$` may open a word ("$hit", "@ss"); an apostrophe opens a quotation instead.
        start = index;
        needsCleaning = true;
      }
      continue;
    }
    if (start < 0) {
      if (tokens.length > 0 && isSentenceBreak(code)) sentenceEnds[tokens.length - 1] = true;
      continue;
    }
    // Trailing joiners ("rock'", "cash$") belong to the punctuation around the word.
    let last = index;
    while (last > start && isJoinerCode(text.charCodeAt(last - 1))) last--;
    let token = last - start > MAX_TOKEN_LENGTH * 2 ? '' : text.slice(start, last);
    if (needsCleaning && token !== '') token = normalizeToken(token);
    if (token.length > MAX_TOKEN_LENGTH) token = '';
    if (token !== '') {
      const extra = variantsOf(token);
      if (extra !== null) variants.set(tokens.length, extra);
    }
    tokens.push(token);
    sentenceEnds.push(isSentenceBreak(code));
    start = -1;
    needsCleaning = false;
  }
  if (part.cutStart && tokens.length > 0) tokens[0] = '';
  if (part.cutEnd && tokens.length > 0) tokens[tokens.length - 1] = '';
  return { tokens, variants, sentenceEnds };
}

/**
 * A 52-bit fingerprint of a normalized token: two FNV-1a passes with different offsets, each
 * finished with MurmurHash3's fmix32, 32 + 20 bits kept. The lexicon keeps its most offensive
 * terms only as these fingerprints (13 hex digits), so slurs are not spelled out in source;
 * with ~50 entries the chance that some ordinary word collides is negligible (~10⁻⁸ per word).
 */
export function hashTerm(token: string): number {
  let first = 0x811c9dc5;
  let second = 0x050c5d1f;
  for (let index = 0; index < token.length; index++) {
    const code = token.charCodeAt(index);
    first = Math.imul(first ^ code, 0x01000193);
    second = Math.imul(second ^ code, 0x01000193);
  }
  return finishHash(first) * 0x100000 + (finishHash(second) & 0xfffff);
}

function finishHash(hash: number): number {
  let value = hash;
  value ^= value >>> 16;
  value = Math.imul(value, 0x85ebca6b);
  value ^= value >>> 13;
  value = Math.imul(value, 0xc2b2ae35);
  value ^= value >>> 16;
  return value >>> 0;
}
