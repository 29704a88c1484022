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
import { assertCanStream, type OperationContext } from '../operations/routing.js';
import { runOperation } from '../operations/run-operation.js';
import { imageCapabilitiesOf } from '../catalog/catalog.schema.js';
import { MediaFormatError } from '../media/media-format-error.js';
import { readPngInfo, type PngInfo } from '../media/png.js';
import type { ImageEditRequest } from '../providers/openai/openai-images.wire.js';
import type { ImageEditCall, UploadedMedia } from '../providers/types.js';
import type { UploadedFile } from '../uploads/upload-store.js';
import { planImages } from './image-operation.js';
import { assertImagePlan, checkImageRequest, type ImagesAnswer } from './image-requests.js';

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
  return runOperation(context, {
    endpoint: '/v1/images/edits',
    operation: 'images',
    model: body.model,
    plan: async (model) => {
      const request = checkImageRequest(model, body);
      assertCanStream(context, request.stream);
      const capabilities = imageCapabilitiesOf(model.entry);
      const images = body.image.map((id) => services.uploads.get(id, 'image'));
      const mask = body.mask === undefined ? undefined : services.uploads.get(body.mask, 'mask');
      if (images.length > capabilities.maxInputImages) {
        throw new GatewayError('UNSUPPORTED_FEATURE', `The model '${model.id}' edits at most ${capabilities.maxInputImages} image(s) at once.`, { param: 'image' });
      }
      await checkEditFiles(images, mask);
      const toCall = (upstreamModel: string): ImageEditCall => ({
        fields: toFormFields(body, upstreamModel),
        images: images.map(toUploadedMedia),
        ...(mask ? { mask: toUploadedMedia(mask) } : {}),
        prompt: body.prompt,
        width: request.width,
        height: request.height,
        sizeLabel: request.sizeLabel,
        ...(request.quality !== undefined ? { quality: request.quality } : {}),
        count: request.count,
        partialImages: request.partialImages,
      });
      return planImages(context, model, request, {
        complete: ({ deployment, adapter, transport }) => adapter.edit(transport, deployment.provider, toCall(deployment.upstreamModel)),
        stream: ({ deployment, adapter, transport }) => adapter.streamEdit(transport, deployment.provider, toCall(deployment.upstreamModel)),
      });
    },
  });
}

/** The images (each a PNG; a single one square and under 4 MB) and the mask (a PNG of the first image's size, with alpha). */
async function checkEditFiles(images: readonly UploadedFile[], mask: UploadedFile | undefined): Promise<void> {
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
}
