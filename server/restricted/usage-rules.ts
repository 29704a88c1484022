/**
 * Usage checks of the restricted model family (SPEC "What the service does": usage checks,
 * roleplay restrictions; GAPS: 403 `USAGE_CHECK_REJECTED`). Given every text the model will see
 * (system prompt, instructions, all turns, tool definitions and results) and the operator's
 * rules, decide: `allow`, `flag` (serve, and record the request for staff review) or `reject`.
 *
 * How a check runs (`usage-run.ts`):
 * 1. The request's own texts are read whole, however many and however long (the body limit
 *    bounds them), in windows of 64 Ki code units cut at sentence breaks; the caller's driver
 *    may yield to the event loop between windows ({@link checkUsageInWindows}). Texts of the
 *    conversation behind `previous_response_id` (marked `source: 'history'`), which no body
 *    limit bounds, are read within `scanBudget` code units: whole when they fit; otherwise
 *    system and developer texts first, then the other turns newest first, at most one text per
 *    {@link MIN_SHARE} code units, the budget shared fairly (short texts whole, long ones
 *    sampled as in `scan-text.ts`).
 * 2. Each text is classified (`classifier.ts`, window after window with one scan state, so a
 *    long text scores as one text); the conversation's score per category is the highest over
 *    its texts.
 * 3. Rule patterns run on each window (NFKC-normalized, whitespace collapsed, flags `i`); a
 *    pattern counts for the conversation when it matches any window.
 * 4. Roleplay cues are gathered over all windows (`roleplay-detector.ts`).
 * 5. A rule matches when all its conditions hold: its categories (any, or all with
 *    `categoryMatch: 'all'`) reach its threshold, its patterns (any, or all) matched, and, with
 *    `roleplayOnly`, the conversation is a roleplay. The most severe matching action wins
 *    (`reject` > `flag` > `allow`); among rules with that action the first listed is reported.
 *
 * Rules are operator configuration (in the catalog file). Patterns are checked when compiled:
 * they must compile with flags `i`, may not use backreferences, and must pass safe-regex2's
 * star-height check (no nested quantifiers), so that an operator's typo cannot make one
 * request backtrack for seconds; each pattern also only ever sees one window at a time.
 */
import { MODERATION_THRESHOLDS, type ModerationCategory } from '../classifier/classifier.js';
import { usageRulesSchema, type UsageRule, type UsageRules, type UsageRulesInput } from '../catalog/usage-rules.schema.js';
/** Who a text comes from, as the caller extracted it. */
export type UsageTextRole = 'system' | 'user' | 'assistant' | 'tool' | 'developer';

/** One text the model will see. */
export interface UsageText {
  role: UsageTextRole;
  text: string;
  /** `history`: from the stored conversation behind `previous_response_id`, read within `scanBudget`; default `request` (read whole). */
  source?: 'request' | 'history';
}

/** Everything the model will see, one entry per text (system prompt, instructions, each turn, tool definitions and results). */
export interface UsageCheckInput {
  texts: UsageText[];
}

/** The outcome of {@link checkUsage}. */
export interface UsageCheckDecision {
  action: 'allow' | 'flag' | 'reject';
  /** The rule that decided (the first listed among those with the winning action); null on allow. */
  ruleId: string | null;
  /** Every matching rule, in rule order (a flag rule can match next to the deciding reject rule). */
  matchedRuleIds: string[];
  /**
   * Categories at or above their global threshold, plus those by which the deciding rule
   * matched, in SPEC order.
   */
  categories: string[];
  /** The conversation's score per moderation category (highest over its texts). */
  scores: Record<string, number>;
  roleplay: boolean;
  /**
   * Index in `input.texts` of the text that best shows why the rule matched (highest score in
   * its categories, else the first text matching one of its patterns); the text to excerpt for
   * review. Null on allow, or when no single text stands out.
   */
  evidenceIndex: number | null;
  /**
   * Where that text shows it: the text itself when short; else from the sentence (within the
   * 64 Ki window read) that scores highest or matches the pattern, to the end of that window.
   */
  evidenceWindow: string | null;
}

/** One rule, compiled. */
export interface CompiledRule {
  rule: UsageRule;
  categories: Array<{ category: ModerationCategory; threshold: number }>;
  /**
   * Indices in the flat list of patterns of what must match: with `patternMatch: 'any'` one
   * pattern, the rule's patterns joined as alternatives (one pass over the text instead of one
   * per pattern); with `all`, each pattern. Empty when the rule has no patterns.
   */
  patternIndices: number[];
}

/** Rules prepared for repeated checks: parsed, thresholds resolved, patterns compiled. */
export interface CompiledUsageRules {
  readonly compiled: true;
  readonly thresholds: Readonly<Record<ModerationCategory, number>>;
  readonly scanBudget: number;
  readonly rules: readonly CompiledRule[];
  /** Every pattern once (rules sharing a source share its result). */
  readonly patterns: readonly RegExp[];
}

/** Compiles each distinct source once. */
class PatternList {
  readonly patterns: RegExp[] = [];
  private readonly indices = new Map<string, number>();

  indexOf(source: string): number {
    let index = this.indices.get(source);
    if (index === undefined) {
      index = this.patterns.length;
      this.patterns.push(new RegExp(source, 'i'));
      this.indices.set(source, index);
    }
    return index;
  }

  /** Indices of what must match for a rule (see {@link CompiledRule.patternIndices}). */
  forRule(sources: readonly string[], match: 'any' | 'all'): number[] {
    if (sources.length === 0) return [];
    if (match === 'all' || sources.length === 1) return sources.map((source) => this.indexOf(source));
    const union = sources.join('|');
    try {
      return [this.indexOf(union)];
    } catch {
      // Alternatives that cannot share one expression (a capture group name used twice): one pass each.
      return sources.map((source) => this.indexOf(source));
    }
  }
}

/**
 * Parses (with {@link usageRulesSchema}) and compiles rules once for many checks.
 * @throws ZodError when the configuration is invalid, including unsafe patterns.
 */
export function compileUsageRules(input: UsageRulesInput | UsageRules): CompiledUsageRules {
  const parsed = usageRulesSchema.parse(input);
  const thresholds = { ...MODERATION_THRESHOLDS, ...parsed.thresholds } as Record<ModerationCategory, number>;
  const patterns = new PatternList();
  const rules = parsed.rules.map((rule): CompiledRule => ({
    rule,
    categories: (rule.categories ?? []).map((category) => ({ category, threshold: rule.threshold ?? thresholds[category] })),
    patternIndices: patterns.forRule(rule.patterns ?? [], rule.patternMatch),
  }));
  return { compiled: true, thresholds, scanBudget: parsed.scanBudget, rules, patterns: patterns.patterns };
}
