/**
 * Token counting for quotas, usage of the mock provider and prompt-size checks.
 *
 * Counts use the `o200k_base` byte-pair encoding (GPT-4o and later). Other
 * providers tokenize differently, so for them these numbers are estimates; the
 * gateway bills with the provider's reported usage whenever it has one.
 *
 * The rank table is js-tiktoken's `o200k_base` (the same data `js-tiktoken/lite`
 * is built from), loaded on first use or at startup through
 * {@link warmTokenizer}. We merge against it ourselves rather than through
 * `Tiktoken`: its constructor takes about a second, each `encode` call pays a
 * few microseconds of setup (a new RegExp and Sets) per call, and its merge is
 * quadratic with string joins. Here a table keyed by the raw bytes (as a
 * latin1 string) loads in about 0.2 s, ASCII pieces are looked up without any
 * conversion, and very long pieces are merged in bounded slices. The ids are
 * the same as js-tiktoken's (server/tokenizer.test.ts compares them).
 *
 * Counting is synchronous and runs on the event loop, so its work is bounded
 * (see {@link TOKEN_COUNT_LIMITS}): past a byte budget the rest of a text is
 * bounded by its UTF-8 length, and the pre-tokenizer regex only ever sees
 * windows of a few thousand characters (V8 overflows its regex stack on a
 * multi-megabyte run of CJK letters).
 */
import { createRequire } from 'node:module';
import type { TiktokenBPE } from 'js-tiktoken/lite';

/**
 * Limits on the work of one count. Beyond a budget, the rest of a text counts
 * as its UTF-8 byte length, {@link estimateTokensFromBytes}: an upper bound,
 * so quotas and holds err on the safe side, and one that costs nothing to
 * compute. Exact counting costs about 0.1–0.2 µs per byte of prose or code,
 * and up to about 2 µs per byte of adversarial text (a long run of random
 * letters, where every byte pair is merged through the rank table), measured
 * on a loaded 2-core machine. The budgets below hold the event loop for some
 * milliseconds on normal prompts and at most a few hundred on the worst text,
 * where a 19 MB text used to hold it for 5–40 s.
 */
export const TOKEN_COUNT_LIMITS = {
  /**
   * {@link countTextTokens} counts exactly this many UTF-8 bytes of a text
   * (about 16,000 tokens of prose, more than most answers). It bills
   * delivered text when the provider reports no usage, so normal answers are
   * counted exactly.
   */
  exactTextBytes: 64 * 1024,
  /**
   * `estimateRequestTokens` (request-tokens.ts) counts exactly this many UTF-8 bytes over all
   * the texts of a request (system prompt, messages, tool definitions and
   * schemas, in that order); the texts past it count as their byte length.
   */
  exactRequestBytes: 128 * 1024,
  /**
   * The pre-tokenizer regex runs on windows of at most this many UTF-16 code
   * units, cut where the pieces of the whole text would be cut anyway (see
   * `windowEndOf`), so that its backtracking stack stays small.
   */
  windowChars: 4096,
} as const;

/**
 * An upper bound of the `o200k_base` token count of any text of `byteLength`
 * UTF-8 bytes: every token stands for at least one byte and the tokens of a
 * text cover its bytes exactly once, so there are never more tokens than
 * bytes. It is loose (prose averages about 4 bytes per token, CJK about 3 to
 * 4); use it where only the size is known or counting would cost too much.
 * A lone surrogate in a JavaScript string is encoded as U+FFFD (3 bytes), as
 * `Buffer.byteLength` counts it.
 */
export function estimateTokensFromBytes(byteLength: number): number {
  return byteLength > 0 ? Math.ceil(byteLength) : 0;
}

/** What is left of the bytes a count may tokenize exactly; shared by the texts of one request. */
export interface ExactBudget {
  bytes: number;
}

/**
 * Pieces longer than this many bytes are merged in slices of this size: the
 * merge is quadratic in the piece length, and such pieces (runs of one
 * character, long identifiers, inline blobs) are rare in prose. A slice
 * boundary may cost a merge, so the count of such a piece can be a little high.
 */
const MAX_PIECE_BYTES = 128;

interface RankTable {
  /** Token bytes (one char per byte, latin1) → rank, which is the token id. */
  ranks: Map<string, number>;
  /** Token id → its bytes, as in `ranks`. */
  bytesById: string[];
  /**
   * Rank of every two-byte token by `first * 256 + second` (+Infinity where
   * the pair is no token): the first round of a merge looks up every
   * adjacent pair of bytes, and an array read costs far less than slicing a
   * string and hashing it.
   */
  pairRanks: Float64Array;
  /** The encoding's pre-tokenizer (global, unicode). */
  splitPattern: RegExp;
}

let table: RankTable | null = null;

function loadRankTable(): RankTable {
  if (table) return table;
  // A synchronous, lazy load: the rank file is 2.3 MB of JS that we do not
  // want to parse at import time, and counting must stay synchronous.
  const require = createRequire(import.meta.url);
  const bpe = require('js-tiktoken/ranks/o200k_base') as TiktokenBPE;
  const ranks = new Map<string, number>();
  const bytesById: string[] = [];
  // `bpe_ranks` lines are `<name> <first rank> <base64 token> <base64 token> …`.
  for (const line of bpe.bpe_ranks.split('\n')) {
    if (!line) continue;
    const fields = line.split(' ');
    const offset = Number.parseInt(fields[1], 10);
    for (let i = 2; i < fields.length; i++) {
      const bytes = atob(fields[i]);
      ranks.set(bytes, offset + i - 2);
      bytesById[offset + i - 2] = bytes;
    }
  }
  const pairRanks = new Float64Array(256 * 256).fill(Number.POSITIVE_INFINITY);
  for (const [bytes, rank] of ranks) {
    if (bytes.length === 2) pairRanks[bytes.charCodeAt(0) * 256 + bytes.charCodeAt(1)] = rank;
  }
  table = { ranks, bytesById, pairRanks, splitPattern: new RegExp(bpe.pat_str, 'gu') };
  return table;
}

/** Loads the rank table now (about 0.2 s) instead of on the first request. */
export function warmTokenizer(): void {
  loadRankTable();
}

// eslint-disable-next-line no-control-regex -- matches the ASCII range on purpose
const NON_ASCII = /[^\x00-\x7f]/;

/** A piece's UTF-8 bytes as a latin1 string, the key form of the rank table. */
function toByteString(piece: string): string {
  return NON_ASCII.test(piece) ? Buffer.from(piece, 'utf8').toString('latin1') : piece;
}

function rankOf(ranks: Map<string, number>, bytes: string, start: number, end: number): number {
  const rank = ranks.get(bytes.slice(start, end));
  return rank === undefined ? Number.POSITIVE_INFINITY : rank;
}

/**
 * Byte-pair merge of one piece: repeatedly join the adjacent pair of parts
 * whose concatenation has the lowest rank (leftmost on ties) until no pair is
 * in the table. Returns the part boundaries, `[0, …, bytes.length]`.
 */
function mergeBounds(state: RankTable, bytes: string): number[] {
  const { ranks } = state;
  const length = bytes.length;
  const bounds: number[] = [];
  for (let i = 0; i <= length; i++) bounds.push(i);
  // pairRanks[i] is the rank of parts i and i + 1 joined.
  const pairRanks: number[] = [];
  for (let i = 0; i < length - 1; i++) pairRanks.push(state.pairRanks[bytes.charCodeAt(i) * 256 + bytes.charCodeAt(i + 1)]);
  while (pairRanks.length > 0) {
    let best = 0;
    for (let i = 1; i < pairRanks.length; i++) {
      if (pairRanks[i] < pairRanks[best]) best = i;
    }
    if (pairRanks[best] === Number.POSITIVE_INFINITY) break;
    bounds.splice(best + 1, 1);
    pairRanks.splice(best, 1);
    // The joined part spans bounds[best]..bounds[best + 1]; refresh the pairs that touch it.
    if (best < pairRanks.length) pairRanks[best] = rankOf(ranks, bytes, bounds[best], bounds[best + 2]);
    if (best > 0) pairRanks[best - 1] = rankOf(ranks, bytes, bounds[best - 1], bounds[best + 1]);
  }
  return bounds;
}

// Classes of single characters, for the cheap checks of `isPieceBoundary`.
const WHITESPACE = /\s/u;
const LETTER = /\p{L}/u;
const LETTER_OR_MARK = /[\p{L}\p{M}]/u;

function isWhitespaceCode(code: number): boolean {
  if (code < 128) return code === 32 || (code >= 9 && code <= 13);
  return WHITESPACE.test(String.fromCharCode(code));
}

function isAsciiLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

function isSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdfff;
}

/**
 * Whether the `o200k_base` pre-tokenizer always ends a piece between
 * `text[index - 1]` and `text[index]`, whatever comes before or after, so that
 * tokenizing the two sides apart gives the same pieces as the whole. Two cases
 * are sure, from the pattern's alternatives (letters with an optional leading
 * non-letter and a trailing `'s`-style contraction; 1–3 digits; an optional
 * space and punctuation followed by line breaks or slashes; whitespace runs):
 * - a space after a non-whitespace character: a space only ever starts a
 *   piece or sits in a whitespace run;
 * - a letter followed by something that is neither a letter, a combining mark
 *   nor an apostrophe: a letter only sits in a letters piece, which goes on
 *   only through letters, marks and a contraction.
 * Surrogates (astral characters) are never taken as a boundary, to keep the
 * checks on single code units. Exported for its property test.
 */
export function isPieceBoundary(text: string, index: number): boolean {
  const before = text.charCodeAt(index - 1);
  const at = text.charCodeAt(index);
  if (at === 32) return !isWhitespaceCode(before);
  if (isSurrogate(at) || at === 39 /* ' */) return false;
  const beforeIsLetter = before < 128 ? isAsciiLetter(before) : !isSurrogate(before) && LETTER.test(String.fromCharCode(before));
  if (!beforeIsLetter) return false;
  return at < 128 ? !isAsciiLetter(at) : !LETTER_OR_MARK.test(String.fromCharCode(at));
}

/**
 * End of the regex window that starts at `start`: the last piece boundary in
 * the second half of the next `windowChars` code units, so that normal text
 * (which has a space or a punctuation mark every few characters) is tokenized
 * exactly as a whole. A run with no boundary (one character repeated, a blob)
 * is cut at the window's end, between two code points; such a run is merged
 * in `MAX_PIECE_BYTES` slices anyway.
 */
function windowEndOf(text: string, start: number): number {
  const limit = start + TOKEN_COUNT_LIMITS.windowChars;
  if (limit >= text.length) return text.length;
  const floor = start + TOKEN_COUNT_LIMITS.windowChars / 2;
  for (let index = limit; index > floor; index--) {
    if (isPieceBoundary(text, index)) return index;
  }
  const code = text.charCodeAt(limit - 1);
  return code >= 0xd800 && code <= 0xdbff ? limit - 1 : limit;
}

/** Calls `onSlice` with each slice (as bytes) of one regex window that is merged on its own. */
function forEachMergeUnitOfWindow(state: RankTable, window: string, onSlice: (bytes: string) => void): void {
  const pattern = state.splitPattern;
  pattern.lastIndex = 0;
  for (let match = pattern.exec(window); match !== null; match = pattern.exec(window)) {
    const bytes = toByteString(match[0]);
    if (bytes.length <= MAX_PIECE_BYTES) {
      onSlice(bytes);
      continue;
    }
    for (let start = 0; start < bytes.length; start += MAX_PIECE_BYTES) {
      onSlice(bytes.slice(start, start + MAX_PIECE_BYTES));
    }
  }
}

/** Calls `onSlice` with each slice of a text (as bytes) that is merged on its own. */
function forEachMergeUnit(state: RankTable, text: string, onSlice: (bytes: string) => void): void {
  for (let start = 0; start < text.length; ) {
    const end = windowEndOf(text, start);
    forEachMergeUnitOfWindow(state, text.slice(start, end), onSlice);
    start = end;
  }
}

function countSliceTokens(state: RankTable, bytes: string): number {
  return bytes.length <= 1 || state.ranks.has(bytes) ? 1 : mergeBounds(state, bytes).length - 1;
}

/**
 * Tokens of a text, counted exactly window by window while the budget lasts;
 * the rest, once it is spent, counts as its UTF-8 length. The budget is
 * checked before each window, so a count may overrun it by one window.
 */
export function countTokensWithin(text: string, budget: ExactBudget): number {
  if (text.length === 0) return 0;
  const state = loadRankTable();
  let total = 0;
  const onSlice = (bytes: string) => {
    total += countSliceTokens(state, bytes);
  };
  for (let start = 0; start < text.length; ) {
    if (budget.bytes <= 0) return total + estimateTokensFromBytes(Buffer.byteLength(text.slice(start), 'utf8'));
    const end = windowEndOf(text, start);
    const window = text.slice(start, end);
    budget.bytes -= Buffer.byteLength(window, 'utf8');
    forEachMergeUnitOfWindow(state, window, onSlice);
    start = end;
  }
  return total;
}

/**
 * Number of `o200k_base` tokens of a text. Special-token markers such as
 * `<|endoftext|>` in user text are counted as ordinary text. Exact for texts
 * up to {@link TOKEN_COUNT_LIMITS}`.exactTextBytes`; of a longer text the
 * part past that counts as its UTF-8 length, an upper bound
 * ({@link estimateTokensFromBytes}), so the cost stays bounded.
 */
export function countTextTokens(text: string): number {
  return countTokensWithin(text, { bytes: TOKEN_COUNT_LIMITS.exactTextBytes });
}

/**
 * The `o200k_base` token ids of a text (special-token markers encoded as
 * ordinary text). Unbounded: its cost grows with the text, so it is for texts
 * the gateway makes itself (the mock provider's answers), not for client input.
 */
export function encodeText(text: string): number[] {
  const state = loadRankTable();
  const { ranks } = state;
  const ids: number[] = [];
  forEachMergeUnit(state, text, (bytes) => {
    const whole = ranks.get(bytes);
    if (whole !== undefined) {
      ids.push(whole);
      return;
    }
    const bounds = mergeBounds(state, bytes);
    for (let i = 0; i + 1 < bounds.length; i++) {
      // Every single byte is a token, so each merged part has a rank.
      ids.push(ranks.get(bytes.slice(bounds[i], bounds[i + 1])) ?? 0);
    }
  });
  return ids;
}

/** The text of a sequence of token ids; a character cut between tokens becomes U+FFFD. */
export function decodeTokens(ids: readonly number[]): string {
  const { bytesById } = loadRankTable();
  let bytes = '';
  for (const id of ids) bytes += bytesById[id] ?? '';
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/**
 * The prefix of `text` made of its first `maxTokens` tokens, never counting
 * more than `maxTokens` on its own. A character split between two tokens is
 * dropped rather than left half-encoded.
 */
export function truncateTextToTokens(text: string, maxTokens: number): string {
  if (maxTokens <= 0) return '';
  const ids = encodeText(text);
  if (ids.length <= maxTokens) return text;
  // A cut inside a piece can re-tokenize differently on its own, hence the check.
  for (let kept = maxTokens; kept > 0; kept--) {
    const prefix = decodeTokens(ids.slice(0, kept)).replace(/\uFFFD+$/u, '');
    if (countTextTokens(prefix) <= maxTokens) return prefix;
  }
  return '';
}
