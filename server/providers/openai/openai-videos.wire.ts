/**
 * `/v1/videos`: the public request and answer shapes (SPEC "Video", "POST
 * /videos" …) and the lenient reading of an OpenAI-format provider's video
 * object.
 *
 * @see https://platform.openai.com/docs/api-reference/videos
 */
import { z } from 'zod';

export const VIDEO_STATUSES = ['pending', 'processing', 'completed', 'failed'] as const;
export type VideoStatus = (typeof VIDEO_STATUSES)[number];

/**
 * `POST /v1/videos` (multipart or JSON). `size` and `seconds` are checked
 * against the model's bounds by the service (400 naming the field);
 * `seconds` is a string on the wire (SPEC) and a number is accepted too.
 * A multipart `input_reference` arrives as the id of the uploaded file; a
 * JSON one as `{ image_url: "data:…" }`.
 */
export const videoCreateRequestSchema = z.looseObject({
  model: z.string().min(1),
  prompt: z.string().min(1).max(32_000),
  size: z.string().min(1).max(32).optional(),
  seconds: z.union([z.string().min(1).max(32), z.number()]).optional(),
  input_reference: z.union([z.string().min(1), z.looseObject({ image_url: z.string().optional(), file_id: z.string().optional() })]).optional(),
});
export type VideoCreateRequest = z.infer<typeof videoCreateRequestSchema>;

/** `GET /v1/videos`: SPEC's page/limit, plus the SDK's cursor (`after`, `order`) so its auto-pagination works. */
export const videoListQuerySchema = z.object({
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  /** A video id of this account: list the ones after it in the order asked. */
  after: z.string().min(1).max(200).optional(),
  order: z.enum(['asc', 'desc']).default('desc'),
});
export type VideoListQuery = z.infer<typeof videoListQuerySchema>;

export const videoIdInputSchema = z.object({ id: z.string().min(1).max(200) });

export const videoContentQuerySchema = z.object({
  id: z.string().min(1).max(200),
  variant: z.enum(['video', 'thumbnail', 'spritesheet']).default('video'),
});
export type VideoContentQuery = z.infer<typeof videoContentQuerySchema>;

/**
 * SPEC's Video. `object`, `seconds`, `progress`, `expires_at` and
 * `remixed_from_video_id` are extras the `openai` SDK's `Video` type has.
 */
export const videoSchema = z.object({
  id: z.string(),
  object: z.literal('video'),
  status: z.enum(VIDEO_STATUSES),
  model: z.string(),
  prompt: z.string(),
  size: z.string(),
  /** The requested duration, as the SDK's type has it (a string). */
  seconds: z.string(),
  /** The real duration in seconds, once completed. */
  duration: z.number().nullable(),
  progress: z.number().int(),
  created_at: z.number().int(),
  completed_at: z.number().int().nullable(),
  /** When the finished video's files are deleted (VIDEO_RETENTION_HOURS after completion); null: kept for ever, or not completed. */
  expires_at: z.number().int().nullable(),
  error: z.string().nullable(),
  remixed_from_video_id: z.null(),
});
export type Video = z.infer<typeof videoSchema>;

/** SPEC's video list, plus the SDK's cursor fields. */
export const videoListSchema = z.object({
  object: z.literal('list'),
  data: z.array(videoSchema),
  pagination: z.object({ page: z.number().int(), limit: z.number().int(), total: z.number().int() }),
  has_more: z.boolean(),
  first_id: z.string().nullable(),
  last_id: z.string().nullable(),
});
export type VideoList = z.infer<typeof videoListSchema>;

/** SPEC's delete result, plus the SDK's `VideoDeleteResponse` fields. */
export const videoDeleteResultSchema = z.object({
  success: z.boolean(),
  message: z.string(),
  id: z.string(),
  object: z.literal('video.deleted'),
  deleted: z.boolean(),
});
export type VideoDeleteResult = z.infer<typeof videoDeleteResultSchema>;

/** An OpenAI-format provider's video object: only the fields read, leniently. */
export const openAIVideoWireSchema = z.looseObject({
  id: z.string().min(1),
  status: z.string(),
  progress: z.number().nullish(),
  seconds: z.union([z.string(), z.number()]).nullish(),
  error: z.union([z.looseObject({ message: z.string().nullish(), code: z.string().nullish() }), z.string()]).nullish(),
});
export type OpenAIVideoWire = z.infer<typeof openAIVideoWireSchema>;
