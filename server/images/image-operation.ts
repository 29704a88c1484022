/**
 * The part image generation and image edits share once their request is
 * checked: the hold per image, the one failover loop over the model's
 * deployments, and the answer — an Image list settled per image, or the
 * provider's events relayed and settled per completed image.
 */
import type { CatalogModel } from '../catalog/catalog.js';
import type { Endpoint } from '../catalog/catalog.schema.js';
import { Meter } from '../generation/metering.js';
import { routeDeployments, type OperationContext } from '../generation/routing.js';
import type { ImagesResponse, ImageStreamEvent } from '../providers/openai/openai-images.wire.js';
import type { ImageCallBase, ImagesAdapter, ProviderConnection, UpstreamTransport } from '../providers/types.js';
import { answerImages, streamImageEvents, type CheckedImageRequest, type ImagesAnswer } from './image-requests.js';

/** What differs between the image operations: the call for a deployment, and the adapter methods that send it. */
export interface ImageOperation<Call extends ImageCallBase> {
  endpoint: Endpoint;
  callFor(upstreamModel: string): Call;
  send(adapter: ImagesAdapter, transport: UpstreamTransport, connection: ProviderConnection, call: Call): Promise<ImagesResponse>;
  stream(adapter: ImagesAdapter, transport: UpstreamTransport, connection: ProviderConnection, call: Call): Promise<AsyncIterable<ImageStreamEvent>>;
}

/** The fields every image call carries, from the prompt and the checked request. */
export function imageCallFields(prompt: string, request: CheckedImageRequest): ImageCallBase {
  return {
    prompt,
    width: request.width,
    height: request.height,
    sizeLabel: request.sizeLabel,
    ...(request.quality !== undefined ? { quality: request.quality } : {}),
    count: request.count,
    partialImages: request.partialImages,
  };
}

/** Holds the price of `request.count` images, then runs the operation on the model's deployments. */
export async function runImageOperation<Call extends ImageCallBase>(
  context: OperationContext,
  model: CatalogModel,
  request: CheckedImageRequest,
  operation: ImageOperation<Call>,
): Promise<ImagesAnswer> {
  const { services, auth } = context;
  const meter = new Meter({ services, auth, requestId: context.requestId, receivedAt: context.receivedAt, model, endpoint: operation.endpoint, stream: request.stream });
  await meter.hold({ inputTokens: 0, outputTokens: 0, images: request.count });
  const abandoned = new AbortController();
  try {
    return await routeDeployments(
      context,
      model,
      'images',
      async ({ deployment, adapter, transport }): Promise<ImagesAnswer> => {
        const call = operation.callFor(deployment.upstreamModel);
        const provider = deployment.provider.id;
        if (!request.stream) return answerImages(context, meter, await operation.send(adapter, transport, deployment.provider, call), request, provider);
        const events = await operation.stream(adapter, transport, deployment.provider, call);
        const release = () => void (events as AsyncGenerator<unknown>).return?.(undefined);
        return streamImageEvents(events, { meter, provider, secrets: model.secrets, release, abandoned, signal: context.signal });
      },
      request.stream ? { signal: AbortSignal.any([context.signal, abandoned.signal]) } : {},
    );
  } catch (error) {
    throw meter.fail(error);
  }
}
