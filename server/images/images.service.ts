import { applyDiscount, computeCost } from '../billing/money.js';
import { GatewayError, toGatewayError, UpstreamError } from '../errors.js';
import { resolveModel, type GenerationContext } from '../generation/generate.js';
import { buildOpenAIHeaders } from '../providers/openai/openai.adapter.js';
import { parseOpenAIError } from '../providers/openai/openai-errors.js';
import { ClientAbortedError } from '../upstream/upstream-client.js';
import type { ImageGenerationRequest } from './images.schema.js';
import { renderMockPng } from './mock-image.js';


/** Plans that may not generate or edit images (SPEC "Authentication" 6). */
const IMAGE_RESTRICTED_PLANS = new Set(['free']);

export function assertImagePlan(plan: string): void {
  if (IMAGE_RESTRICTED_PLANS.has(plan)) {
    throw new GatewayError('PLAN_RESTRICTED', 'Image generation and editing are not available on the free plan.');
  }
}

/**
 * `POST /v1/images/generations`: the plan is checked before anything is
 * held; the hold is the per-image price × n; OpenAI-format providers are
 * passed through, the mock draws deterministic PNGs. Billed per image returned.
 */
export async function generateImages(context: GenerationContext, body: ImageGenerationRequest): Promise<unknown> {
  const { services, auth } = context;
  assertImagePlan(auth.account.plan);
  const model = resolveModel(services, auth, body.model, '/v1/images/generations');
  if (body.stream) throw new GatewayError('UNSUPPORTED_FEATURE', 'Streamed image generation is not supported by this model.', { param: 'stream' });
  const count = body.n ?? 1;
  const discount = services.discounts.percentageFor(auth.account.id, model.id, new Date());
  const priceFor = (images: number) => applyDiscount(computeCost(model.price, { inputTokens: 0, outputTokens: 0, images }), discount);
  const holdAmount = priceFor(count);
  await services.billing.hold(auth.account.id, holdAmount);
  const deployment = model.deployments[0]!;
  const record = (images: number, status: number, errorCode: string | null) =>
    services.billing.record({
      requestId: context.requestId,
      accountId: auth.account.id,
      keyId: auth.key.id,
      model: model.id,
      endpoint: '/v1/images/generations',
      provider: deployment.provider.id,
      inputTokens: 0,
      outputTokens: 0,
      cachedInputTokens: 0,
      units: images,
      status,
      errorCode,
      stream: false,
      aborted: false,
      latencyMs: performance.now() - context.receivedAt,
      cost: status === 200 ? priceFor(images) : 0,
      price: model.price,
      discountPercentage: discount,
      heldAmount: holdAmount,
      createdAt: new Date(),
    });
  try {
    if (deployment.provider.kind === 'mock') {
      const data = Array.from({ length: count }, (_, index) => {
        const base64 = renderMockPng(body.prompt, index).toString('base64');
        return body.response_format === 'b64_json'
          ? { b64_json: base64, revised_prompt: body.prompt }
          : { url: `data:image/png;base64,${base64}`, revised_prompt: body.prompt };
      });
      record(count, 200, null);
      return { created: Math.floor(Date.now() / 1000), data };
    }
    if (deployment.provider.kind !== 'openai') {
      throw new GatewayError('UNSUPPORTED_ENDPOINT', `The provider of '${model.id}' cannot generate images.`, { param: 'model' });
    }
    const response = await services.upstream.send(
      {
        method: 'POST',
        url: `${deployment.provider.baseUrl}/images/generations`,
        headers: buildOpenAIHeaders(deployment.provider),
        body: JSON.stringify({ ...body, model: deployment.upstreamModel }),
      },
      { providerId: deployment.provider.id, signal: context.signal, timeouts: services.config.upstream, parseError: parseOpenAIError },
    );
    let text = '';
    for await (const chunk of response.body) text += Buffer.from(chunk).toString('utf8');
    let json: { data?: unknown[] };
    try {
      json = JSON.parse(text) as { data?: unknown[] };
    } catch (error) {
      throw new UpstreamError('the provider answered with invalid JSON', { status: 502, provider: deployment.provider.id, retryable: false, cause: error });
    }
    record(Array.isArray(json.data) ? json.data.length : 0, 200, null);
    return json;
  } catch (error) {
    const aborted = error instanceof ClientAbortedError;
    const gatewayError = toGatewayError(error);
    record(0, aborted ? 499 : gatewayError.status, aborted ? 'CLIENT_ABORTED' : gatewayError.code);
    throw gatewayError;
  }
}
