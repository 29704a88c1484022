/**
 * The OpenAI images API as the gateway serves it (SPEC "POST /images/generations",
 * "POST /images/edits", "Image list"): request schemas strict on SPEC's bounds and
 * lenient on fields SPEC does not list (`background`, `output_format`, `moderation`…,
 * passed on to OpenAI-format providers), the answer, and the streamed events.
 *
 * @see https://platform.openai.com/docs/api-reference/images
 */
import { z } from 'zod';
import { uploadIdSchema } from '../../uploads/upload-store.js';

/** SPEC's sizes; `auto` lets the model choose (the mock draws 1024x1024). */
export const IMAGE_SIZES = ['256x256', '512x512', '1024x1024', '1536x1024', '1024x1536', '2048x2048', '4096x4096', 'auto'] as const;
export type ImageSize = (typeof IMAGE_SIZES)[number];

/** SPEC's `standard`/`hd`, plus the GPT image models' `low`/`medium`/`high`/`auto` (a model accepts those its catalog entry lists). */
export const IMAGE_QUALITIES = ['standard', 'hd', 'low', 'medium', 'high', 'auto'] as const;
export type ImageQuality = (typeof IMAGE_QUALITIES)[number];

export const IMAGE_STYLES = ['vivid', 'natural'] as const;

/** Partial images per streamed image (OpenAI: 0 to 3). */
export const MAX_PARTIAL_IMAGES = 3;

/** Longest prompt any image model takes (the GPT image models'); a model may set less. */
export const MAX_IMAGE_PROMPT_LENGTH = 32_000;

const responseFormatSchema = z.enum(['url', 'b64_json']);

/** `POST /v1/images/generations` (SPEC): strict on the listed bounds, lenient on newer fields. */
export const imageGenerationRequestSchema = z.looseObject({
  model: z.string().min(1),
  prompt: z.string().min(1).max(MAX_IMAGE_PROMPT_LENGTH),
  n: z.number().int().min(1).max(10).nullish(),
  size: z.enum(IMAGE_SIZES).nullish(),
  response_format: responseFormatSchema.nullish(),
  quality: z.enum(IMAGE_QUALITIES).nullish(),
  style: z.enum(IMAGE_STYLES).nullish(),
  stream: z.boolean().nullish(),
  partial_images: z.number().int().min(0).max(MAX_PARTIAL_IMAGES).nullish(),
});
export type ImageGenerationRequest = z.infer<typeof imageGenerationRequestSchema>;

/** A form's `true`/`false` text, or a boolean from an internal caller. */
const formBoolean = z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]);

/** A form's decimal text, or a number from an internal caller. */
function formInteger(min: number, max: number) {
  return z.union([z.number(), z.string().regex(/^\s*-?\d+\s*$/, 'expected an integer').transform(Number)]).pipe(z.number().int().min(min).max(max));
}

/**
 * `POST /v1/images/edits`, as the procedure takes it: the form's text fields
 * (numbers and booleans still as text from a form, or typed from an internal
 * caller) and the uploaded files by id — `image` holds the files of `image`
 * and `image[]`, in the order they came.
 */
export const imageEditRequestSchema = z.looseObject({
  model: z.string().min(1),
  prompt: z.string().min(1).max(MAX_IMAGE_PROMPT_LENGTH),
  image: z.array(uploadIdSchema).min(1, 'at least one image is required').max(16, 'at most 16 images'),
  mask: uploadIdSchema.optional(),
  n: formInteger(1, 10).optional(),
  size: z.enum(IMAGE_SIZES).optional(),
  response_format: responseFormatSchema.optional(),
  quality: z.enum(IMAGE_QUALITIES).optional(),
  stream: formBoolean.optional(),
  partial_images: formInteger(0, MAX_PARTIAL_IMAGES).optional(),
});
export type ImageEditRequest = z.infer<typeof imageEditRequestSchema>;

/** The edit's `multipart/form-data` fields as a client sends them (for the OpenAPI document). */
export const imageEditFormSchema = z.object({
  model: z.string(),
  prompt: z.string().max(MAX_IMAGE_PROMPT_LENGTH),
  image: z.file().describe('PNG; send several as `image[]` (1 to 16 in all); a single image must be square and under 4 MB'),
  'image[]': z.array(z.file()).max(16).optional(),
  mask: z.file().describe('PNG with an alpha channel, the dimensions of the (first) image; fully transparent pixels mark where to edit').optional(),
  n: z.string().describe('1 to 10').optional(),
  size: z.enum(IMAGE_SIZES).optional(),
  response_format: responseFormatSchema.optional(),
  quality: z.enum(IMAGE_QUALITIES).optional(),
  stream: z.enum(['true', 'false']).optional(),
  partial_images: z.string().describe('0 to 3').optional(),
});

/** One image of an answer (SPEC "Image list"). */
export interface ImageDatum {
  url?: string;
  b64_json?: string;
  revised_prompt?: string;
}

/** `POST /v1/images/generations` and `/v1/images/edits` answer (SPEC "Image list"). */
export interface ImagesResponse {
  created: number;
  data: ImageDatum[];
  [field: string]: unknown;
}

/**
 * One server-sent event of a streamed generation or edit, as openai-node v6
 * types it (`ImageGenStreamEvent`, `ImageEditStreamEvent`):
 * `image_generation.partial_image` / `image_edit.partial_image` with
 * `partial_image_index`, then `image_generation.completed` /
 * `image_edit.completed` with `usage`; each with `b64_json`, `created_at`,
 * `size`, `quality`, `background`, `output_format`. `error` carries a
 * failure after the stream started.
 */
export interface ImageStreamEvent {
  type: string;
  b64_json?: string;
  partial_image_index?: number;
  [field: string]: unknown;
}

/** The event types of a streamed operation. */
export const IMAGE_STREAM_EVENT_TYPES = {
  generation: { partial: 'image_generation.partial_image', completed: 'image_generation.completed' },
  edit: { partial: 'image_edit.partial_image', completed: 'image_edit.completed' },
} as const;
