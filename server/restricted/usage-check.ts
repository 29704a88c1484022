/**
 * The usage check of the restricted family, run by the generation pipeline (and count_tokens)
 * after the request is validated and before anything is held or sent upstream (so a stream is
 * decided before its first byte). Other models pay one map lookup. Every text the model will
 * see is read (`usage-texts.ts`), in windows that give the event loop back (`usage-run.ts`). A
 * flag is served and recorded for staff review; a reject is recorded and answered
 * `403 USAGE_CHECK_REJECTED`, with nothing held or charged. Images, audio and files the check
 * cannot read are counted on the `restricted.usage_check` log line, whatever the decision.
 *
 * Of the prompt only the review excerpt (at most 400 characters) is kept, in the review row;
 * log lines carry the decision, the rule, the categories and the unread counts, never prompt text.
 */
import type { Kysely } from 'kysely';
import { insertUsageReview } from '../../db/queries/usage-reviews.queries.js';
import type { Database } from '../../db/schema.js';
import { newId } from '../auth/api-keys.js';
import type { AuthContext } from '../auth/authenticate.js';
import type { CatalogModel } from '../catalog/catalog.js';
import type { Endpoint } from '../endpoints.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import { excerptOf } from './excerpt.js';
import type { UsageCheckDecision, UsageCheckInput } from './usage-rules.js';
import { checkUsageInWindows } from './usage-run.js';
import type { CanonicalMessage } from '../providers/canonical.js';
import type { ChatFormat } from '../providers/types.js';
import { readUsageTexts, type UsageReading } from './usage-texts.js';
import type { RestrictedFamily } from './families.js';

/** What the check needs of the operation it guards (an operation's context has all of it). */
export interface UsageCheckContext {
  services: { db: Kysely<Database>; log: Logger };
  auth: AuthContext;
  requestId: string;
  /** Kept with a review record. */
  clientAddress?: string;
}

/** What the check reads: the client's body in its format, after the conversation behind `previous_response_id`. */
export interface UsageCheckRequest {
  format: ChatFormat;
  body: Record<string, unknown>;
  history?: readonly CanonicalMessage[];
}

/** The text a reviewer sees: where the rule matched, else the newest user turn, else the first text. */
function evidenceText(input: UsageCheckInput, decision: UsageCheckDecision): string {
  if (decision.evidenceWindow !== null) return decision.evidenceWindow;
  if (decision.evidenceIndex !== null) return input.texts[decision.evidenceIndex]?.text ?? '';
  for (let index = input.texts.length - 1; index >= 0; index--) if (input.texts[index]!.role === 'user') return input.texts[index]!.text;
  return input.texts[0]?.text ?? '';
}

async function recordForReview(
  context: UsageCheckContext,
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

/** `image:2,file:1`: what the check could not read, or undefined when it read everything. */
function describeUnread(reading: UsageReading): string | undefined {
  const parts = Object.entries(reading.unread).filter(([, count]) => count > 0).map(([kind, count]) => `${kind}:${count}`);
  return parts.length === 0 ? undefined : parts.join(',');
}

/**
 * Runs the usage check of the model's restricted family, if any, on every text of `request`.
 * On count_tokens nothing is generated: a flag is only logged (the generation that follows is
 * checked on its own), a reject is refused and recorded.
 * @throws GatewayError `USAGE_CHECK_REJECTED` when the policy rejects the request.
 */
export async function checkRestrictedUsage(context: UsageCheckContext, model: CatalogModel, endpoint: Endpoint, request: UsageCheckRequest): Promise<void> {
  // The family of the catalog version the request resolved its model in, whatever reload came since.
  const family = model.restrictedFamily;
  if (family === undefined || family.usageRules === null) return;
  const reading = readUsageTexts(request.format, request.body, request.history);
  const decision = await checkUsageInWindows(reading, family.usageRules);
  const unread = describeUnread(reading);
  const fields = {
    requestId: context.requestId,
    accountId: context.auth.account.id,
    model: model.id,
    family: family.name,
    decision: decision.action,
    rule: decision.ruleId ?? undefined,
    categories: decision.categories.join(','),
    unread,
  };
  if (decision.action === 'allow') {
    if (unread !== undefined) context.services.log.info('restricted.usage_check', fields);
    return;
  }
  if (decision.action === 'reject' || endpoint !== '/v1/messages/count_tokens') {
    try {
      await recordForReview(context, family, model, endpoint, decision as UsageCheckDecision & { action: 'flag' | 'reject' }, excerptOf(evidenceText(reading, decision)));
    } catch (error) {
      // A flag is still served and a reject still refused; the operator learns the record is missing.
      context.services.log.error('restricted.review_record_failed', { ...fields, message: (error as Error).message });
    }
  }
  context.services.log.info('restricted.usage_check', fields);
  if (decision.action === 'reject') {
    throw new GatewayError('USAGE_CHECK_REJECTED', `This request was rejected by the usage policy of the '${family.name}' model family (rule ${decision.ruleId}).`, { param: null });
  }
}
