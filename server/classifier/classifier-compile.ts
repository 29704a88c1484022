/**
 * Compilation of the classifier's lexicon (`classifier-lexicon.ts`) into the anchor indexes and
 * slot automata that `classifier.ts` matches against a token stream. Runs once, at module load.
 */
import { HASHED_SETS, NEGATION_WORDS, PROHIBITION_WORDS, WORD_SETS, type SignalSpec } from './classifier-lexicon.js';
import { MODERATION_CATEGORIES, type ModerationCategory } from './moderation-categories.js';
import { hashWord } from './scan-text.js';

/**
 * One pattern slot. Tokens are compared by hash first ({@link hashWord} for words, the top 32
 * bits of {@link hashTerm} for hashed terms) and by string only when the hash matches, so a
 * token that matches nothing is never turned into a string.
 */
export interface Slot {
  words: Set<string>;
  wordHashes: Set<number>;
  /** Full `hashTerm` fingerprints, and their top 32 bits for the quick check. */
  fingerprints: Set<number>;
  fingerprintKeys: Set<number>;
  optional: boolean;
  /** Arbitrary tokens allowed between the previous slot and this one. */
  gap: number;
}

export interface Side {
  slots: Slot[];
  /** gaps[k]: tokens that may be skipped before slots[k] is matched, walking away from the anchor. */
  gaps: number[];
}

export interface CompiledPhrase {
  index: number;
  id: string;
  anchor: Slot;
  left: Side;
  right: Side;
  multiWord: boolean;
  weights: Array<[number, number]>;
  /** Index of the tag this phrase marks, or -1. */
  tag: number;
  negatable: boolean;
  unlessNext: Slot | null;
  unlessPrevious: Slot | null;
}

export interface CompiledNear {
  index: number;
  id: string;
  /** The two tag indices. */
  tags: [number, number];
  within: number;
  weights: Array<[number, number]>;
  negatable: boolean;
}

export interface CompiledLexicon {
  signalCount: number;
  /** Phrases by the `hashWord` of an anchor word. */
  wordIndex: Map<number, CompiledPhrase[]>;
  /** Phrases by the top 32 bits of an anchor's hashed-term fingerprint. */
  fingerprintIndex: Map<number, CompiledPhrase[]>;
  /**
   * Bit `h & 0xffff` is set for every word-index key h, and likewise for fingerprint keys: one
   * array read rules out ~98% of tokens before any map lookup.
   */
  wordFilter: Uint8Array;
  fingerprintFilter: Uint8Array;
  /** Near signals by tag index. */
  nearByTag: CompiledNear[][];
  tagIndex: Map<string, number>;
  negations: Slot;
  prohibitions: Slot;
}

export const CATEGORY_INDEX = new Map<ModerationCategory, number>(MODERATION_CATEGORIES.map((category, index) => [category, index]));

/** The top 32 bits of a 52-bit `hashTerm` fingerprint, which equal `finishHash(hashWord(term))`. */
function fingerprintKey(fingerprint: number): number {
  return Math.floor(fingerprint / 0x100000);
}

function slotOfWords(words: Iterable<string>, optional: boolean, gap: number): Slot {
  const slot: Slot = { words: new Set(), wordHashes: new Set(), fingerprints: new Set(), fingerprintKeys: new Set(), optional, gap };
  for (const word of words) {
    slot.words.add(word);
    slot.wordHashes.add(hashWord(word));
  }
  return slot;
}

function compileSlot(item: string, gap: number, signalId: string): Slot & { anchor: boolean } {
  let text = item;
  const anchor = text.startsWith('^');
  if (anchor) text = text.slice(1);
  const optional = text.endsWith('?');
  if (optional) text = text.slice(0, -1);
  const words: string[] = [];
  const fingerprints: number[] = [];
  for (const alternative of text.split('|')) {
    if (alternative.startsWith('$')) {
      const set = WORD_SETS[alternative.slice(1)];
      if (set === undefined) throw new Error(`lexicon signal ${signalId}: unknown word set ${alternative}`);
      words.push(...set);
    } else if (alternative.startsWith('%')) {
      const set = HASHED_SETS[alternative.slice(1)];
      if (set === undefined) throw new Error(`lexicon signal ${signalId}: unknown hashed set ${alternative}`);
      for (const hash of set) fingerprints.push(Number.parseInt(hash, 16));
    } else if (alternative !== '') {
      words.push(alternative);
    }
  }
  const slot = slotOfWords(words, optional, gap);
  for (const fingerprint of fingerprints) {
    slot.fingerprints.add(fingerprint);
    slot.fingerprintKeys.add(fingerprintKey(fingerprint));
  }
  return { ...slot, anchor };
}

function compileWeights(spec: SignalSpec): Array<[number, number]> {
  const weights: Array<[number, number]> = [];
  for (const [category, weight] of Object.entries(spec.scores ?? {})) {
    const index = CATEGORY_INDEX.get(category as ModerationCategory);
    if (index === undefined || typeof weight !== 'number') throw new Error(`lexicon signal ${spec.id}: bad category ${category}`);
    weights.push([index, weight]);
  }
  return weights;
}

function pushIndexed(index: Map<number, CompiledPhrase[]>, key: number, phrase: CompiledPhrase): void {
  const list = index.get(key);
  if (list === undefined) index.set(key, [phrase]);
  else if (!list.includes(phrase)) list.push(phrase);
}

export function compileLexicon(specs: readonly SignalSpec[]): CompiledLexicon {
  const lexicon: CompiledLexicon = {
    signalCount: specs.length,
    wordIndex: new Map(),
    fingerprintIndex: new Map(),
    nearByTag: [],
    tagIndex: new Map(),
    wordFilter: new Uint8Array(0x10000),
    fingerprintFilter: new Uint8Array(0x10000),
    negations: slotOfWords(NEGATION_WORDS, false, 0),
    prohibitions: slotOfWords(PROHIBITION_WORDS, false, 0),
  };
  const ids = new Set<string>();
  const tagIndexOf = (tag: string): number => {
    let index = lexicon.tagIndex.get(tag);
    if (index === undefined) {
      index = lexicon.tagIndex.size;
      lexicon.tagIndex.set(tag, index);
      lexicon.nearByTag.push([]);
    }
    return index;
  };
  specs.forEach((spec, signalIndex) => {
    if (ids.has(spec.id)) throw new Error(`lexicon signal ${spec.id} is defined twice`);
    ids.add(spec.id);
    const weights = compileWeights(spec);
    if (spec.near !== undefined) {
      const tags: [number, number] = [tagIndexOf(spec.near[0]), tagIndexOf(spec.near[1])];
      const near: CompiledNear = { index: signalIndex, id: spec.id, tags, within: spec.within ?? 8, weights, negatable: spec.negatable ?? true };
      lexicon.nearByTag[tags[0]].push(near);
      lexicon.nearByTag[tags[1]].push(near);
      return;
    }
    if (spec.pattern === undefined) throw new Error(`lexicon signal ${spec.id} has neither pattern nor near`);
    const slots: Array<Slot & { anchor: boolean }> = [];
    let gap = 0;
    for (const item of spec.pattern.trim().split(/\s+/)) {
      const gapMatch = /^~(\d+)$/.exec(item);
      if (gapMatch !== null) {
        gap = Number(gapMatch[1]);
        continue;
      }
      slots.push(compileSlot(item, gap, spec.id));
      gap = 0;
    }
    let anchorIndex = slots.findIndex((slot) => slot.anchor);
    if (anchorIndex < 0) anchorIndex = slots.findIndex((slot) => !slot.optional);
    const anchor = slots[anchorIndex];
    if (anchor === undefined || anchor.optional) throw new Error(`lexicon signal ${spec.id}: the anchor must be a required slot`);
    const left: Side = { slots: [], gaps: [] };
    for (let slotIndex = anchorIndex - 1; slotIndex >= 0; slotIndex--) {
      left.slots.push(slots[slotIndex]);
      left.gaps.push(slots[slotIndex + 1].gap);
    }
    const right: Side = { slots: [], gaps: [] };
    for (let slotIndex = anchorIndex + 1; slotIndex < slots.length; slotIndex++) {
      right.slots.push(slots[slotIndex]);
      right.gaps.push(slots[slotIndex].gap);
    }
    const phrase: CompiledPhrase = {
      index: signalIndex,
      id: spec.id,
      anchor,
      left,
      right,
      multiWord: slots.length > 1,
      weights,
      tag: spec.tag === undefined ? -1 : tagIndexOf(spec.tag),
      negatable: spec.negatable ?? true,
      unlessNext: spec.unlessNext === undefined ? null : compileSlot(spec.unlessNext, 0, spec.id),
      unlessPrevious: spec.unlessPrevious === undefined ? null : compileSlot(spec.unlessPrevious, 0, spec.id),
    };
    for (const wordHash of anchor.wordHashes) {
      pushIndexed(lexicon.wordIndex, wordHash, phrase);
      lexicon.wordFilter[wordHash & 0xffff] = 1;
    }
    for (const key of anchor.fingerprintKeys) {
      pushIndexed(lexicon.fingerprintIndex, key, phrase);
      lexicon.fingerprintFilter[key & 0xffff] = 1;
    }
  });
  return lexicon;
}

