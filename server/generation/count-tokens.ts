import { UpstreamError } from '../errors.js';
import type { CountTokensRequest, CountTokensResponse } from '../providers/anthropic/anthropic.wire.js';
import { estimateMessagesTokens } from '../providers/local-count.js';
import { checkRestrictedUsage } from '../restricted/usage-check.js';
import { resolveModel, routeDeployments, type OperationContext } from '../operations/routing.js';

/**
 * Provider statuses that say the request itself is wrong (SPEC: "Invalid
 * provider request shapes can still return an error"). Any other failure —
 * 401/403 on the gateway's own provider key, 404 from an Anthropic-compatible
 * server without a count endpoint, 429, 5xx — is the provider being
 * unavailable: the next deployment is asked, and the local estimate answers
 * when none can.
 */
const INVALID_SHAPE_STATUSES = new Set([400, 413, 422]);

/**
 * `POST /v1/messages/count_tokens`: the provider's own count where it has one
 * (Anthropic-format providers), a local estimate with the tokenizer
 * elsewhere and when every provider is unavailable. Never billed. A
 * provider's refusal of the request's shape is relayed. A restricted
 * family's usage check runs first: the prompt reaches a provider only if
 * the check lets it.
 */
export async function countTokens(context: OperationContext, body: CountTokensRequest): Promise<CountTokensResponse> {
  const model = resolveModel(context.services, context.auth, body.model, '/v1/messages/count_tokens');
  await checkRestrictedUsage(context, model, '/v1/messages/count_tokens', { format: 'messages', body });
  try {
    const count = await routeDeployments(
      context,
      model,
      'countTokens',
      async ({ deployment, adapter, transport }) => {
        try {
          return await adapter.countTokens(transport, deployment.provider, { ...body, model: deployment.upstreamModel }, { headers: context.headers, query: context.query });
        } catch (error) {
          // Unavailable: let the next deployment try (as a failure routing falls over on).
          if (error instanceof UpstreamError && !INVALID_SHAPE_STATUSES.has(error.status)) {
            throw new UpstreamError(error.message, { status: 503, provider: error.provider, retryable: true, cause: error });
          }
          throw error;
        }
      },
      { maxRetries: 0 },
    );
    return { input_tokens: count };
  } catch (error) {
    // An invalid request shape is the client's to fix; anything else falls back to the estimate.
    if (error instanceof UpstreamError && INVALID_SHAPE_STATUSES.has(error.status)) throw error;
    if (!(error instanceof UpstreamError)) throw error;
    context.services.log.info('count_tokens.estimated', { requestId: context.requestId, model: model.id });
    return { input_tokens: estimateMessagesTokens(body) };
  }
}
