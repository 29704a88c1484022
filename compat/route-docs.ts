import { z } from 'zod';
import { chatCompletionRequestSchema } from '../server/providers/openai/openai.wire.js';
import { countTokensRequestSchema, messagesRequestSchema } from '../server/providers/anthropic/anthropic.wire.js';
import { compactRequestSchema, responsesRequestSchema } from '../server/translate/responses/responses.wire.js';
import {
  SPEECH_RESPONSE_FORMATS,
  speechRequestSchema,
  transcriptionRequestSchema,
  translationRequestSchema,
} from '../server/providers/openai/openai-audio.wire.js';
// The content type of each format (GAPS.md "Audio"), as the mock produces it.
import { SPEECH_CONTENT_TYPES } from '../server/providers/mock/media/mock-speech.js';
import { videoCreateRequestSchema, videoSchema } from '../server/providers/openai/openai-videos.wire.js';
import { imageEditFormSchema, imageGenerationRequestSchema } from '../server/providers/openai/openai-images.wire.js';
import { embeddingRequestSchema } from '../server/providers/openai/openai-embeddings.wire.js';
import { moderationRequestSchema } from '../server/providers/openai/openai-moderations.wire.js';

/** A multipart form as documented: the upload field is a file, not the upload id the procedure sees. */
function documentedForm(schema: z.ZodObject, fileField: string): z.ZodType {
  return schema.extend({ [fileField]: z.string().meta({ format: 'binary', description: 'The audio (a file part): non-empty, at most 25 MiB; flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav or webm, judged by its bytes.' }) });
}

const binaryAudio = { schema: { type: 'string', format: 'binary' } };
const transcriptAnswers = {
  'application/json': {},
  'text/plain': { schema: { type: 'string', description: 'text, srt or vtt by response_format' } },
};

/**
 * Schemas of the routes whose procedures cannot carry an output schema (JSON
 * or SSE answers, bytes, forms): `input` is the JSON or multipart body,
 * `answers` the 200 content by type when it is not JSON.
 */
export const ROUTE_DOCS: Record<string, { input?: z.ZodType; output?: z.ZodType; answers?: Record<string, object> }> = {
  'POST /v1/chat/completions': { input: chatCompletionRequestSchema },
  'POST /v1/messages': { input: messagesRequestSchema },
  'POST /v1/messages/count_tokens': { input: countTokensRequestSchema },
  'POST /v1/responses': { input: responsesRequestSchema },
  'POST /v1/responses/compact': { input: compactRequestSchema },
  'POST /v1/images/generations': { input: imageGenerationRequestSchema },
  'POST /v1/audio/speech': {
    input: speechRequestSchema,
    answers: Object.fromEntries(SPEECH_RESPONSE_FORMATS.map((format) => [SPEECH_CONTENT_TYPES[format], binaryAudio])),
  },
  'POST /v1/audio/transcriptions': { input: documentedForm(transcriptionRequestSchema, 'file'), answers: transcriptAnswers },
  'POST /v1/audio/translations': { input: documentedForm(translationRequestSchema, 'file'), answers: transcriptAnswers },
  'POST /v1/videos': { input: videoCreateRequestSchema, output: videoSchema },
  'POST /v1/images/edits': { input: imageEditFormSchema },
  'POST /v1/embeddings': { input: embeddingRequestSchema },
  'POST /v1/moderations': { input: moderationRequestSchema },
};
