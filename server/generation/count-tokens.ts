import { buildAnthropicCountTokensRequest } from '../providers/anthropic/anthropic.adapter.js';
import type { CountTokensRequest } from '../providers/anthropic/anthropic.wire.js';
import { fromAnthropicRequest } from '../providers/anthropic/from-anthropic-request.js';
import { parseAnthropicError } from '../providers/anthropic/anthropic-errors.js';
import { UpstreamError } from '../errors.js';
import { estimateRequestTokens } from '../tokenizer.js';
import { resolveModel, type GenerationContext } from './generate.js';

/**
 * Provider statuses that say the request itself is wrong (SPEC: "Invalid
 * provider request shapes can still return an error"). Any other failure —
 * 401/403 on the gateway's own provider key, 404 from an Anthropic-compatible
 * server without a count endpoint, 429, 5xx — is the provider being
 * unavailable, and the local estimate answers instead.
 */
const INVALID_SHAPE_STATUSES = new Set([400, 413, 422]);

/**
 * `POST /v1/messages/count_tokens`: the provider's own count where it has one
 * (Anthropic-format providers), otherwise — and when the provider is
 * unavailable — a local estimate with the tokenizer. Never billed. A
 * provider's refusal of the request's shape is relayed.
 */
export async function countTokens(context: GenerationContext, body: CountTokensRequest): Promise<{ input_tokens: number }> {
  const model = resolveModel(context.services, context.auth, body.model, '/v1/messages/count_tokens');
  const deployment = model.deployments[0]!;
  const provider = deployment.provider;
  if (provider.kind === 'anthropic') {
    try {
      const request = buildAnthropicCountTokensRequest(
        provider,
        { ...body, model: deployment.upstreamModel },
        { version: context.headers['anthropic-version'], beta: context.headers['anthropic-beta'] },
      );
      // As on /v1/messages, query parameters such as `?beta=true` reach the provider as sent.
      if (context.query) request.url += `?${context.query}`;
      const response = await context.services.upstream.send(
        request,
        {
          providerId: provider.id,
          signal: context.signal,
          timeouts: { ...context.services.config.upstream, maxRetries: 0 },
          parseError: parseAnthropicError,
        },
      );
      let text = '';
      for await (const chunk of response.body) text += Buffer.from(chunk).toString('utf8');
      const parsed = JSON.parse(text) as { input_tokens?: unknown };
      if (typeof parsed.input_tokens === 'number') return { input_tokens: parsed.input_tokens };
    } catch (error) {
      // An invalid request shape is the client's to fix; anything else falls back to the estimate.
      if (error instanceof UpstreamError && INVALID_SHAPE_STATUSES.has(error.status)) throw error;
      context.services.log.info('count_tokens.estimated', { requestId: context.requestId, provider: provider.id });
    }
  }
  const { request } = fromAnthropicRequest({ ...body, max_tokens: 1 } as Parameters<typeof fromAnthropicRequest>[0]);
  return { input_tokens: estimateRequestTokens(request) };
}
