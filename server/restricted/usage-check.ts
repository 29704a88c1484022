/**
 * The usage check of the restricted family, run by the generation pipeline after the request is
 * decoded and before anything is held or sent upstream (so a stream is decided before its first
 * byte). Other models pay one map lookup. A flag is served and recorded for staff review; a
 * reject is recorded and answered `403 USAGE_CHECK_REJECTED`, with nothing held or charged.
 *
 * Of the prompt only the review excerpt (at most 400 characters) is kept, in the review row;
 * log lines carry the decision, the rule and the categories, never prompt text.
 */
import { insertUsageReview } from '../../db/queries/usage-reviews.queries.js';
import { newId } from '../auth/api-keys.js';
import type { CatalogModel } from '../catalog/catalog.js';
import type { Endpoint } from '../catalog/catalog.schema.js';
import { GatewayError } from '../errors.js';
import { excerptOf } from '../moderation/excerpt.js';
import { checkUsage, type UsageCheckDecision, type UsageCheckInput } from '../moderation/usage-rules.js';
import type { CanonicalRequest } from '../providers/canonical.js';
import type { OperationContext } from '../generation/routing.js';
import { collectUsageTexts } from './usage-texts.js';
import type { RestrictedFamily } from './families.js';

/** The text a reviewer sees: the one the rule matched in, else the newest user turn, else the first text. */
function evidenceText(input: UsageCheckInput, decision: UsageCheckDecision): string {
  if (decision.evidenceIndex !== null) return input.texts[decision.evidenceIndex]?.text ?? '';
  for (let index = input.texts.length - 1; index >= 0; index--) if (input.texts[index]!.role === 'user') return input.texts[index]!.text;
  return input.texts[0]?.text ?? '';
}

async function recordForReview(
  context: OperationContext,
  family: RestrictedFamily,
  model: CatalogModel,
  endpoint: Endpoint,
  decision: UsageCheckDecision & { action: 'flag' | 'reject' },
  excerpt: string,
): Promise<void> {
  await insertUsageReview(context.services.db, {
    id: newId('rev'),
    account_id: context.auth.account.id,
    key_id: context.auth.key.id,
    model: model.id,
    family: family.name,
    endpoint,
    request_id: context.requestId,
    client_address: context.clientAddress ?? null,
    decision: decision.action,
    rule_id: decision.ruleId,
    matched_rules: JSON.stringify(decision.matchedRuleIds),
    categories: JSON.stringify(decision.categories),
    scores: JSON.stringify(decision.scores),
    roleplay: decision.roleplay,
    excerpt,
  });
}

/**
 * Runs the usage check of the model's restricted family, if any, on every text of `request`.
 * @throws GatewayError `USAGE_CHECK_REJECTED` when the policy rejects the request.
 */
export async function checkRestrictedUsage(context: OperationContext, model: CatalogModel, endpoint: Endpoint, request: CanonicalRequest): Promise<void> {
  const family = context.services.restricted.familyOf(model);
  if (family === undefined || family.usageRules === null) return;
  const input = collectUsageTexts(request);
  const decision = checkUsage(input, family.usageRules);
  if (decision.action === 'allow') return;
  const fields = {
    requestId: context.requestId,
    accountId: context.auth.account.id,
    model: model.id,
    family: family.name,
    decision: decision.action,
    rule: decision.ruleId,
    categories: decision.categories.join(','),
  };
  try {
    await recordForReview(context, family, model, endpoint, decision as UsageCheckDecision & { action: 'flag' | 'reject' }, excerptOf(evidenceText(input, decision)));
  } catch (error) {
    // A flag is still served and a reject still refused; the operator learns the record is missing.
    context.services.log.error('restricted.review_record_failed', { ...fields, message: (error as Error).message });
  }
  context.services.log.info('restricted.usage_check', fields);
  if (decision.action === 'reject') {
    throw new GatewayError('USAGE_CHECK_REJECTED', `This request was rejected by the usage policy of the '${family.name}' model family (rule ${decision.ruleId}).`, { param: null });
  }
}
