/**
 * Bounded reading of untrusted text for the moderation heuristics: which parts of a huge text
 * are read, and how text becomes the normalized word tokens the lexicon is written in.
 *
 * Sampling rule ({@link sampleForScan}): a text of at most `budget` UTF-16 code units is read
 * whole. A longer one is read as its first half-budget, its last quarter-budget, and
 * {@link MIDDLE_WINDOW_COUNT} evenly spaced windows sharing the remaining quarter across the
 * middle (budgets under 8 Ki read head and tail only). Each cut is moved to a nearby
 * whitespace, or else the cut word is ignored (so "skill" is never read as "kill"), and never
 * falls inside a surrogate pair. The parts are scanned separately, so a phrase cannot be
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
import { finishHash, FNV_OFFSET, FNV_PRIME } from '../text-hash.js';

/** Middle windows used when a text exceeds its scan budget. */
export const MIDDLE_WINDOW_COUNT = 16;

/** Tokens longer than this can match no lexicon entry and are kept as empty placeholders. */
export const MAX_TOKEN_LENGTH = 40;

/** How far a cut may move to reach whitespace. */
const CUT_SLACK = 64;

function isWhitespaceCode(code: number): boolean {
  return (
    code === 0x20 || (code >= 0x09 && code <= 0x0d) || code === 0xa0 || code === 0x3000 || code === 0x2028 || code === 0x2029
  );
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
  // Windows shorter than a couple of cut slacks would be mostly cut words; small budgets read head and tail only.
  if (windowLength >= CUT_SLACK * 2) {
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

/** How far back from a window's end a sentence break is looked for. */
const SENTENCE_SLACK = 2048;

/** One window of a text read whole (see {@link scanWindows}). */
export interface ScanWindow {
  part: ScanPart;
  /** Offset of the window in the text. */
  start: number;
  /** The window starts where the previous one ended (false for the first). */
  continues: boolean;
}

/**
 * The whole of `text` as consecutive windows of at most `size` code units, for a reader that
 * yields between windows. Each cut is placed just after a sentence break (. ! ? ; : newline,
 * ideographic stops) within {@link SENTENCE_SLACK} code units of the window's end, where no
 * phrase of the classifier or roleplay cue can span it; else at whitespace nearby; else inside
 * a word (the cut word is then ignored on both sides, as in {@link sampleForScan}), never
 * inside a surrogate pair. Nothing is skipped: the windows' texts concatenate to `text`.
 */
export function* scanWindows(text: string, size: number): Generator<ScanWindow> {
  let start = 0;
  let cutStart = false;
  do {
    let end = text.length;
    let cutEnd = false;
    if (text.length - start > size) {
      end = windowEnd(text, start, start + size);
      cutEnd = !isWhitespaceCode(text.charCodeAt(end - 1)) && !isSentenceBreak(text.charCodeAt(end - 1)) && !isWhitespaceCode(text.charCodeAt(end));
    }
    yield { part: { text: text.slice(start, end), cutStart, cutEnd }, start, continues: start > 0 };
    start = end;
    cutStart = cutEnd;
  } while (start < text.length);
}

/** Where a window starting at `start` and wanting to end at `limit` ends (see {@link scanWindows}). */
function windowEnd(text: string, start: number, limit: number): number {
  const floor = Math.max(start + 1, limit - SENTENCE_SLACK);
  for (let index = limit; index > floor; index--) {
    if (isSentenceBreak(text.charCodeAt(index - 1))) return index;
  }
  return Math.max(start + 1, adjustEnd(text, limit));
}

/** One part of a sampled text. */
export interface ScanPart {
  text: string;
  /** The part starts inside a word of the original text. */
  cutStart: boolean;
  /** The part ends inside a word of the original text. */
  cutEnd: boolean;
}

/**
 * The normalized tokens of one part, kept as offsets and hashes so that a token's string is
 * only built when something needs it (most tokens are looked up by hash and never built).
 * The typed arrays are views of buffers reused by the next {@link tokenize} call.
 */
export interface TokenStream {
  /** The part after NFKC and lower-casing; offsets point into it. */
  text: string;
  count: number;
  starts: Int32Array;
  ends: Int32Array;
  /** {@link hashWord} of each normalized token; 0 for a placeholder (a token that matches nothing). */
  hashes: Uint32Array;
  /** 1 when a sentence break (. ! ? ; : newline, ideographic stops) follows the token. */
  sentenceEnds: Uint8Array;
  /** Tokens whose normalized form is not the plain slice of `text` (apostrophes, leetspeak, placeholders). */
  cleaned: Map<number, string>;
  /** Extra forms of tokens with a run of three equal letters. */
  variants: Map<number, string[]>;
}


/** 32-bit FNV-1a of a normalized token over its UTF-16 code units: the key of the lexicon's word index. */
export function hashWord(word: string): number {
  let hash = FNV_OFFSET;
  for (let index = 0; index < word.length; index++) hash = Math.imul(hash ^ word.charCodeAt(index), FNV_PRIME);
  return hash >>> 0;
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

function variantsOf(token: string): string[] | null {
  if (!REPEATED_LETTERS.test(token)) return null;
  return [token.replace(/(\p{L})\1{2,}/gu, '$1'), token.replace(/(\p{L})\1{2,}/gu, '$1$1')];
}

function isJoinerCode(code: number): boolean {
  return code === 0x27 || code === 0x40 || code === 0x24 || code === 0x2019 || code === 0x02bc;
}

/** Buffers reused across calls; a part of n code units has at most n/2 + 1 tokens. */
let starts = new Int32Array(1024);
let ends = new Int32Array(1024);
let hashes = new Uint32Array(1024);
let sentenceEnds = new Uint8Array(1024);

function ensureCapacity(tokens: number): void {
  if (starts.length >= tokens) return;
  const size = Math.max(tokens, starts.length * 2);
  starts = new Int32Array(size);
  ends = new Int32Array(size);
  hashes = new Uint32Array(size);
  sentenceEnds = new Uint8Array(size);
}

/**
 * The normalized tokens of one part (see the module comment). A word cut at the part's start
 * or end becomes a placeholder, so a fragment of "skill" is never read as "kill". The result's
 * arrays are only valid until the next call.
 */
export function tokenize(part: ScanPart): TokenStream {
  const text = part.text.normalize('NFKC').toLowerCase();
  ensureCapacity((text.length >> 1) + 2);
  const cleaned = new Map<number, string>();
  const variants = new Map<number, string[]>();
  let count = 0;
  let start = -1;
  let needsCleaning = false;
  let hash = FNV_OFFSET;
  let run = 0;
  let tripleRun = false;
  let previous = -1;
  // One index past the end, so that the last word is finished inside the loop.
  for (let index = 0; index <= text.length; index++) {
    let kind = OTHER;
    let code = 0;
    if (index < text.length) {
      code = text.charCodeAt(index);
      kind = code < 0x80 ? ASCII_CLASSES[code] : classOfCode(code, text, index);
    }
    if (kind === WORD) {
      if (start < 0) {
        start = index;
        hash = FNV_OFFSET;
        run = 0;
        previous = -1;
      }
      if (code >= 0x30 && code <= 0x39) needsCleaning = true;
      hash = Math.imul(hash ^ code, FNV_PRIME);
      run = code === previous ? run + 1 : 1;
      if (run === 3) tripleRun = true;
      previous = code;
      // A letter outside the BMP takes two code units.
      if (code >= 0xd800 && code <= 0xdbff) {
        index++;
        hash = Math.imul(hash ^ text.charCodeAt(index), FNV_PRIME);
        previous = -1;
      }
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
      if (count > 0 && isSentenceBreak(code)) sentenceEnds[count - 1] = 1;
      continue;
    }
    starts[count] = start;
    ends[count] = index;
    sentenceEnds[count] = isSentenceBreak(code) ? 1 : 0;
    let word: string | null = null;
    if (index - start > MAX_TOKEN_LENGTH * 2) {
      word = '';
    } else if (needsCleaning) {
      // Trailing joiners ("rock'", "cash$") belong to the punctuation around the word.
      let last = index;
      while (last > start && isJoinerCode(text.charCodeAt(last - 1))) last--;
      word = normalizeToken(text.slice(start, last));
    } else if (index - start > MAX_TOKEN_LENGTH) {
      word = '';
    }
    if (word !== null) {
      if (word.length > MAX_TOKEN_LENGTH) word = '';
      cleaned.set(count, word);
      hashes[count] = word === '' ? 0 : hashWord(word);
    } else {
      hashes[count] = hash >>> 0;
    }
    if (tripleRun && hashes[count] !== 0) {
      const extra = variantsOf(word ?? text.slice(start, index));
      if (extra !== null) variants.set(count, extra);
    }
    count++;
    start = -1;
    needsCleaning = false;
    tripleRun = false;
  }
  if (part.cutStart && count > 0) {
    cleaned.set(0, '');
    hashes[0] = 0;
    variants.delete(0);
  }
  if (part.cutEnd && count > 0) {
    cleaned.set(count - 1, '');
    hashes[count - 1] = 0;
    variants.delete(count - 1);
  }
  return {
    text,
    count,
    starts: starts.subarray(0, count),
    ends: ends.subarray(0, count),
    hashes: hashes.subarray(0, count),
    sentenceEnds: sentenceEnds.subarray(0, count),
    cleaned,
    variants,
  };
}

/** The normalized string of token `index` ('' for a placeholder). */
export function tokenText(stream: TokenStream, index: number): string {
  const cleaned = stream.cleaned.get(index);
  return cleaned ?? stream.text.slice(stream.starts[index], stream.ends[index]);
}

/**
 * A 52-bit fingerprint of a normalized token: two FNV-1a passes with different offsets, each
 * finished with MurmurHash3's fmix32, 32 + 20 bits kept. The lexicon keeps its most offensive
 * terms only as these fingerprints (13 hex digits), so slurs are not spelled out in source;
 * with ~50 entries the chance that some ordinary word collides is negligible (~10⁻⁸ per word).
 */
export function hashTerm(token: string): number {
  let first = FNV_OFFSET;
  let second = 0x050c5d1f;
  for (let index = 0; index < token.length; index++) {
    const code = token.charCodeAt(index);
    first = Math.imul(first ^ code, 0x01000193);
    second = Math.imul(second ^ code, 0x01000193);
  }
  return finishHash(first) * 0x100000 + (finishHash(second) & 0xfffff);
}

export { finishHash };
