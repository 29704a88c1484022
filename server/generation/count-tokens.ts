import { buildAnthropicCountTokensRequest } from '../providers/anthropic/anthropic.adapter.js';
import type { CountTokensRequest } from '../providers/anthropic/anthropic.wire.js';
import { fromAnthropicRequest } from '../providers/anthropic/from-anthropic-request.js';
import { parseAnthropicError } from '../providers/anthropic/anthropic-errors.js';
import { UpstreamError } from '../errors.js';
import { estimateRequestTokens } from '../tokenizer.js';
import { resolveModel, type GenerationContext } from './generate.js';

/**
 * `POST /v1/messages/count_tokens`: the provider's own count where it has one
 * (Anthropic-format providers), otherwise — and when the provider is
 * unavailable — a local estimate with the tokenizer. Never billed. A
 * provider's 4xx (an invalid shape) is relayed.
 */
export async function countTokens(context: GenerationContext, body: CountTokensRequest): Promise<{ input_tokens: number }> {
  const model = resolveModel(context.services, context.auth, body.model, '/v1/messages/count_tokens');
  const deployment = model.deployments[0]!;
  const provider = deployment.provider;
  if (provider.kind === 'anthropic') {
    try {
      const response = await context.services.upstream.send(
        buildAnthropicCountTokensRequest(
          provider,
          { ...body, model: deployment.upstreamModel },
          { version: context.headers['anthropic-version'], beta: context.headers['anthropic-beta'] },
        ),
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
      if (error instanceof UpstreamError && error.status >= 400 && error.status < 500 && error.status !== 429 && error.status !== 408) throw error;
      context.services.log.info('count_tokens.estimated', { requestId: context.requestId, provider: provider.id });
    }
  }
  const { request } = fromAnthropicRequest({ ...body, max_tokens: 1 } as Parameters<typeof fromAnthropicRequest>[0]);
  return { input_tokens: estimateRequestTokens(request) };
}
