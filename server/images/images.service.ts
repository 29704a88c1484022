import { assertCanStream, type OperationContext } from '../operations/routing.js';
import { runOperation } from '../operations/run-operation.js';
import type { ImageGenerationRequest } from '../providers/openai/openai-images.wire.js';
import type { ImageGenerationCall } from '../providers/types.js';
import { planImages } from './image-operation.js';
import { assertImagePlan, checkImageRequest, type ImagesAnswer } from './image-requests.js';

export { assertImagePlan } from './image-requests.js';

/**
 * `POST /v1/images/generations`: the plan is checked before anything else,
 * the request against the model's capabilities before anything is held; the
 * hold is the per-image price × n; billed per image returned (streams: per
 * `image_generation.completed` event delivered).
 */
export async function generateImages(context: OperationContext, body: ImageGenerationRequest): Promise<ImagesAnswer> {
  assertImagePlan(context.auth.account.plan);
  return runOperation(context, {
    endpoint: '/v1/images/generations',
    operation: 'images',
    model: body.model,
    plan: (model) => {
      const request = checkImageRequest(model, body);
      assertCanStream(context, request.stream);
      const toCall = (upstreamModel: string): ImageGenerationCall => ({
        body: { ...body, model: upstreamModel },
        prompt: body.prompt,
        width: request.width,
        height: request.height,
        sizeLabel: request.sizeLabel,
        ...(request.quality !== undefined ? { quality: request.quality } : {}),
        count: request.count,
        partialImages: request.partialImages,
      });
      return planImages(context, model, request, {
        complete: ({ deployment, adapter, transport }) => adapter.generate(transport, deployment.provider, toCall(deployment.upstreamModel)),
        stream: ({ deployment, adapter, transport }) => adapter.streamGeneration(transport, deployment.provider, toCall(deployment.upstreamModel)),
      });
    },
  });
}
