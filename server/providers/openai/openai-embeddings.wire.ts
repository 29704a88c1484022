/**
 * `POST /v1/embeddings` (SPEC "POST /embeddings", "Embedding list"), in
 * OpenAI's field names. `input` takes every form openai-node accepts: a
 * string, an array of strings, an array of token ids, or an array of token
 * id arrays.
 *
 * @see https://platform.openai.com/docs/api-reference/embeddings/create
 */
import { z } from 'zod';

/** Most inputs of one request (OpenAI's limit). */
export const MAX_EMBEDDING_INPUTS = 2048;

/** Most tokens of one request, all inputs together (OpenAI's limit). */
export const MAX_EMBEDDING_REQUEST_TOKENS = 300_000;

const tokenId = z.number().int().min(0).max(0x7fffffff);
const text = z.string().min(1, 'an input must not be empty');
const tokens = z.array(tokenId).min(1, 'a token array must not be empty');

export const embeddingRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([
    text,
    z.array(text).min(1, 'the input array must not be empty').max(MAX_EMBEDDING_INPUTS, `at most ${MAX_EMBEDDING_INPUTS} inputs`),
    tokens,
    z.array(tokens).min(1, 'the input array must not be empty').max(MAX_EMBEDDING_INPUTS, `at most ${MAX_EMBEDDING_INPUTS} inputs`),
  ]),
  encoding_format: z.enum(['float', 'base64']).nullish(),
  dimensions: z.number().int().min(1).nullish(),
  user: z.string().nullish(),
});
export type EmbeddingRequest = z.infer<typeof embeddingRequestSchema>;

/** One input as the gateway counts and embeds it: a text, or token ids. */
export type EmbeddingInput = string | readonly number[];

/** The inputs of a request as a list (a single string or token array is one input). */
export function listEmbeddingInputs(input: EmbeddingRequest['input']): EmbeddingInput[] {
  if (typeof input === 'string') return [input];
  if (input.length > 0 && typeof input[0] === 'number') return [input as number[]];
  return input as EmbeddingInput[];
}

/** One vector: floats, or base64 of little-endian float32 (`encoding_format: base64`). */
export interface EmbeddingItem {
  object: 'embedding';
  index: number;
  embedding: number[] | string;
}

/** SPEC "Embedding list". */
export interface EmbeddingList {
  object: 'list';
  data: EmbeddingItem[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
  [field: string]: unknown;
}
