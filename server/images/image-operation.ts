/**
 * What image generation and image edits share once the request is checked:
 * the hold (the per-image price × n), and per deployment either the finished
 * images (billed per image delivered) or the relayed stream (billed per
 * `*.completed` event delivered). Each service brings only its adapter call.
 */
import type { CatalogModel } from '../catalog/catalog.js';
import type { OperationContext } from '../operations/routing.js';
import type { OperationPlan, OperationStep } from '../operations/run-operation.js';
import type { ImagesResponse, ImageStreamEvent } from '../providers/openai/openai-images.wire.js';
import { answerImages, streamImageEvents, type CheckedImageRequest, type ImagesAnswer } from './image-requests.js';

/** A service's own call of the deployment's images adapter, whole or streamed. */
export interface ImageCalls {
  complete(step: OperationStep<'images'>): Promise<ImagesResponse>;
  stream(step: OperationStep<'images'>): Promise<AsyncIterable<ImageStreamEvent>>;
}

export function planImages(context: OperationContext, model: CatalogModel, request: CheckedImageRequest, calls: ImageCalls): OperationPlan<'images', ImagesAnswer> {
  return {
    hold: { inputTokens: 0, outputTokens: 0, images: request.count },
    stream: request.stream,
    readLater: request.stream,
    call: async (step) => {
      const provider = step.deployment.provider.id;
      if (!request.stream) return answerImages(context, await calls.complete(step), request, provider);
      const events = await calls.stream(step);
      const release = () => void (events as AsyncGenerator<unknown>).return?.(undefined);
      const answer = streamImageEvents(events, { meter: step.meter, provider, secrets: model.secrets, release, abandoned: step.abandoned, signal: context.signal });
      return { answer, settlesWhenRead: true };
    },
  };
}
