/**
 * `POST /v1/moderations` (SPEC "POST /moderations", "Moderation result"), in
 * OpenAI's field names. Besides SPEC's string and array of strings, `input`
 * takes OpenAI's multimodal form (an array of `{ type: 'text', text }` and
 * `{ type: 'image_url', image_url: { url } }` items, classified as one input).
 *
 * @see https://platform.openai.com/docs/api-reference/moderations/create
 */
import { z } from 'zod';
import type { ModerationCategory } from '../../classifier/moderation-categories.js';

/** The model when the request names none (SPEC). */
export const DEFAULT_MODERATION_MODEL = 'text-moderation-latest';

/** Most inputs of one request. */
export const MAX_MODERATION_INPUTS = 2048;

const textItem = z.looseObject({ type: z.literal('text'), text: z.string() });
const imageItem = z.looseObject({ type: z.literal('image_url'), image_url: z.looseObject({ url: z.string().min(1) }) });

export const moderationRequestSchema = z.looseObject({
  input: z.union([
    z.string(),
    z.array(z.string()).min(1, 'the input array must not be empty').max(MAX_MODERATION_INPUTS, `at most ${MAX_MODERATION_INPUTS} inputs`),
    z.array(z.discriminatedUnion('type', [textItem, imageItem])).min(1, 'the input array must not be empty').max(MAX_MODERATION_INPUTS, `at most ${MAX_MODERATION_INPUTS} items`),
  ]),
  model: z.string().min(1).nullish(),
});
export type ModerationRequest = z.infer<typeof moderationRequestSchema>;

/** One Moderation result item. */
export interface ModerationResultItem {
  flagged: boolean;
  categories: Record<ModerationCategory, boolean>;
  category_scores: Record<ModerationCategory, number>;
  /** The multimodal form only: which kinds of input each category was judged on (never `image` here). */
  category_applied_input_types?: Record<ModerationCategory, string[]>;
}

/** SPEC "Moderation result". */
export interface ModerationResult {
  id: string;
  model: string;
  results: ModerationResultItem[];
  [field: string]: unknown;
}

/**
 * What a moderation classifies: one entry per result, each the texts of that
 * input (a string is one text; a multimodal array is one input made of its
 * text items), and the positions of image items the gateway cannot classify.
 */
export interface ModerationInputs {
  texts: string[][];
  multimodal: boolean;
  /** Indexes of `image_url` items (multimodal form). */
  imageItems: number[];
}

export function listModerationInputs(input: ModerationRequest['input']): ModerationInputs {
  if (typeof input === 'string') return { texts: [[input]], multimodal: false, imageItems: [] };
  if (input.every((item) => typeof item === 'string')) return { texts: (input as string[]).map((text) => [text]), multimodal: false, imageItems: [] };
  const texts: string[] = [];
  const imageItems: number[] = [];
  (input as Array<{ type: string; text?: string }>).forEach((item, index) => {
    if (item.type === 'text') texts.push(item.text ?? '');
    else imageItems.push(index);
  });
  return { texts: [texts], multimodal: true, imageItems };
}
