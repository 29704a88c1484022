/**
 * `POST /v1/moderations` (SPEC): `text-moderation-latest` when no model is
 * named (resolved through the catalog like any other), one result per input.
 * One usage row per request; the charge is the model's input-token price,
 * nothing for the demo models (priced 0).
 */
import { jsonAnswer, type JsonAnswer } from '../answers.js';
import type { OperationContext } from '../operations/routing.js';
import { runOperation } from '../operations/run-operation.js';
import {
  DEFAULT_MODERATION_MODEL,
  listModerationInputs,
  type ModerationRequest,
  type ModerationResult,
} from '../providers/openai/openai-moderations.wire.js';
import { countTextTokens, estimateTokensFromBytes, TOKEN_COUNT_LIMITS } from '../tokenizer.js';

/**
 * Input tokens of the texts: exact o200k counts over the first
 * `exactRequestBytes` of them all, each later text counted as its UTF-8
 * length (an upper bound), so a 20 MB request costs no more than a large one.
 */
function countModerationTokens(texts: readonly string[]): number {
  let budget = TOKEN_COUNT_LIMITS.exactRequestBytes;
  let total = 0;
  for (const text of texts) {
    const bytes = Buffer.byteLength(text, 'utf8');
    total += budget > 0 ? countTextTokens(text) : estimateTokensFromBytes(bytes);
    budget -= bytes;
  }
  return total;
}

export function createModeration(context: OperationContext, body: ModerationRequest): Promise<JsonAnswer<ModerationResult>> {
  return runOperation(context, {
    endpoint: '/v1/moderations',
    operation: 'moderations',
    model: body.model ?? DEFAULT_MODERATION_MODEL,
    plan: () => {
      const inputs = listModerationInputs(body.input);
      const inputTokens = countModerationTokens(inputs.texts.flat());
      return {
        hold: { inputTokens, outputTokens: 0 },
        stream: false,
        call: async ({ deployment, adapter, transport }) => {
          const answer = await adapter.moderate(transport, deployment.provider, {
            body: { ...body, model: deployment.upstreamModel },
            texts: inputs.texts,
            multimodal: inputs.multimodal,
            imageItems: inputs.imageItems,
          });
          const headers: Record<string, string> = {};
          if (answer.ignored && answer.ignored.length > 0) headers['x-gateway-dropped-params'] = answer.ignored.join(', ');
          const provider = deployment.provider.id;
          return {
            answer: { ...jsonAnswer(answer.body, { headers, provider }), ...(answer.raw !== undefined ? { raw: answer.raw } : {}) },
            usage: { inputTokens, outputTokens: 0 },
          };
        },
      };
    },
  });
}
