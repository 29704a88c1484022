/**
 * One run of the usage check (the steps are documented in `usage-rules.ts`), written as a
 * generator that yields after about every {@link CHECK_WINDOW} code units of work: the
 * asynchronous driver gives the event loop back at each yield, so a check reading megabytes
 * never holds other requests up for more than a window; the synchronous one runs straight
 * through.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { UsageRules, UsageRulesInput } from '../catalog/usage-rules.schema.js';
import { classifyText, MODERATION_CATEGORIES, TextScanner, type ModerationCategory } from '../classifier/classifier.js';
import { sampleForScan, scanWindows, type ScanPart } from '../classifier/scan-text.js';
import { combineRoleplayEvidence, detectRoleplayCues, type RoleplayEvidence } from './roleplay-detector.js';
import { compileUsageRules, type CompiledRule, type CompiledUsageRules, type UsageCheckDecision, type UsageCheckInput } from './usage-rules.js';

/** Code units read between two yields; also the window a long text is read in. */
export const CHECK_WINDOW = 64 * 1024;

/** Work a text costs beyond its length, so that a flood of tiny texts still yields now and then. */
const TEXT_COST = 64;

/** Each text of the stored conversation read costs at least this much budget (bounds how many are read). */
export const MIN_SHARE = 256;

/** A check in progress: yields when a window of work is done, returns the decision. */
export type UsageRun<T> = Generator<void, T, undefined>;

/**
 * How many code units of each history text to read (texts of the stored conversation behind
 * `previous_response_id`, which no body limit bounds): texts in priority order (system and
 * developer first, then the rest newest first), at most `budget / MIN_SHARE` of them, the
 * budget shared fairly (short texts whole, the long ones an equal share of what is left).
 * 0 = not read. Within the budget everything is read whole.
 */
export function allocateScanShares(texts: UsageCheckInput['texts'], budget: number): number[] {
  const order: number[] = [];
  texts.forEach((text, index) => {
    if (text.role === 'system' || text.role === 'developer') order.push(index);
  });
  for (let index = texts.length - 1; index >= 0; index--) {
    if (texts[index].role !== 'system' && texts[index].role !== 'developer') order.push(index);
  }
  const considered = order.slice(0, Math.max(1, Math.floor(budget / MIN_SHARE)));
  const shares = new Array<number>(texts.length).fill(0);
  // Water-filling: the shortest texts take what they need, the rest split what remains.
  const byLength = [...considered].sort((left, right) => texts[left].text.length - texts[right].text.length);
  let remaining = budget;
  byLength.forEach((index, position) => {
    const fair = Math.floor(remaining / (byLength.length - position));
    const share = Math.min(Math.max(texts[index].text.length, 1), Math.max(fair, MIN_SHARE));
    shares[index] = share;
    remaining -= Math.max(share, 0);
  });
  return shares;
}

/** Code units to read of each text: the request's own texts whole, history texts within the budget. */
function sharesOf(texts: UsageCheckInput['texts'], budget: number): number[] {
  const shares = new Array<number>(texts.length);
  const history: number[] = [];
  for (let index = 0; index < texts.length; index++) {
    shares[index] = texts[index].text.length;
    if (texts[index].source === 'history') history.push(index);
  }
  if (history.length > 0) {
    const historyShares = allocateScanShares(history.map((index) => texts[index]), budget);
    history.forEach((index, position) => {
      shares[index] = historyShares[position];
    });
  }
  return shares;
}

/** The windows of one text: all of it, or (over its share) each sampled part, in windows. */
function* windowsOf(text: string, share: number): Generator<{ part: ScanPart; continues: boolean }> {
  if (share >= text.length) {
    yield* scanWindows(text, CHECK_WINDOW);
    return;
  }
  for (const sampled of sampleForScan(text, share)) {
    for (const window of scanWindows(sampled.text, CHECK_WINDOW)) {
      const last = window.start + window.part.text.length >= sampled.text.length;
      yield {
        part: { text: window.part.text, cutStart: window.continues ? window.part.cutStart : sampled.cutStart, cutEnd: last ? sampled.cutEnd : window.part.cutEnd },
        continues: window.continues,
      };
    }
  }
}

/** The windows read, in order: which text each belongs to and the window as sent (patterns read it NFKC-normalized, on demand). */
interface ReadWindows {
  indices: number[];
  texts: string[];
  collapsed: Array<string | undefined>;
}

const WHITESPACE_RUN = /\s+/gu;

/**
 * Which window each pattern first matches, computed on demand: most checks never need a
 * pattern, because the rules' category and roleplay conditions fail first.
 */
class PatternResults {
  /** -2: not run yet; -1: no window matches; otherwise the position of the first window matching. */
  private readonly results: Int32Array;

  constructor(
    private readonly patterns: readonly RegExp[],
    readonly windows: ReadWindows,
  ) {
    this.results = new Int32Array(patterns.length).fill(-2);
  }

  pattern(patternIndex: number): RegExp {
    return this.patterns[patternIndex];
  }

  *firstWindow(patternIndex: number): UsageRun<number> {
    if (this.results[patternIndex] === -2) {
      const pattern = this.patterns[patternIndex];
      let found = -1;
      let work = 0;
      const { texts, collapsed } = this.windows;
      for (let position = 0; position < texts.length; position++) {
        // Patterns see whitespace runs as one space, so "secret  project" across a line break matches "secret project".
        const text = (collapsed[position] ??= texts[position].normalize('NFKC').replace(WHITESPACE_RUN, ' '));
        if (pattern.test(text)) {
          found = position;
          break;
        }
        work += texts[position].length + TEXT_COST;
        if (work >= CHECK_WINDOW) {
          work = 0;
          yield;
        }
      }
      this.results[patternIndex] = found;
    }
    return this.results[patternIndex];
  }
}

function* ruleMatches(rule: CompiledRule, scores: Record<ModerationCategory, number>, patterns: PatternResults, roleplay: boolean): UsageRun<ModerationCategory[] | null> {
  if (!rule.rule.enabled) return null;
  if (rule.rule.roleplayOnly && !roleplay) return null;
  const reached = rule.categories.filter(({ category, threshold }) => scores[category] >= threshold).map(({ category }) => category);
  if (rule.categories.length > 0) {
    const enough = rule.rule.categoryMatch === 'all' ? reached.length === rule.categories.length : reached.length > 0;
    if (!enough) return null;
  }
  if (rule.patternIndices.length > 0) {
    // An `any` rule usually has one (joined) pattern; an `all` rule needs each of its own.
    const all = rule.rule.patternMatch === 'all';
    let enough = all;
    for (const pattern of rule.patternIndices) {
      const matches = (yield* patterns.firstWindow(pattern)) >= 0;
      if (matches !== all) {
        enough = matches;
        break;
      }
    }
    if (!enough) return null;
  }
  return reached;
}

const SEVERITY = { allow: 0, flag: 1, reject: 2 } as const;

/** What one text scored, and the window of it that showed it best (where its top score last rose). */
interface TextResult {
  scores: Record<ModerationCategory, number>;
  window: string;
}

/** Reads texts window by window: classifier scores per text, roleplay cues and the windows for patterns. */
class TextReader {
  readonly results = new Map<number, TextResult>();
  readonly roleplayPieces: RoleplayEvidence[] = [];
  readonly windows: ReadWindows = { indices: [], texts: [], collapsed: [] };
  private readonly scanner = new TextScanner();
  private top = 0;

  start(): void {
    this.scanner.reset();
    this.top = 0;
  }

  window(index: number, part: ScanPart, continues: boolean): void {
    this.scanner.scan(part, continues);
    const cues = detectRoleplayCues(part.text.normalize('NFKC'));
    if (cues.cues.length > 0) this.roleplayPieces.push(cues);
    this.windows.indices.push(index);
    this.windows.texts.push(part.text);
    // Scores are only worked out for a text where something matched (most texts match nothing).
    if (this.scanner.matched()) {
      const scores = this.scanner.verdict().category_scores;
      const best = Math.max(...Object.values(scores));
      const previous = this.results.get(index);
      this.results.set(index, { scores, window: previous === undefined || best > this.top ? part.text : previous.window });
      this.top = Math.max(this.top, best);
    }
  }

  /** Raises the conversation's scores to the text's. */
  finish(index: number, scores: Record<ModerationCategory, number>): void {
    const result = this.results.get(index);
    if (result === undefined) return;
    for (const category of MODERATION_CATEGORIES) if (result.scores[category] > scores[category]) scores[category] = result.scores[category];
  }
}

/** Runs the check on `input` (see `usage-rules.ts`); drive it with `checkUsage` or `checkUsageInWindows`. */
export function* runUsageCheck(input: UsageCheckInput, compiled: CompiledUsageRules): UsageRun<UsageCheckDecision> {
  const shares = sharesOf(input.texts, compiled.scanBudget);
  const scores = Object.fromEntries(MODERATION_CATEGORIES.map((category) => [category, 0])) as Record<ModerationCategory, number>;
  const reader = new TextReader();
  let work = 0;
  for (let index = 0; index < input.texts.length; index++) {
    const text = input.texts[index].text;
    if (shares[index] === 0 || text.length === 0) continue;
    reader.start();
    if (shares[index] >= text.length && text.length <= CHECK_WINDOW) {
      // The common case: one window, the whole text.
      reader.window(index, { text, cutStart: false, cutEnd: false }, false);
      work += text.length + TEXT_COST;
    } else {
      for (const { part, continues } of windowsOf(text, shares[index])) {
        reader.window(index, part, continues);
        work += part.text.length + TEXT_COST;
        if (work >= CHECK_WINDOW) {
          work = 0;
          yield;
        }
      }
    }
    reader.finish(index, scores);
    if (work >= CHECK_WINDOW) {
      work = 0;
      yield;
    }
  }
  const { results, roleplayPieces, windows } = reader;

  const roleplay = combineRoleplayEvidence(roleplayPieces).roleplay;
  // Patterns run only for rules whose other conditions already hold, and each at most once.
  const patterns = new PatternResults(compiled.patterns, windows);
  let action: UsageCheckDecision['action'] = 'allow';
  let deciding: { rule: CompiledRule; reached: ModerationCategory[] } | null = null;
  const matchedRuleIds: string[] = [];
  for (const rule of compiled.rules) {
    const reached = yield* ruleMatches(rule, scores, patterns, roleplay);
    if (reached === null) continue;
    matchedRuleIds.push(rule.rule.id);
    if (SEVERITY[rule.rule.action] > SEVERITY[action]) {
      action = rule.rule.action;
      deciding = { rule, reached };
    }
  }

  const listed = new Set<ModerationCategory>(deciding?.reached ?? []);
  for (const category of MODERATION_CATEGORIES) if (scores[category] >= compiled.thresholds[category]) listed.add(category);
  const evidence = deciding === null ? null : yield* evidenceOf(deciding.rule, deciding.reached, results, patterns);
  return {
    action,
    ruleId: deciding?.rule.rule.id ?? null,
    matchedRuleIds,
    categories: MODERATION_CATEGORIES.filter((category) => listed.has(category)),
    scores,
    roleplay,
    evidenceIndex: evidence?.index ?? null,
    evidenceWindow: evidence?.window ?? null,
  };
}

/** A window longer than this is narrowed to the sentence where it shows why the rule matched. */
const EVIDENCE_PIECE = 256;

/**
 * From the start of the piece of `window` (pieces of {@link EVIDENCE_PIECE} code units cut at
 * sentence ends) that scores highest in `categories`, or else first matches `pattern`: the
 * review excerpt then starts where the rule matched, not at the start of a 64 Ki window.
 */
function narrowed(window: string, categories: readonly ModerationCategory[], pattern: RegExp | undefined): string {
  if (window.length <= EVIDENCE_PIECE * 2) return window;
  let bestStart = 0;
  let bestScore = 0;
  for (const { part, start } of scanWindows(window, EVIDENCE_PIECE)) {
    if (categories.length > 0) {
      const scores = classifyText(part.text, { scanBudget: part.text.length }).category_scores;
      for (const category of categories) {
        if (scores[category] > bestScore) {
          bestScore = scores[category];
          bestStart = start;
        }
      }
    } else if (pattern !== undefined && pattern.test(part.text.normalize('NFKC').replace(WHITESPACE_RUN, ' '))) {
      return window.slice(start);
    }
  }
  return window.slice(bestStart);
}

/** The text (and the part of it) that best shows why `rule` matched: highest score in its categories, else its first pattern match. */
function* evidenceOf(
  rule: CompiledRule,
  reached: ModerationCategory[],
  results: ReadonlyMap<number, TextResult>,
  patterns: PatternResults,
): UsageRun<{ index: number; window: string } | null> {
  let best: { index: number; window: string } | null = null;
  let bestScore = 0;
  // Results are in text order: on a tie the earlier text wins.
  for (const [index, result] of results) {
    for (const category of reached) {
      if (result.scores[category] > bestScore) {
        bestScore = result.scores[category];
        best = { index, window: result.window };
      }
    }
  }
  if (best !== null) return { index: best.index, window: narrowed(best.window, reached, undefined) };
  for (const pattern of rule.patternIndices) {
    const position = yield* patterns.firstWindow(pattern);
    if (position >= 0) return { index: patterns.windows.indices[position], window: narrowed(patterns.windows.texts[position], [], patterns.pattern(pattern)) };
  }
  return null;
}

const compiledCache = new WeakMap<object, CompiledUsageRules>();

function compiledFrom(rules: UsageRulesInput | UsageRules | CompiledUsageRules): CompiledUsageRules {
  if ('compiled' in rules && rules.compiled === true) return rules as CompiledUsageRules;
  let compiled = compiledCache.get(rules);
  if (compiled === undefined) {
    compiled = compileUsageRules(rules as UsageRulesInput);
    compiledCache.set(rules, compiled);
  }
  return compiled;
}

/**
 * Runs the restricted family's usage check on everything the model will see (see the module
 * comment) in one go. Pass rules compiled once with {@link compileUsageRules}; plain rules are
 * compiled on first use and cached per object.
 */
export function checkUsage(input: UsageCheckInput, rules: UsageRulesInput | UsageRules | CompiledUsageRules): UsageCheckDecision {
  const run: UsageRun<UsageCheckDecision> = runUsageCheck(input, compiledFrom(rules));
  let step = run.next();
  while (step.done !== true) step = run.next();
  return step.value;
}

/**
 * {@link checkUsage}, giving the event loop back after each window of work (64 Ki code units),
 * so that other requests are served while a long request is read. A short prompt never waits.
 */
export async function checkUsageInWindows(input: UsageCheckInput, rules: UsageRulesInput | UsageRules | CompiledUsageRules): Promise<UsageCheckDecision> {
  const run = runUsageCheck(input, compiledFrom(rules));
  let step = run.next();
  while (step.done !== true) {
    await nextTurn();
    step = run.next();
  }
  return step.value;
}
