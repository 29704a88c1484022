/**
 * `POST /v1/images/edits` (SPEC): multipart uploads already on disk, named
 * by id. The plan is checked first (compat checked it too, before reading the
 * body); then the model and its capabilities, then the files — each read and
 * checked one at a time (PNG by content, with `readPngInfo`), so sixteen
 * large images never sit in memory together — and only then is anything
 * held or sent.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { GatewayError } from '../errors.js';
import { Meter } from '../generation/metering.js';
import { assertCanStream, resolveModel, routeDeployments, type OperationContext } from '../generation/routing.js';
import { imageCapabilitiesOf } from '../catalog/catalog.schema.js';
import { MediaFormatError } from '../media/media-format-error.js';
import { readPngInfo, type PngInfo } from '../media/png.js';
import type { ImageEditRequest } from '../providers/openai/openai-images.wire.js';
import type { ImageEditCall, UploadedMedia } from '../providers/types.js';
import type { UploadedFile } from '../uploads/upload-store.js';
import { answerImages, assertImagePlan, checkImageRequest, streamImageEvents, type ImagesAnswer } from './image-requests.js';

/** SPEC: the single-image form must be less than 4 MB. */
export const SINGLE_IMAGE_MAX_BYTES = 4 * 1024 * 1024;

/** Every image and the mask, each (compat refuses a larger file with 413 while it is uploaded). */
export const EDIT_IMAGE_MAX_BYTES = 20 * 1024 * 1024;
export const EDIT_MASK_MAX_BYTES = 4 * 1024 * 1024;

/** Reads one upload whole (at most its route bound) and checks that it is a PNG. */
async function inspectPng(file: UploadedFile, param: string): Promise<PngInfo> {
  if (file.size === 0) throw new GatewayError('INVALID_REQUEST', `Invalid value for '${param}': the file is empty.`, { param });
  try {
    return readPngInfo(await readFile(file.path));
  } catch (error) {
    if (!(error instanceof MediaFormatError)) throw error;
    if (error.reason === 'unrecognized') {
      throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', `Invalid value for '${param}': "${file.filename}" is not a PNG image.`, { param });
    }
    throw new GatewayError('INVALID_REQUEST', `Invalid value for '${param}': ${error.message}`, { param });
  }
}

function toUploadedMedia(file: UploadedFile): UploadedMedia {
  return {
    field: file.field,
    filename: file.filename,
    contentType: file.contentType,
    size: file.size,
    path: file.path,
    open: () => createReadStream(file.path),
  };
}

/** The form's text fields for the provider, as text (a form has no other type), with the upstream's model. */
function toFormFields(body: ImageEditRequest, upstreamModel: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(body)) {
    if (name === 'image' || name === 'mask' || value === undefined || value === null) continue;
    fields[name] = typeof value === 'string' ? value : typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
  }
  fields.model = upstreamModel;
  return fields;
}

export async function editImages(context: OperationContext, body: ImageEditRequest): Promise<ImagesAnswer> {
  const { services, auth } = context;
  assertImagePlan(auth.account.plan);
  const model = resolveModel(services, auth, body.model, '/v1/images/edits');
  const request = checkImageRequest(model, body);
  assertCanStream(context, request.stream);
  const capabilities = imageCapabilitiesOf(model.entry);
  const images = body.image.map((id) => services.uploads.get(id, 'image'));
  const mask = body.mask === undefined ? undefined : services.uploads.get(body.mask, 'mask');
  if (images.length > capabilities.maxInputImages) {
    throw new GatewayError('UNSUPPORTED_FEATURE', `The model '${model.id}' edits at most ${capabilities.maxInputImages} image(s) at once.`, { param: 'image' });
  }
  const infos: PngInfo[] = [];
  for (const image of images) infos.push(await inspectPng(image, 'image'));
  const first = infos[0]!;
  if (images.length === 1) {
    if (images[0]!.size >= SINGLE_IMAGE_MAX_BYTES) {
      throw new GatewayError('PAYLOAD_TOO_LARGE', `Invalid value for 'image': a single image must be less than 4 MB (${SINGLE_IMAGE_MAX_BYTES} bytes).`, { param: 'image' });
    }
    if (first.width !== first.height) {
      throw new GatewayError('INVALID_REQUEST', `Invalid value for 'image': a single image must be square, got ${first.width}x${first.height}.`, { param: 'image' });
    }
  }
  if (mask) {
    const maskInfo = await inspectPng(mask, 'mask');
    if (maskInfo.width !== first.width || maskInfo.height !== first.height) {
      throw new GatewayError('INVALID_REQUEST', `Invalid value for 'mask': it must have the image's dimensions (${first.width}x${first.height}), got ${maskInfo.width}x${maskInfo.height}.`, { param: 'mask' });
    }
    if (!maskInfo.hasAlpha) {
      throw new GatewayError('INVALID_REQUEST', "Invalid value for 'mask': it needs an alpha channel (its fully transparent pixels mark where to edit).", { param: 'mask' });
    }
  }

  const meter = new Meter({ deps: services, auth, requestId: context.requestId, receivedAt: context.receivedAt, model, endpoint: '/v1/images/edits', stream: request.stream });
  await meter.hold({ inputTokens: 0, outputTokens: 0, images: request.count });
  const abandoned = new AbortController();
  try {
    return await routeDeployments(
      context,
      model,
      'images',
      async ({ deployment, adapter, transport }): Promise<ImagesAnswer> => {
        const call: ImageEditCall = {
          fields: toFormFields(body, deployment.upstreamModel),
          images: images.map(toUploadedMedia),
          ...(mask ? { mask: toUploadedMedia(mask) } : {}),
          prompt: body.prompt,
          width: request.width,
          height: request.height,
          sizeLabel: request.sizeLabel,
          ...(request.quality !== undefined ? { quality: request.quality } : {}),
          count: request.count,
          partialImages: request.partialImages,
        };
        const provider = deployment.provider.id;
        if (!request.stream) return answerImages(context, meter, await adapter.edit(transport, deployment.provider, call), request, provider);
        const events = await adapter.streamEdit(transport, deployment.provider, call);
        const release = () => void (events as AsyncGenerator<unknown>).return?.(undefined);
        return streamImageEvents(events, { meter, provider, secrets: model.secrets, release, abandoned, signal: context.signal });
      },
      request.stream ? { signal: AbortSignal.any([context.signal, abandoned.signal]) } : {},
    );
  } catch (error) {
    throw meter.fail(error);
  }
}
