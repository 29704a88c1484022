/**
 * The gateway's moderation classifier: a documented, deterministic heuristic behind
 * `POST /v1/moderations` on the `mock` provider and the restricted family's usage checks.
 *
 * Pipeline: bounded sampling of the text (`scan-text.ts`: whole text up to
 * {@link CLASSIFIER_SCAN_BUDGET} code units, sampled windows beyond), NFKC + lower case +
 * leetspeak undone, word tokens, then one pass over the tokens: each token is looked up in an
 * index of "anchor" words, and only the phrases anchored there are matched around it by a
 * small bounded automaton (no regular expression runs over the text, so nothing can backtrack).
 * Signals, weights and the scoring rule are documented in `classifier-lexicon.ts`.
 *
 * Scores are in [0, 1], rounded to 6 decimals; a parent category scores at least as high as
 * each of its subcategories, and is flagged when one of them is. A category is flagged at or
 * above its {@link MODERATION_THRESHOLDS} entry; the verdict is flagged when any category is.
 *
 * Cost: linear in the scanned part, so bounded for any input. Each token costs a few hash
 * lookups; each anchor hit runs an automaton over at most a dozen tokens; and at most
 * {@link MAX_ATTEMPTS_PER_PHRASE} attempts per phrase and {@link MAX_PHRASE_ATTEMPTS} in all
 * are made per text, so even a text made of one anchor word repeated stays cheap (a phrase
 * hidden behind hundreds of decoys of its anchor word is then missed, the accepted price of a
 * bounded check).
 */
import { NEGATION_FACTOR, SIGNALS } from './classifier-lexicon.js';
import { CATEGORY_INDEX, compileLexicon, type CompiledPhrase, type Side, type Slot } from './classifier-compile.js';
import { CATEGORY_PARENTS, MODERATION_CATEGORIES, type ModerationCategory } from './moderation-categories.js';
import { finishHash, hashTerm, hashWord, sampleForScan, tokenText, tokenize, type TokenStream } from './scan-text.js';

export { CATEGORY_PARENTS, MODERATION_CATEGORIES, type ModerationCategory } from './moderation-categories.js';

/** The classifier's answer for one text, in the shape of one Moderation result item. */
export interface ModerationVerdict {
  flagged: boolean;
  categories: Record<ModerationCategory, boolean>;
  category_scores: Record<ModerationCategory, number>;
}

/** Options of {@link classifyText}. */
export interface ClassifyOptions {
  /** UTF-16 code units read before sampling starts; default {@link CLASSIFIER_SCAN_BUDGET}, at least {@link MIN_SCAN_BUDGET}. */
  scanBudget?: number;
}

/** Code units read in full before the classifier samples (see `scan-text.ts`). */
export const CLASSIFIER_SCAN_BUDGET = 128 * 1024;

/** The smallest `scanBudget` honoured; smaller values read this much. */
export const MIN_SCAN_BUDGET = 256;

/** Multi-word match attempts per text, all phrases together; later anchors match single-word signals only. */
export const MAX_PHRASE_ATTEMPTS = 10_000;

/** Match attempts per phrase and text, so that a flood of one anchor word cannot use up the shared budget. */
export const MAX_ATTEMPTS_PER_PHRASE = 400;

/**
 * Score at or above which a category is flagged. `sexual/minors` is lower: a miss there costs
 * far more than a false alarm.
 */
export const MODERATION_THRESHOLDS: Readonly<Record<ModerationCategory, number>> = {
  hate: 0.5,
  'hate/threatening': 0.5,
  harassment: 0.5,
  'harassment/threatening': 0.5,
  'self-harm': 0.5,
  'self-harm/intent': 0.5,
  'self-harm/instructions': 0.5,
  sexual: 0.5,
  'sexual/minors': 0.4,
  violence: 0.5,
  'violence/graphic': 0.5,
};

const LEXICON = compileLexicon(SIGNALS);

// ------------------------------------------------------------------------------------------
// Matching.

/** Per-text scan state: best damping factor per signal, last position of each tag, work done. */
class ScanState {
  readonly factors: Float64Array;
  readonly attemptsPerPhrase: Int32Array;
  /** Global position of each tag's last mark (-Infinity: never), and that mark's factor. */
  readonly tagPositions: Float64Array;
  readonly tagFactors: Float64Array;
  attempts = 0;
  /** Global position of the current part's first token (parts are kept far apart). */
  base = 0;

  constructor(signalCount: number, tagCount: number) {
    this.factors = new Float64Array(signalCount);
    this.attemptsPerPhrase = new Int32Array(signalCount);
    this.tagPositions = new Float64Array(tagCount).fill(Number.NEGATIVE_INFINITY);
    this.tagFactors = new Float64Array(tagCount);
  }
}

/** A token stream with the strings and fingerprints of the tokens that were needed, cached. */
class Tokens {
  readonly count: number;
  readonly hashes: Uint32Array;
  readonly sentenceEnds: Uint8Array;
  private strings: Array<string | undefined> | null = null;
  private readonly fingerprints = new Map<number, number>();

  constructor(readonly stream: TokenStream) {
    this.count = stream.count;
    this.hashes = stream.hashes;
    this.sentenceEnds = stream.sentenceEnds;
  }

  textAt(position: number): string {
    this.strings ??= new Array<string | undefined>(this.count);
    let text = this.strings[position];
    if (text === undefined) {
      text = tokenText(this.stream, position);
      this.strings[position] = text;
    }
    return text;
  }

  fingerprintAt(position: number): number {
    let fingerprint = this.fingerprints.get(position);
    if (fingerprint === undefined) {
      fingerprint = hashTerm(this.textAt(position));
      this.fingerprints.set(position, fingerprint);
    }
    return fingerprint;
  }
}

function slotMatches(slot: Slot, stream: Tokens, position: number): boolean {
  const hash = stream.hashes[position];
  if (hash === 0) return false;
  if (slot.wordHashes.has(hash) && slot.words.has(stream.textAt(position))) return true;
  if (slot.fingerprintKeys.size > 0 && slot.fingerprintKeys.has(finishHash(hash)) && slot.fingerprints.has(stream.fingerprintAt(position))) return true;
  const variants = stream.stream.variants.get(position);
  if (variants !== undefined) {
    for (const variant of variants) {
      if (slot.words.has(variant) || (slot.fingerprints.size > 0 && slot.fingerprints.has(hashTerm(variant)))) return true;
    }
  }
  return false;
}

const NO_MATCH = -2;

/**
 * State buffers of {@link matchSide}, reused across calls: a state is (next slot, tokens
 * skipped since the last match, last matched position). Slots × (gap + 1) bounds the live
 * states; patterns stay far below the capacity.
 */
const STATE_CAPACITY = 256;
const stateBuffers = [0, 1].map(() => ({ slot: new Int32Array(STATE_CAPACITY), skipped: new Int32Array(STATE_CAPACITY), last: new Int32Array(STATE_CAPACITY), size: 0 }));
type StateBuffer = (typeof stateBuffers)[number];

function addState(buffer: StateBuffer, side: Side, slot: number, skipped: number, last: number): void {
  const count = side.slots.length;
  let current = slot;
  while (buffer.size < STATE_CAPACITY) {
    for (let state = 0; state < buffer.size; state++) {
      if (buffer.slot[state] === current && buffer.skipped[state] === skipped) return;
    }
    buffer.slot[buffer.size] = current;
    buffer.skipped[buffer.size] = skipped;
    buffer.last[buffer.size] = last;
    buffer.size++;
    // An optional slot may also be passed over without consuming a token.
    if (current < count && side.slots[current].optional && (current + 1 === count || skipped <= side.gaps[current + 1])) {
      current++;
      continue;
    }
    return;
  }
}

/**
 * Matches one side of a phrase walking away from the anchor with a small NFA. Returns the
 * position of the outermost matched token (the anchor's when the side is empty or all
 * optional), or NO_MATCH.
 */
function matchSide(side: Side, stream: Tokens, anchor: number, direction: 1 | -1): number {
  const count = side.slots.length;
  if (count === 0) return anchor;
  let current = stateBuffers[0];
  let next = stateBuffers[1];
  current.size = 0;
  addState(current, side, 0, 0, anchor);
  for (let position = anchor + direction; ; position += direction) {
    for (let state = 0; state < current.size; state++) {
      if (current.slot[state] === count) return current.last[state];
    }
    if (position < 0 || position >= stream.count) return NO_MATCH;
    // A phrase never spans a sentence break.
    if (stream.sentenceEnds[direction === 1 ? position - 1 : position] === 1) return NO_MATCH;
    next.size = 0;
    for (let state = 0; state < current.size; state++) {
      const slot = current.slot[state];
      if (slotMatches(side.slots[slot], stream, position)) addState(next, side, slot + 1, 0, position);
      if (current.skipped[state] < side.gaps[slot]) addState(next, side, slot, current.skipped[state] + 1, current.last[state]);
    }
    if (next.size === 0) return NO_MATCH;
    const swap = current;
    current = next;
    next = swap;
  }
}

/** Whether one of the `count` tokens after `end` matches, not looking past the end of the sentence. */
function anyTokenAfter(slot: Slot, stream: Tokens, end: number, count: number): boolean {
  const last = Math.min(stream.count - 1, end + count);
  for (let position = end + 1; position <= last && stream.sentenceEnds[position - 1] === 0; position++) {
    if (slotMatches(slot, stream, position)) return true;
  }
  return false;
}

/** Whether one of the `count` tokens before `start` matches, not looking past the start of the sentence. */
function anyTokenBefore(slot: Slot, stream: Tokens, start: number, count: number): boolean {
  const first = Math.max(0, start - count);
  for (let position = start - 1; position >= first && stream.sentenceEnds[position] === 0; position--) {
    if (slotMatches(slot, stream, position)) return true;
  }
  return false;
}

/**
 * Whether a negation sits in the match or the three tokens before it, or a prohibition word in
 * the four after it, within the same sentence.
 */
function isNegated(stream: Tokens, start: number, end: number): boolean {
  for (let position = start; position <= end; position++) {
    if (slotMatches(LEXICON.negations, stream, position)) return true;
  }
  return anyTokenBefore(LEXICON.negations, stream, start, 3) || anyTokenAfter(LEXICON.prohibitions, stream, end, 4);
}

function recordTag(tag: number, position: number, factor: number, stream: Tokens, state: ScanState): void {
  const globalPosition = state.base + position;
  for (const near of LEXICON.nearByTag[tag]) {
    if (state.factors[near.index] === 1) continue;
    const partner = near.tags[0] === tag ? near.tags[1] : near.tags[0];
    const partnerPosition = state.tagPositions[partner];
    if (globalPosition - partnerPosition > near.within) continue;
    let nearFactor = Math.min(factor, state.tagFactors[partner]);
    const partnerLocal = partnerPosition - state.base;
    if (near.negatable && partnerLocal >= 0 && isNegated(stream, Math.min(partnerLocal, position), Math.max(partnerLocal, position))) {
      nearFactor = Math.min(nearFactor, NEGATION_FACTOR);
    }
    if (nearFactor > state.factors[near.index]) state.factors[near.index] = nearFactor;
  }
  state.tagPositions[tag] = globalPosition;
  state.tagFactors[tag] = factor;
}

/** Whether a tag can still change a score: some `near` signal using it is not yet at full strength. */
function tagStillUseful(tag: number, state: ScanState): boolean {
  for (const near of LEXICON.nearByTag[tag]) {
    if (state.factors[near.index] < 1) return true;
  }
  return false;
}

function tryPhrase(phrase: CompiledPhrase, stream: Tokens, position: number, state: ScanState): void {
  // A counted signal needs no second match unless its tag still feeds `near` signals.
  if (state.factors[phrase.index] === 1 && (phrase.tag < 0 || !tagStillUseful(phrase.tag, state))) return;
  if (phrase.multiWord && (state.attempts >= MAX_PHRASE_ATTEMPTS || state.attemptsPerPhrase[phrase.index] >= MAX_ATTEMPTS_PER_PHRASE)) return;
  // The index is keyed by hash: confirm the anchor really is one of the phrase's words.
  if (!slotMatches(phrase.anchor, stream, position)) return;
  if (phrase.multiWord) {
    state.attempts++;
    state.attemptsPerPhrase[phrase.index]++;
  }
  const start = matchSide(phrase.left, stream, position, -1);
  if (start === NO_MATCH) return;
  const end = matchSide(phrase.right, stream, position, 1);
  if (end === NO_MATCH) return;
  if (phrase.unlessNext !== null && anyTokenAfter(phrase.unlessNext, stream, end, 3)) return;
  if (phrase.unlessPrevious !== null && anyTokenBefore(phrase.unlessPrevious, stream, start, 2)) return;
  const factor = phrase.negatable && isNegated(stream, start, end) ? NEGATION_FACTOR : 1;
  if (factor > state.factors[phrase.index]) state.factors[phrase.index] = factor;
  if (phrase.tag >= 0) recordTag(phrase.tag, position, factor, stream, state);
}

/** Per-signal stamp of the last token a signal was tried at, so each is tried once per token. */
let triedStamp = new Int32Array(0);
let stampCounter = 0;

function tryAll(phrases: CompiledPhrase[] | undefined, stream: Tokens, position: number, state: ScanState): void {
  if (phrases === undefined) return;
  for (const phrase of phrases) {
    if (triedStamp[phrase.index] === stampCounter) continue;
    triedStamp[phrase.index] = stampCounter;
    tryPhrase(phrase, stream, position, state);
  }
}

function tryHash(hash: number, stream: Tokens, position: number, state: ScanState): void {
  if (LEXICON.wordFilter[hash & 0xffff] === 1) tryAll(LEXICON.wordIndex.get(hash), stream, position, state);
  const key = finishHash(hash);
  if (LEXICON.fingerprintFilter[key & 0xffff] === 1) tryAll(LEXICON.fingerprintIndex.get(key), stream, position, state);
}

function scanPart(stream: Tokens, state: ScanState): void {
  if (triedStamp.length !== LEXICON.signalCount) triedStamp = new Int32Array(LEXICON.signalCount);
  const hashes = stream.hashes;
  for (let position = 0; position < stream.count; position++) {
    const hash = hashes[position];
    if (hash === 0) continue;
    // Wrapping is harmless: a stale stamp equal to the counter would need 2^32 tokens in between.
    stampCounter = (stampCounter + 1) | 0;
    tryHash(hash, stream, position, state);
    const variants = stream.stream.variants.get(position);
    if (variants !== undefined) for (const variant of variants) tryHash(hashWord(variant), stream, position, state);
  }
}

// ------------------------------------------------------------------------------------------
// Scoring.

function roundScore(score: number): number {
  return Math.round(score * 1e6) / 1e6;
}

function scoresOf(state: ScanState): number[] {
  const remaining = MODERATION_CATEGORIES.map(() => 1);
  SIGNALS.forEach((spec, signalIndex) => {
    const factor = state.factors[signalIndex];
    if (factor === 0 || spec.scores === undefined) return;
    for (const [category, weight] of Object.entries(spec.scores)) {
      const index = CATEGORY_INDEX.get(category as ModerationCategory) as number;
      remaining[index] *= 1 - (weight as number) * factor;
    }
  });
  return remaining.map((value) => 1 - value);
}

function scanText(text: string, options: ClassifyOptions): ScanState {
  const budget = Math.max(MIN_SCAN_BUDGET, options.scanBudget ?? CLASSIFIER_SCAN_BUDGET);
  const state = new ScanState(LEXICON.signalCount, LEXICON.tagIndex.size);
  for (const part of sampleForScan(text, budget)) {
    const stream = new Tokens(tokenize(part));
    scanPart(stream, state);
    // Keep parts far apart so that `near` signals never pair tokens across a cut.
    state.base += stream.count + 1000;
  }
  return state;
}

/**
 * Classifies one text into the 11 moderation categories (see the module comment). Pure,
 * deterministic, and bounded in time for any input, including lone surrogates and NUL.
 */
export function classifyText(text: string, options: ClassifyOptions = {}): ModerationVerdict {
  const raw = scoresOf(scanText(text, options));
  const scores = {} as Record<ModerationCategory, number>;
  const categories = {} as Record<ModerationCategory, boolean>;
  MODERATION_CATEGORIES.forEach((category, index) => {
    scores[category] = raw[index];
  });
  for (const [child, parent] of Object.entries(CATEGORY_PARENTS) as Array<[ModerationCategory, ModerationCategory]>) {
    if (scores[child] > scores[parent]) scores[parent] = scores[child];
  }
  let flagged = false;
  for (const category of MODERATION_CATEGORIES) {
    scores[category] = roundScore(scores[category]);
    categories[category] = scores[category] >= MODERATION_THRESHOLDS[category];
  }
  for (const [child, parent] of Object.entries(CATEGORY_PARENTS) as Array<[ModerationCategory, ModerationCategory]>) {
    if (categories[child]) categories[parent] = true;
  }
  for (const category of MODERATION_CATEGORIES) flagged ||= categories[category];
  return { flagged, categories, category_scores: scores };
}

/** The ids of the lexicon signals a text matched, strongest first (for tests and tuning). */
export function explainText(text: string, options: ClassifyOptions = {}): Array<{ id: string; factor: number }> {
  const state = scanText(text, options);
  const matched: Array<{ id: string; factor: number }> = [];
  SIGNALS.forEach((spec, index) => {
    if (state.factors[index] > 0) matched.push({ id: spec.id, factor: state.factors[index] });
  });
  return matched.sort((left, right) => right.factor - left.factor);
}
