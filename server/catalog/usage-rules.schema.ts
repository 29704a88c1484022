/**
 * The usage-check policy of a restricted model family as an operator writes it in the catalog
 * file (`families.<name>.usageChecks.rules`). How the rules are checked is
 * `server/restricted/usage-rules.ts`.
 *
 * Patterns are checked when parsed: they must compile with flags `i`, may not use
 * backreferences, and must pass safe-regex2's star-height check (no nested quantifiers), so
 * that an operator's typo cannot make one request backtrack for seconds.
 */
import safeRegex from 'safe-regex2';
import { z } from 'zod';
import { MODERATION_CATEGORIES } from '../classifier/moderation-categories.js';

/** Default code units read of the conversation behind `previous_response_id` (the default body limit). */
export const USAGE_SCAN_BUDGET = 20 * 1024 * 1024;

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
    /** Code units read of the conversation behind `previous_response_id`; the request itself is always read whole. */
    scanBudget: z.number().int().min(4096).max(256 * 1024 * 1024).default(USAGE_SCAN_BUDGET),
    rules: z.array(usageRuleSchema).max(200),
  })
  .refine((rules) => new Set(rules.rules.map((rule) => rule.id)).size === rules.rules.length, { message: 'rule ids must be unique' });

/** Usage rules after parsing (defaults applied). */
export type UsageRules = z.infer<typeof usageRulesSchema>;
/** Usage rules as written by an operator (defaults optional). */
export type UsageRulesInput = z.input<typeof usageRulesSchema>;
/** One parsed usage rule. */
export type UsageRule = z.infer<typeof usageRuleSchema>;
