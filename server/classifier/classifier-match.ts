/**
 * The matching engine of the moderation classifier (`classifier.ts` documents the pipeline):
 * per-text scan state, the token view, and the bounded automaton that matches the lexicon's
 * phrases around each anchor word.
 */
import { NEGATION_FACTOR, SIGNALS } from './classifier-lexicon.js';
import { compileLexicon, type CompiledPhrase, type Side, type Slot } from './classifier-compile.js';
import { finishHash, hashTerm, hashWord, tokenText, type TokenStream } from './scan-text.js';

/** Multi-word match attempts per text, all phrases together; later anchors match single-word signals only. */
export const MAX_PHRASE_ATTEMPTS = 10_000;

/** Match attempts per phrase and text, so that a flood of one anchor word cannot use up the shared budget. */
export const MAX_ATTEMPTS_PER_PHRASE = 400;

/** The lexicon compiled once per process. */
export const LEXICON = compileLexicon(SIGNALS);

// ------------------------------------------------------------------------------------------
// Matching.

/** Per-text scan state: best damping factor per signal, last position of each tag, work done. */
export class ScanState {
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
export class Tokens {
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

export function scanPart(stream: Tokens, state: ScanState): void {
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
