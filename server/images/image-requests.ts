/**
 * What image generation and image edits share: the plan check, the checks
 * of a request against its model's declared capabilities, the hold, how
 * finished images reach the client (`b64_json`, or a signed link to bytes the
 * gateway keeps), and the relay of a streamed answer.
 */
import { fileTypeFromBuffer } from 'file-type';
import { eventPart, jsonAnswer, type JsonAnswer, type StreamAnswer, type StreamPart, type TypedEvent } from '../answers.js';
import type { CatalogModel } from '../catalog/catalog.js';
import { imageCapabilitiesOf } from '../catalog/catalog.schema.js';
import { ClientAbortedError, GatewayError, toGatewayError } from '../errors.js';
import type { Meter, MeteredUsage } from '../operations/metering.js';
import { redactError } from '../operations/redaction.js';
import type { OperationContext } from '../operations/routing.js';
import { guardStream } from '../generation/stream-guard.js';
import type { ImageDatum, ImageSize, ImagesResponse, ImageStreamEvent } from '../providers/openai/openai-images.wire.js';
import { openAIErrorType } from '../error-types.js';

/** Plans that may not generate or edit images (SPEC "Authentication" 6). */
const IMAGE_RESTRICTED_PLANS = new Set(['free']);

/**
 * `403 PLAN_RESTRICTED` for a plan without image operations. The procedures
 * call it first; compat also calls it from the edit route's guard, after the
 * key is checked and before the upload is read.
 */
export function assertImagePlan(plan: string): void {
  if (IMAGE_RESTRICTED_PLANS.has(plan)) {
    throw new GatewayError('PLAN_RESTRICTED', 'Image generation and editing are not available on the free plan.');
  }
}

/** SPEC's default size. */
export const DEFAULT_IMAGE_SIZE: ImageSize = '1024x1024';

/** What the mock draws for `size: auto`. */
const AUTO_SIZE = { width: 1024, height: 1024 };

/** An image answer: the Image list, or its events. */
export type ImagesAnswer = JsonAnswer<ImagesResponse> | StreamAnswer<ImageStreamEvent>;

/** A request's values once checked against the model. */
export interface CheckedImageRequest {
  count: number;
  sizeLabel: ImageSize;
  width: number;
  height: number;
  quality?: string;
  stream: boolean;
  partialImages: number;
  responseFormat: 'url' | 'b64_json';
}

export interface ImageRequestFields {
  prompt: string;
  n?: number | null;
  size?: ImageSize | null;
  quality?: string | null;
  style?: string | null;
  stream?: boolean | null;
  partial_images?: number | null;
  response_format?: 'url' | 'b64_json' | null;
}

function unsupported(model: CatalogModel, param: string, message: string): GatewayError {
  return new GatewayError('UNSUPPORTED_FEATURE', `The model '${model.id}' ${message}`, { param });
}

/**
 * Checks a request against what its model declares (`images` in the
 * catalog): a value SPEC allows but the model does not is `400
 * UNSUPPORTED_FEATURE` naming the field (values SPEC does not allow were
 * refused by the schema already, `400 INVALID_REQUEST`).
 */
export function checkImageRequest(model: CatalogModel, fields: ImageRequestFields): CheckedImageRequest {
  const capabilities = imageCapabilitiesOf(model.entry);
  if (fields.prompt.length > capabilities.maxPromptLength) {
    throw new GatewayError('INVALID_REQUEST', `Invalid value for 'prompt': at most ${capabilities.maxPromptLength} characters on '${model.id}'.`, { param: 'prompt' });
  }
  const count = fields.n ?? 1;
  if (count > capabilities.maxImages) throw unsupported(model, 'n', `makes at most ${capabilities.maxImages} image(s) per request.`);
  // SPEC's default, unless the model cannot make it: then the first size it declares.
  const sizeLabel = fields.size ?? (capabilities.sizes.includes(DEFAULT_IMAGE_SIZE) ? DEFAULT_IMAGE_SIZE : capabilities.sizes[0]!);
  if (!capabilities.sizes.includes(sizeLabel)) throw unsupported(model, 'size', `does not make ${sizeLabel} images (sizes: ${capabilities.sizes.join(', ')}).`);
  const quality = fields.quality ?? undefined;
  if (quality !== undefined && !capabilities.qualities.includes(quality as never)) {
    throw unsupported(model, 'quality', capabilities.qualities.length ? `accepts quality ${capabilities.qualities.join(', ')} only.` : 'does not accept quality.');
  }
  const style = fields.style ?? undefined;
  if (style !== undefined && !capabilities.styles.includes(style as never)) {
    throw unsupported(model, 'style', capabilities.styles.length ? `accepts style ${capabilities.styles.join(', ')} only.` : 'does not accept style.');
  }
  const stream = fields.stream === true;
  if (stream && !capabilities.streaming) throw unsupported(model, 'stream', 'does not stream images.');
  const [width, height] = sizeLabel === 'auto' ? [AUTO_SIZE.width, AUTO_SIZE.height] : sizeLabel.split('x').map(Number);
  return {
    count,
    sizeLabel,
    width: width!,
    height: height!,
    ...(quality !== undefined ? { quality } : {}),
    stream,
    partialImages: fields.partial_images ?? 0,
    responseFormat: fields.response_format ?? 'url',
  };
}

async function contentTypeOf(bytes: Uint8Array): Promise<string> {
  const detected = await fileTypeFromBuffer(bytes.subarray(0, 4100));
  return detected?.mime.startsWith('image/') ? detected.mime : 'application/octet-stream';
}

/**
 * The images as the client asked for them. `url`: an image that came as
 * base64 is stored (one at a time) and answered as a signed link to the
 * gateway; a provider's own URL is passed on unchanged. `b64_json`: base64
 * as it came (a provider that answered only a URL has that URL passed on).
 */
export async function deliverImages(context: OperationContext, data: readonly ImageDatum[], responseFormat: 'url' | 'b64_json'): Promise<ImageDatum[]> {
  if (responseFormat === 'b64_json') return [...data];
  // PUBLIC_BASE_URL, else the listen address: never the request's Host, which the client chooses.
  const origin = context.services.generatedImages.origin;
  const delivered: ImageDatum[] = [];
  for (const datum of data) {
    if (datum.url !== undefined || datum.b64_json === undefined) {
      delivered.push(datum);
      continue;
    }
    const { b64_json: encoded, ...rest } = datum;
    const bytes = Buffer.from(encoded, 'base64');
    const path = await context.services.generatedImages.save(context.auth.account.id, bytes, await contentTypeOf(bytes));
    delivered.push({ ...rest, url: `${origin}${path}` });
  }
  return delivered;
}

/** The Image list answer of a finished (non-streamed) request, with its usage: one image per image delivered. */
export async function answerImages(
  context: OperationContext,
  images: ImagesResponse,
  request: CheckedImageRequest,
  provider: string,
): Promise<{ answer: JsonAnswer<ImagesResponse>; usage: MeteredUsage }> {
  const data = await deliverImages(context, images.data, request.responseFormat);
  return { answer: jsonAnswer({ ...images, data }, { headers: {}, provider }), usage: { inputTokens: 0, outputTokens: 0, images: data.length } };
}

/** What a client is told when a provider's image stream ends before any finished image. */
export const INCOMPLETE_IMAGE_STREAM_MESSAGE = 'The provider ended the image stream before an image was complete.';

/**
 * The in-stream error event: openai-node throws an APIError for any event
 * whose data has an `error` object (core/streaming.ts).
 */
function errorEvent(error: GatewayError): TypedEvent<ImageStreamEvent> {
  return {
    event: 'error',
    data: { type: 'error', error: { message: error.message, type: openAIErrorType(error.status), code: error.code, param: error.param } },
  };
}

export interface ImageStreamOptions {
  meter: Meter;
  provider: string;
  /** Secrets of the model's providers, kept out of error events. */
  secrets: readonly string[];
  /** Releases the provider's stream (abort the worker job or the HTTP body). */
  release(): void;
  /** Stops the provider when nobody reads the answer. */
  abandoned: AbortController;
  signal: AbortSignal;
}

/**
 * The provider's image events to the client, in one loop whose `finally`
 * settles the request once: each `*.completed` event is one image billed
 * (also when the client leaves or the provider fails later); a failure is
 * sent as an in-format `error` event and ends the stream.
 */
export function streamImageEvents(events: AsyncIterable<ImageStreamEvent>, options: ImageStreamOptions): StreamAnswer<ImageStreamEvent> {
  async function* relay(): AsyncGenerator<StreamPart<ImageStreamEvent>> {
    let completed = 0;
    let failed: GatewayError | undefined;
    let finished = false;
    try {
      for await (const event of events) {
        if (event.type.endsWith('.completed')) completed++;
        yield eventPart([{ event: event.type, data: event }]);
      }
      if (completed === 0) {
        failed = new GatewayError('UPSTREAM_ERROR', INCOMPLETE_IMAGE_STREAM_MESSAGE);
        yield eventPart([errorEvent(failed)]);
      }
      finished = true;
    } catch (error) {
      if (error instanceof ClientAbortedError || options.signal.aborted) return;
      failed = redactError(toGatewayError(error), options.secrets);
      yield eventPart([errorEvent(failed)]);
      finished = true;
    } finally {
      options.release();
      options.meter.settle({
        usage: { inputTokens: 0, outputTokens: 0, images: completed },
        status: 200,
        errorCode: failed ? failed.code : finished ? null : 'CLIENT_ABORTED',
        aborted: !finished,
        provider: options.provider,
      });
    }
  }
  return { kind: 'stream', format: 'images', parts: guardStream(relay(), options.meter, options.abandoned), meta: { headers: {}, provider: options.provider } };
}
