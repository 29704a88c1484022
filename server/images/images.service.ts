import { jsonAnswer, type JsonAnswer } from '../answers.js';
import { GatewayError } from '../errors.js';
import { Meter } from '../generation/metering.js';
import { resolveModel, routeDeployments, type OperationContext } from '../generation/routing.js';
import type { ImageGenerationRequest, ImagesResponse } from '../providers/openai/openai-images.wire.js';

/** Plans that may not generate or edit images (SPEC "Authentication" 6). */
const IMAGE_RESTRICTED_PLANS = new Set(['free']);

export function assertImagePlan(plan: string): void {
  if (IMAGE_RESTRICTED_PLANS.has(plan)) {
    throw new GatewayError('PLAN_RESTRICTED', 'Image generation and editing are not available on the free plan.');
  }
}

/**
 * `POST /v1/images/generations`: the plan is checked before anything is
 * held; the hold is the per-image price × n; billed per image returned.
 */
export async function generateImages(context: OperationContext, body: ImageGenerationRequest): Promise<JsonAnswer<ImagesResponse>> {
  const { services, auth } = context;
  assertImagePlan(auth.account.plan);
  const model = resolveModel(services, auth, body.model, '/v1/images/generations');
  if (body.stream) throw new GatewayError('UNSUPPORTED_FEATURE', 'Streamed image generation is not supported by this model.', { param: 'stream' });
  const count = body.n ?? 1;
  const meter = new Meter({ services, auth, requestId: context.requestId, receivedAt: context.receivedAt, model, endpoint: '/v1/images/generations', stream: false });
  await meter.hold({ inputTokens: 0, outputTokens: 0, images: count });
  try {
    const { images, provider } = await routeDeployments(context, model, 'images', async ({ deployment, adapter, transport }) => ({
      images: await adapter.generate(transport, deployment.provider, { ...body, model: deployment.upstreamModel }),
      provider: deployment.provider.id,
    }));
    const data = images.data.map((datum) =>
      body.response_format !== 'b64_json' && datum.url === undefined && datum.b64_json !== undefined
        ? { url: `data:image/png;base64,${datum.b64_json}`, ...(datum.revised_prompt !== undefined ? { revised_prompt: datum.revised_prompt } : {}) }
        : datum,
    );
    meter.settle({ usage: { inputTokens: 0, outputTokens: 0, images: data.length }, status: 200, errorCode: null, aborted: false, provider });
    return jsonAnswer({ ...images, data }, { headers: {}, provider });
  } catch (error) {
    throw meter.fail(error);
  }
}
