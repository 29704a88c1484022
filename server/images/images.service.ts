import { Meter } from '../generation/metering.js';
import { assertCanStream, resolveModel, routeDeployments, type OperationContext } from '../generation/routing.js';
import type { ImageGenerationRequest } from '../providers/openai/openai-images.wire.js';
import type { ImageGenerationCall } from '../providers/types.js';
import { answerImages, assertImagePlan, checkImageRequest, streamImageEvents, type ImagesAnswer } from './image-requests.js';

export { assertImagePlan } from './image-requests.js';

/**
 * `POST /v1/images/generations`: the plan is checked before anything else,
 * the request against the model's capabilities before anything is held; the
 * hold is the per-image price × n; billed per image returned (streams: per
 * `image_generation.completed` event delivered).
 */
export async function generateImages(context: OperationContext, body: ImageGenerationRequest): Promise<ImagesAnswer> {
  const { services, auth } = context;
  assertImagePlan(auth.account.plan);
  const model = resolveModel(services, auth, body.model, '/v1/images/generations');
  const request = checkImageRequest(model, body);
  assertCanStream(context, request.stream);
  const meter = new Meter({ deps: services, auth, requestId: context.requestId, receivedAt: context.receivedAt, model, endpoint: '/v1/images/generations', stream: request.stream });
  await meter.hold({ inputTokens: 0, outputTokens: 0, images: request.count });
  const abandoned = new AbortController();
  try {
    return await routeDeployments(
      context,
      model,
      'images',
      async ({ deployment, adapter, transport }): Promise<ImagesAnswer> => {
        const call: ImageGenerationCall = {
          body: { ...body, model: deployment.upstreamModel },
          prompt: body.prompt,
          width: request.width,
          height: request.height,
          sizeLabel: request.sizeLabel,
          ...(request.quality !== undefined ? { quality: request.quality } : {}),
          count: request.count,
          partialImages: request.partialImages,
        };
        const provider = deployment.provider.id;
        if (!request.stream) return answerImages(context, meter, await adapter.generate(transport, deployment.provider, call), request, provider);
        const events = await adapter.streamGeneration(transport, deployment.provider, call);
        const release = () => void (events as AsyncGenerator<unknown>).return?.(undefined);
        return streamImageEvents(events, { meter, provider, secrets: model.secrets, release, abandoned, signal: context.signal });
      },
      request.stream ? { signal: AbortSignal.any([context.signal, abandoned.signal]) } : {},
    );
  } catch (error) {
    throw meter.fail(error);
  }
}
