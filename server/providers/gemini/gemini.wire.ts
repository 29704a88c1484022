/**
 * The Gemini `generateContent` wire format (Gemini API and Vertex AI share
 * it): lenient schemas of the provider's answers, limited to the fields we
 * read. Field names are Google's, exactly; every field is `nullish` because
 * Google leaves out whatever is empty and adds fields over time.
 *
 * @see https://ai.google.dev/api/generate-content
 * @see https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/v1/GenerateContentResponse
 */
import { z } from 'zod';

export const geminiPartWireSchema = z.looseObject({
  text: z.string().nullish(),
  /** The part is a thought summary, not answer text. */
  thought: z.boolean().nullish(),
  /** Opaque; must be sent back with the part it came on (Gemini 3 refuses function calls replayed without it). */
  thoughtSignature: z.string().nullish(),
  functionCall: z
    .looseObject({
      id: z.string().nullish(),
      name: z.string().nullish(),
      args: z.record(z.string(), z.unknown()).nullish(),
    })
    .nullish(),
  inlineData: z.looseObject({ mimeType: z.string().nullish(), data: z.string().nullish() }).nullish(),
});
export type GeminiPartWire = z.infer<typeof geminiPartWireSchema>;

export const geminiUsageWireSchema = z.looseObject({
  promptTokenCount: z.number().nullish(),
  candidatesTokenCount: z.number().nullish(),
  totalTokenCount: z.number().nullish(),
  cachedContentTokenCount: z.number().nullish(),
  thoughtsTokenCount: z.number().nullish(),
  toolUsePromptTokenCount: z.number().nullish(),
});
export type GeminiUsageWire = z.infer<typeof geminiUsageWireSchema>;

export const geminiCandidateWireSchema = z.looseObject({
  content: z.looseObject({ role: z.string().nullish(), parts: z.array(geminiPartWireSchema).nullish() }).nullish(),
  finishReason: z.string().nullish(),
  finishMessage: z.string().nullish(),
  index: z.number().nullish(),
});

/** Google's error object (`google.rpc.Status` as JSON). */
export const geminiErrorObjectWireSchema = z.looseObject({
  code: z.number().nullish(),
  message: z.string().nullish(),
  status: z.string().nullish(),
  details: z.array(z.looseObject({ '@type': z.string().nullish(), retryDelay: z.string().nullish() })).nullish(),
});

export const geminiResponseWireSchema = z.looseObject({
  candidates: z.array(geminiCandidateWireSchema).nullish(),
  promptFeedback: z.looseObject({ blockReason: z.string().nullish() }).nullish(),
  usageMetadata: geminiUsageWireSchema.nullish(),
  modelVersion: z.string().nullish(),
  responseId: z.string().nullish(),
  /** A failure inside a stream arrives as a chunk holding only this. */
  error: geminiErrorObjectWireSchema.nullish(),
});
export type GeminiResponseWire = z.infer<typeof geminiResponseWireSchema>;

/** `{error: {code, message, status, details}}`; Vertex wraps it in a one-element array on some paths. */
export const geminiErrorWireSchema = z.looseObject({ error: geminiErrorObjectWireSchema });

/** `models/{m}:countTokens`. */
export const geminiCountTokensWireSchema = z.looseObject({ totalTokens: z.number().int().nonnegative() });

/** `models/{m}:batchEmbedContents` (Gemini API). */
export const geminiBatchEmbedWireSchema = z.looseObject({
  embeddings: z.array(z.looseObject({ values: z.array(z.number()) })),
});

/** `…/models/{m}:predict` on Vertex AI (its embeddings endpoint). */
export const vertexPredictEmbeddingsWireSchema = z.looseObject({
  predictions: z.array(
    z.looseObject({
      embeddings: z.looseObject({
        values: z.array(z.number()),
        statistics: z.looseObject({ token_count: z.number().nullish() }).nullish(),
      }),
    }),
  ),
});
