/**
 * `POST /v1/moderations` (SPEC): `text-moderation-latest` when no model is
 * named (resolved through the catalog like any other), one result per input.
 * One usage row per request; the charge is the model's input-token price,
 * nothing for the demo models (priced 0).
 */
import { jsonAnswer, type JsonAnswer } from '../answers.js';
import { Meter } from '../generation/metering.js';
import { resolveModel, routeDeployments, type OperationContext } from '../generation/routing.js';
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

export async function createModeration(context: OperationContext, body: ModerationRequest): Promise<JsonAnswer<ModerationResult>> {
  const { services, auth } = context;
  const model = resolveModel(services, auth, body.model ?? DEFAULT_MODERATION_MODEL, '/v1/moderations');
  const inputs = listModerationInputs(body.input);
  const inputTokens = countModerationTokens(inputs.texts.flat());
  const meter = new Meter({ deps: services, auth, requestId: context.requestId, receivedAt: context.receivedAt, model, endpoint: '/v1/moderations', stream: false });
  await meter.hold({ inputTokens, outputTokens: 0 });
  try {
    const { answer, provider } = await routeDeployments(context, model, 'moderations', async ({ deployment, adapter, transport }) => ({
      answer: await adapter.moderate(transport, deployment.provider, {
        body: { ...body, model: deployment.upstreamModel },
        texts: inputs.texts,
        multimodal: inputs.multimodal,
        imageItems: inputs.imageItems,
      }),
      provider: deployment.provider.id,
    }));
    meter.settle({ usage: { inputTokens, outputTokens: 0 }, status: 200, errorCode: null, aborted: false, provider });
    const headers: Record<string, string> = {};
    if (answer.ignored && answer.ignored.length > 0) headers['x-gateway-dropped-params'] = answer.ignored.join(', ');
    return { ...jsonAnswer(answer.body, { headers, provider }), ...(answer.raw !== undefined ? { raw: answer.raw } : {}) };
  } catch (error) {
    throw meter.fail(error);
  }
}
