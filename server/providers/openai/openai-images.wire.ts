import { z } from 'zod';

export const IMAGE_SIZES = ['256x256', '512x512', '1024x1024', '1536x1024', '1024x1536', '2048x2048', '4096x4096', 'auto'] as const;

/** `POST /v1/images/generations` (SPEC): strict on the listed bounds, lenient on newer fields. */
export const imageGenerationRequestSchema = z.looseObject({
  model: z.string().min(1),
  prompt: z.string().min(1).max(32_000),
  n: z.number().int().min(1).max(10).nullish(),
  size: z.enum(IMAGE_SIZES).nullish(),
  response_format: z.enum(['url', 'b64_json']).nullish(),
  quality: z.string().min(1).nullish(),
  style: z.enum(['vivid', 'natural']).nullish(),
  stream: z.boolean().nullish(),
});
export type ImageGenerationRequest = z.infer<typeof imageGenerationRequestSchema>;

/** `POST /v1/images/generations` and `/v1/images/edits` answer (SPEC "Image list"). */
export interface ImagesResponse {
  created: number;
  data: Array<{ url?: string; b64_json?: string; revised_prompt?: string }>;
  [field: string]: unknown;
}
