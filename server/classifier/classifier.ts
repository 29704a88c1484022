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
import { SIGNALS } from './classifier-lexicon.js';
import { CATEGORY_INDEX } from './classifier-compile.js';
import { LEXICON, ScanState, scanPart, Tokens } from './classifier-match.js';
import { CATEGORY_PARENTS, MODERATION_CATEGORIES, type ModerationCategory } from './moderation-categories.js';
import { sampleForScan, tokenize, type ScanPart } from './scan-text.js';

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

export { MAX_ATTEMPTS_PER_PHRASE, MAX_PHRASE_ATTEMPTS } from './classifier-match.js';

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

/** Moderation scores of one scan (see the module comment): parents at least their children, rounded. */
function verdictOf(state: ScanState): ModerationVerdict {
  const raw = scoresOf(state);
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

/** Distance kept between sampled parts, so that `near` signals never pair tokens across a cut. */
const PART_GAP = 1000;

/**
 * One text scanned part by part: what {@link classifyText} does over its sampled parts, open to
 * callers that read a long text in windows and do other work between them (the usage check).
 * {@link reset} starts the next text without allocating, so many short texts stay cheap.
 */
export class TextScanner {
  /** The scan state; internal to this module. */
  readonly state = new ScanState(LEXICON.signalCount, LEXICON.tagIndex.size);
  private parts = 0;

  /**
   * Scans the next part of the text. `continues`: the part starts where the previous one ended
   * (a window cut at a sentence break), so token positions run on and `near` signals pair across
   * the cut, and the attempt caps count afresh (they then bound the work per window, not per
   * text). Otherwise the part is kept far from the previous one, as sampled parts are.
   */
  scan(part: ScanPart, continues = false): void {
    const state = this.state;
    if (continues) {
      state.attempts = 0;
      state.attemptsPerPhrase.fill(0);
    } else if (this.parts > 0) {
      state.base += PART_GAP;
    }
    const stream = new Tokens(tokenize(part));
    scanPart(stream, state);
    state.base += stream.count;
    this.parts++;
  }

  /** Whether any signal matched since the last reset (when not, every score is 0). */
  matched(): boolean {
    const factors = this.state.factors;
    for (let index = 0; index < factors.length; index++) if (factors[index] > 0) return true;
    return false;
  }

  /** The scores of what was scanned since the last reset. */
  verdict(): ModerationVerdict {
    return verdictOf(this.state);
  }

  /** Forgets the text scanned so far. */
  reset(): void {
    const state = this.state;
    state.factors.fill(0);
    state.attemptsPerPhrase.fill(0);
    state.tagPositions.fill(Number.NEGATIVE_INFINITY);
    state.tagFactors.fill(0);
    state.attempts = 0;
    state.base = 0;
    this.parts = 0;
  }
}

function scanText(text: string, options: ClassifyOptions): ScanState {
  const budget = Math.max(MIN_SCAN_BUDGET, options.scanBudget ?? CLASSIFIER_SCAN_BUDGET);
  const scanner = new TextScanner();
  for (const part of sampleForScan(text, budget)) scanner.scan(part);
  return scanner.state;
}

/**
 * Classifies one text into the 11 moderation categories (see the module comment). Pure,
 * deterministic, and bounded in time for any input, including lone surrogates and NUL.
 */
export function classifyText(text: string, options: ClassifyOptions = {}): ModerationVerdict {
  return verdictOf(scanText(text, options));
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
