/**
 * Usage checks of the restricted model family (SPEC "What the service does": usage checks,
 * roleplay restrictions; GAPS: 403 `USAGE_CHECK_REJECTED`). Given every text the model will see
 * (system prompt, instructions, all turns, tool results) and the operator's rules, decide:
 * `allow`, `flag` (serve, and record the request for staff review) or `reject`.
 *
 * How a check runs:
 * 1. Texts are read within one shared budget (`scanBudget` code units, default 128 Ki): system
 *    and developer texts first, then the other turns from newest to oldest, at most one text per
 *    {@link MIN_SHARE} code units of budget; the budget is shared out fairly (a short text is
 *    read whole, long ones split the rest evenly and are sampled as in `scan-text.ts`). Content
 *    in a system prompt or an earlier turn is therefore seen, not only the last message.
 * 2. Each text is classified (`classifier.ts`); the conversation's score per category is the
 *    highest over its texts.
 * 3. Rule patterns run on each text (NFKC-normalized, whitespace collapsed, flags `i`); a
 *    pattern counts for the conversation when it matches any text.
 * 4. Roleplay cues are gathered over all texts (`roleplay-detector.ts`).
 * 5. A rule matches when all its conditions hold: its categories (any, or all with
 *    `categoryMatch: 'all'`) reach its threshold, its patterns (any, or all) matched, and, with
 *    `roleplayOnly`, the conversation is a roleplay. The most severe matching action wins
 *    (`reject` > `flag` > `allow`); among rules with that action the first listed is reported.
 *
 * Rules are operator configuration (to be placed in the catalog file). Patterns are checked when
 * compiled: they must compile with flags `i`, may not use backreferences, and must pass
 * safe-regex2's star-height check (no nested quantifiers), so that an operator's typo cannot
 * make one request backtrack for seconds; each pattern also only ever sees the bounded sample.
 */
import safeRegex from 'safe-regex2';
import { z } from 'zod';
import { MODERATION_CATEGORIES, MODERATION_THRESHOLDS, classifyText, type ModerationCategory } from './classifier.js';
import { combineRoleplayEvidence, detectRoleplayCues, type RoleplayEvidence } from './roleplay-detector.js';
import { sampleForScan } from './scan-text.js';

/** Default total code units read per check. */
export const USAGE_SCAN_BUDGET = 128 * 1024;

/** Each text read costs at least this much budget, which bounds how many texts one check reads. */
export const MIN_SHARE = 256;

/** Quantifiers allowed in one pattern (safe-regex2's `limit`). */
const PATTERN_REPETITION_LIMIT = 60;

const BACKREFERENCE = /\\(?:[1-9]|k<)/;

/** Why a rule pattern is refused, or null when it is acceptable. */
export function findPatternProblem(source: string): string | null {
  try {
    new RegExp(source, 'i');
  } catch (error) {
    return `does not compile with flags i: ${(error as Error).message}`;
  }
  if (BACKREFERENCE.test(source)) return 'uses a backreference';
  if (!safeRegex(source, { limit: PATTERN_REPETITION_LIMIT })) return 'may backtrack catastrophically (nested quantifiers or too many repetitions)';
  return null;
}

const patternSchema = z
  .string()
  .min(1)
  .max(1000)
  .superRefine((source, context) => {
    const problem = findPatternProblem(source);
    if (problem !== null) context.addIssue({ code: 'custom', message: `pattern ${JSON.stringify(source)} ${problem}` });
  });

const scoreSchema = z.number().min(0).max(1);

/** One usage rule (operator configuration). */
export const usageRuleSchema = z
  .strictObject({
    /** Stable id, reported in decisions and review records. */
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/),
    /** What the rule is for, shown to reviewers. */
    description: z.string().min(1).max(500),
    action: z.enum(['flag', 'reject']),
    /** Moderation categories the rule looks at. */
    categories: z.array(z.enum(MODERATION_CATEGORIES)).min(1).optional(),
    /** Score a category must reach; default: the global threshold of each category. */
    threshold: scoreSchema.optional(),
    /** Whether any listed category suffices or all must reach the threshold. */
    categoryMatch: z.enum(['any', 'all']).default('any'),
    /** Regular expression sources, compiled with flags `i`. */
    patterns: z.array(patternSchema).min(1).max(100).optional(),
    /** Whether any pattern suffices or all must match (each in any text). */
    patternMatch: z.enum(['any', 'all']).default('any'),
    /** Only when the conversation is a roleplay. */
    roleplayOnly: z.boolean().default(false),
    enabled: z.boolean().default(true),
  })
  .refine((rule) => rule.categories !== undefined || rule.patterns !== undefined, {
    message: 'a rule needs categories or patterns',
  });

/** The usage-check policy of the restricted family (operator configuration). */
export const usageRulesSchema = z
  .strictObject({
    /** Per-category thresholds: the default of rules without `threshold`, and what a decision lists as `categories`. */
    thresholds: z.partialRecord(z.enum(MODERATION_CATEGORIES), scoreSchema).default({}),
    /** Code units read per check, all texts together. */
    scanBudget: z.number().int().min(4096).max(4 * 1024 * 1024).default(USAGE_SCAN_BUDGET),
    rules: z.array(usageRuleSchema).max(200),
  })
  .refine((rules) => new Set(rules.rules.map((rule) => rule.id)).size === rules.rules.length, { message: 'rule ids must be unique' });

/** Usage rules after parsing (defaults applied). */
export type UsageRules = z.infer<typeof usageRulesSchema>;
/** Usage rules as written by an operator (defaults optional). */
export type UsageRulesInput = z.input<typeof usageRulesSchema>;
/** One parsed usage rule. */
export type UsageRule = z.infer<typeof usageRuleSchema>;

/** Who a text comes from, as the caller extracted it. */
export type UsageTextRole = 'system' | 'user' | 'assistant' | 'tool' | 'developer';

/** Everything the model will see, one entry per text (system prompt, instructions, each turn's text, tool results). */
export interface UsageCheckInput {
  texts: Array<{ role: UsageTextRole; text: string }>;
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
}

interface CompiledRule {
  rule: UsageRule;
  categories: Array<{ category: ModerationCategory; threshold: number }>;
  patterns: RegExp[];
  /** Offset of this rule's patterns in the flat list of all patterns. */
  patternOffset: number;
}

/** Rules prepared for repeated checks: parsed, thresholds resolved, patterns compiled. */
export interface CompiledUsageRules {
  readonly compiled: true;
  readonly thresholds: Readonly<Record<ModerationCategory, number>>;
  readonly scanBudget: number;
  readonly rules: readonly CompiledRule[];
  readonly patterns: readonly RegExp[];
}

/**
 * Parses (with {@link usageRulesSchema}) and compiles rules once for many checks.
 * @throws ZodError when the configuration is invalid, including unsafe patterns.
 */
export function compileUsageRules(input: UsageRulesInput | UsageRules): CompiledUsageRules {
  const parsed = usageRulesSchema.parse(input);
  const thresholds = { ...MODERATION_THRESHOLDS, ...parsed.thresholds } as Record<ModerationCategory, number>;
  const patterns: RegExp[] = [];
  const rules = parsed.rules.map((rule): CompiledRule => {
    const patternOffset = patterns.length;
    const own = (rule.patterns ?? []).map((source) => new RegExp(source, 'i'));
    patterns.push(...own);
    return {
      rule,
      categories: (rule.categories ?? []).map((category) => ({ category, threshold: rule.threshold ?? thresholds[category] })),
      patterns: own,
      patternOffset,
    };
  });
  return { compiled: true, thresholds, scanBudget: parsed.scanBudget, rules, patterns };
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
 * How many code units of each text to read: texts in priority order (system and developer
 * first, then the rest newest first), at most `budget / MIN_SHARE` of them, the budget shared
 * fairly (short texts whole, the long ones an equal share of what is left). 0 = not read.
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

const WHITESPACE_RUN = /\s+/gu;


/**
 * Which text each pattern first matches, computed on demand: most checks never need a pattern,
 * because the rules' category and roleplay conditions fail first.
 */
class PatternResults {
  /** -2: not run yet; -1: no text matches; otherwise the index of the first text matching. */
  private readonly results: Int32Array;

  constructor(
    private readonly patterns: readonly RegExp[],
    private readonly sampled: ReadonlyArray<{ index: number; parts: string[] }>,
  ) {
    this.results = new Int32Array(patterns.length).fill(-2);
  }

  private collapsed: Array<{ index: number; parts: string[] }> | null = null;

  firstText(patternIndex: number): number {
    if (this.results[patternIndex] === -2) {
      // Patterns see whitespace runs as one space, so "secret  project" across a line break matches "secret project".
      this.collapsed ??= this.sampled.map(({ index, parts }) => ({ index, parts: parts.map((part) => part.replace(WHITESPACE_RUN, ' ')) }));
      const pattern = this.patterns[patternIndex];
      const hit = this.collapsed.find(({ parts }) => parts.some((part) => pattern.test(part)));
      this.results[patternIndex] = hit === undefined ? -1 : hit.index;
    }
    return this.results[patternIndex];
  }

  matches(patternIndex: number): boolean {
    return this.firstText(patternIndex) >= 0;
  }
}

function ruleMatches(rule: CompiledRule, scores: Record<ModerationCategory, number>, patterns: PatternResults, roleplay: boolean): ModerationCategory[] | null {
  if (!rule.rule.enabled) return null;
  if (rule.rule.roleplayOnly && !roleplay) return null;
  const reached = rule.categories.filter(({ category, threshold }) => scores[category] >= threshold).map(({ category }) => category);
  if (rule.categories.length > 0) {
    const enough = rule.rule.categoryMatch === 'all' ? reached.length === rule.categories.length : reached.length > 0;
    if (!enough) return null;
  }
  if (rule.patterns.length > 0) {
    const matches = (index: number): boolean => patterns.matches(rule.patternOffset + index);
    const indices = rule.patterns.map((_, index) => index);
    const enough = rule.rule.patternMatch === 'all' ? indices.every(matches) : indices.some(matches);
    if (!enough) return null;
  }
  return reached;
}

const SEVERITY = { allow: 0, flag: 1, reject: 2 } as const;

/**
 * Runs the restricted family's usage check on everything the model will see (see the module
 * comment). Pass rules compiled once with {@link compileUsageRules}; plain rules are compiled
 * on first use and cached per object.
 */
export function checkUsage(input: UsageCheckInput, rules: UsageRulesInput | UsageRules | CompiledUsageRules): UsageCheckDecision {
  const compiled = compiledFrom(rules);
  const shares = allocateScanShares(input.texts, compiled.scanBudget);
  const scores = Object.fromEntries(MODERATION_CATEGORIES.map((category) => [category, 0])) as Record<ModerationCategory, number>;
  const textScores: Array<Record<ModerationCategory, number> | null> = input.texts.map(() => null);
  const roleplayPieces: RoleplayEvidence[] = [];
  const sampled: Array<{ index: number; parts: string[] }> = [];

  input.texts.forEach(({ text }, index) => {
    const share = shares[index];
    if (share === 0 || text.length === 0) return;
    const verdict = classifyText(text, { scanBudget: share });
    textScores[index] = verdict.category_scores;
    for (const category of MODERATION_CATEGORIES) {
      if (verdict.category_scores[category] > scores[category]) scores[category] = verdict.category_scores[category];
    }
    const parts: string[] = [];
    for (const part of sampleForScan(text, share)) {
      const normalized = part.text.normalize('NFKC');
      roleplayPieces.push(detectRoleplayCues(normalized));
      parts.push(normalized);
    }
    sampled.push({ index, parts });
  });

  const roleplay = combineRoleplayEvidence(roleplayPieces).roleplay;
  // Patterns run only for rules whose other conditions already hold, and each at most once.
  const patterns = new PatternResults(compiled.patterns, sampled);
  let action: UsageCheckDecision['action'] = 'allow';
  let deciding: { rule: CompiledRule; reached: ModerationCategory[] } | null = null;
  const matchedRuleIds: string[] = [];
  for (const rule of compiled.rules) {
    const reached = ruleMatches(rule, scores, patterns, roleplay);
    if (reached === null) continue;
    matchedRuleIds.push(rule.rule.id);
    if (SEVERITY[rule.rule.action] > SEVERITY[action]) {
      action = rule.rule.action;
      deciding = { rule, reached };
    }
  }

  const listed = new Set<ModerationCategory>(deciding?.reached ?? []);
  for (const category of MODERATION_CATEGORIES) if (scores[category] >= compiled.thresholds[category]) listed.add(category);
  return {
    action,
    ruleId: deciding?.rule.rule.id ?? null,
    matchedRuleIds,
    categories: MODERATION_CATEGORIES.filter((category) => listed.has(category)),
    scores,
    roleplay,
    evidenceIndex: deciding === null ? null : evidenceIndexOf(deciding.rule, deciding.reached, textScores, patterns),
  };
}

function evidenceIndexOf(
  rule: CompiledRule,
  reached: ModerationCategory[],
  textScores: Array<Record<ModerationCategory, number> | null>,
  patterns: PatternResults,
): number | null {
  let best: number | null = null;
  let bestScore = 0;
  textScores.forEach((scores, index) => {
    if (scores === null) return;
    for (const category of reached) {
      if (scores[category] > bestScore) {
        bestScore = scores[category];
        best = index;
      }
    }
  });
  if (best !== null) return best;
  for (let index = 0; index < rule.patterns.length; index++) {
    const text = patterns.firstText(rule.patternOffset + index);
    if (text >= 0) return text;
  }
  return null;
}

// ------------------------------------------------------------------------------------------
// Default policy.

/** References to a person under 18: ages 1–17, school years, and words for children. */
const MINOR_REFERENCE_PATTERNS = [
  String.raw`\b(?:[1-9]|1[0-7]) ?-?(?:years?|yrs?|yr) ?-?old\b`,
  String.raw`\b(?:[1-9]|1[0-7]) ?(?:yo|y/o|y\.o\.)(?![a-z])`,
  String.raw`\b(?:aged?|age of) (?:[1-9]|1[0-7])\b`,
  String.raw`\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen)[ -]years?[ -]old\b`,
  String.raw`\b(?:under ?age(?:d)?|under 18|minors?|pre-?teens?|prepubescent|child|children|kids?|toddlers?|loli(?:con)?|shota(?:con)?|jailbait|teen(?:age|ager|agers|s)?)\b`,
  String.raw`\b(?:little|young|school) ?(?:girls?|boys?)\b`,
  String.raw`\b(?:elementary|middle|junior high|primary|grade) ?school(?:er|ers)?\b`,
  String.raw`\b(?:[1-8]th|first|second|third|fourth|fifth|sixth|seventh|eighth) grader?s?\b`,
];

/** References to a real, identifiable person rather than a fictional character. */
const REAL_PERSON_PATTERNS = [
  String.raw`\b(?:real|actual|existing|living|famous|well-known) (?:person|people|celebrit(?:y|ies)|individual|human|man|woman|singer|actor|actress|politician|streamer|youtuber|influencer)\b`,
  String.raw`\b(?:celebrit(?:y|ies)|actress|pop ?star|singer|rapper|politician|president|prime minister|senator|congress(?:wo)?man|influencer|streamer|youtuber|tiktoker|news anchor|athlete|footballer)\b`,
  String.raw`\bmy (?:real )?(?:co-?worker|colleague|boss|teacher|professor|classmate|neighbou?r|ex|ex-?(?:girlfriend|boyfriend|wife|husband)|landlord|manager|roommate|sister-in-law|brother-in-law)\b`,
];

/** Sexual acts without consent. */
const NON_CONSENT_PATTERNS = [
  String.raw`\b(?:rape[sd]?|raping|non-?con(?:sensual)?|dub-?con|molest(?:s|ed|ing)?|sexual(?:ly)? assault(?:s|ed|ing)?)\b`,
  String.raw`\b(?:against (?:her|his|their|my|your) will|without (?:her|his|their|my|your) consent)\b`,
  String.raw`\b(?:force[sd]? (?:her|him|them|me|you)(?:self|selves)? (?:to|into|down)|drugg?ed (?:her|him|them|me|you))\b`,
  String.raw`\bwhile (?:she|he|they|i|you) (?:was|were|is|are|am) (?:asleep|unconscious|passed out|too drunk)\b`,
];

/** Romantic framing, used to flag roleplay that pairs a minor with romance for review. */
const ROMANCE_PATTERNS = [
  String.raw`\b(?:kiss(?:es|ed|ing)?|make out|making out|romantic|romance|dating|date me|girlfriend|boyfriend|cuddl(?:e|es|ed|ing)|in love|seduc(?:e|es|ed|ing|tive)|flirt(?:s|ed|ing|y)?|lovers?|in bed)\b`,
];

/**
 * The default usage policy of the restricted family. Rejections are kept to what no context
 * excuses; the rest is flagged for staff review, so a false alarm costs a reviewer's minute, not
 * a customer's request. Tuned so that ordinary coding and assistant prompts (including system
 * prompts that forbid these contents) come out `allow`; see usage-rules.test.ts.
 */
export const DEFAULT_USAGE_RULES: UsageRulesInput = {
  thresholds: {},
  rules: [
    {
      id: 'sexual-minors',
      description: 'Sexual content involving minors (classifier category sexual/minors).',
      action: 'reject',
      categories: ['sexual/minors'],
      threshold: 0.4,
    },
    {
      id: 'roleplay-sexualised-minor',
      description: 'Roleplay with sexual content where a character is described as under 18 (age, school year, or a word for a child), anywhere in the conversation.',
      action: 'reject',
      roleplayOnly: true,
      categories: ['sexual'],
      threshold: 0.35,
      patterns: MINOR_REFERENCE_PATTERNS,
    },
    {
      id: 'roleplay-real-person-non-consensual',
      description: 'Roleplay depicting a real, identifiable person in a non-consensual sexual scenario.',
      action: 'reject',
      roleplayOnly: true,
      categories: ['sexual', 'violence'],
      threshold: 0.3,
      patterns: [REAL_PERSON_PATTERNS.join('|'), NON_CONSENT_PATTERNS.join('|')],
      patternMatch: 'all',
    },
    {
      id: 'roleplay-real-person-sexual-or-harassing',
      description: 'Roleplay of a real, identifiable person in sexual or harassing content.',
      action: 'flag',
      roleplayOnly: true,
      categories: ['sexual', 'harassment'],
      threshold: 0.5,
      patterns: REAL_PERSON_PATTERNS,
    },
    {
      id: 'roleplay-minor-romance',
      description: 'Roleplay pairing a character described as under 18 with romance; not sexual yet, so reviewed rather than refused.',
      action: 'flag',
      roleplayOnly: true,
      patterns: [MINOR_REFERENCE_PATTERNS.join('|'), ROMANCE_PATTERNS.join('|')],
      patternMatch: 'all',
    },
    {
      id: 'self-harm',
      description: 'Self-harm intent or instructions.',
      action: 'flag',
      categories: ['self-harm/intent', 'self-harm/instructions'],
      threshold: 0.5,
    },
    {
      id: 'graphic-violence',
      description: 'Graphic violence above the review threshold.',
      action: 'flag',
      categories: ['violence/graphic'],
      threshold: 0.6,
    },
    {
      id: 'threats-and-hate',
      description: 'Explicit threats against people or groups, or hateful content.',
      action: 'flag',
      categories: ['hate/threatening', 'harassment/threatening', 'hate'],
      threshold: 0.7,
    },
  ],
};
