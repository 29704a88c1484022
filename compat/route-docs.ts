import type { z } from 'zod';
import { chatCompletionRequestSchema } from '../server/providers/openai/openai.wire.js';
import { countTokensRequestSchema, messagesRequestSchema } from '../server/providers/anthropic/anthropic.wire.js';
import { compactRequestSchema, responsesRequestSchema } from '../server/translate/responses/responses.wire.js';
import { imageEditFormSchema, imageGenerationRequestSchema } from '../server/providers/openai/openai-images.wire.js';
import { embeddingRequestSchema } from '../server/providers/openai/openai-embeddings.wire.js';
import { moderationRequestSchema } from '../server/providers/openai/openai-moderations.wire.js';

/** Schemas of the routes whose procedures cannot carry an output schema (JSON or SSE answers). */
export const ROUTE_DOCS: Record<string, { input?: z.ZodType; output?: z.ZodType }> = {
  'POST /v1/chat/completions': { input: chatCompletionRequestSchema },
  'POST /v1/messages': { input: messagesRequestSchema },
  'POST /v1/messages/count_tokens': { input: countTokensRequestSchema },
  'POST /v1/responses': { input: responsesRequestSchema },
  'POST /v1/responses/compact': { input: compactRequestSchema },
  'POST /v1/images/generations': { input: imageGenerationRequestSchema },
  'POST /v1/images/edits': { input: imageEditFormSchema },
  'POST /v1/embeddings': { input: embeddingRequestSchema },
  'POST /v1/moderations': { input: moderationRequestSchema },
};
