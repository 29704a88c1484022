import { assertCanStream, resolveModel, type OperationContext } from '../generation/routing.js';
import type { ImageGenerationRequest } from '../providers/openai/openai-images.wire.js';
import type { ImageGenerationCall } from '../providers/types.js';
import { assertImagePlan, checkImageRequest, type ImagesAnswer } from './image-requests.js';
import { imageCallFields, runImageOperation } from './image-operation.js';

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
  return runImageOperation(context, model, request, {
    endpoint: '/v1/images/generations',
    callFor: (upstreamModel): ImageGenerationCall => ({ body: { ...body, model: upstreamModel }, ...imageCallFields(body.prompt, request) }),
    send: (adapter, transport, connection, call) => adapter.generate(transport, connection, call),
    stream: (adapter, transport, connection, call) => adapter.streamGeneration(transport, connection, call),
  });
}
