import { apiKeyProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import type { BinaryAnswer } from '../../server/answers.js';
import { speechRequestSchema, transcriptionRequestSchema, translationRequestSchema } from '../../server/providers/openai/openai-audio.wire.js';
import { createSpeech } from '../../server/audio/speech.service.js';
import { transcribeAudio, translateAudio, type TranscriptionAnswer } from '../../server/audio/transcription.service.js';
import { answerOf } from '../shared/answer.schema.js';

export const audioRouter = router({
  /** POST /v1/audio/speech: audio bytes as they are made (not over plain /trpc HTTP). */
  speech: apiKeyProcedure
    .input(speechRequestSchema)
    .output(answerOf<BinaryAnswer>())
    .mutation(({ ctx, input }) => createSpeech(ctx, input)),
  /** POST /v1/audio/transcriptions: `file` is the id of an upload of this request. */
  transcriptions: apiKeyProcedure
    .input(transcriptionRequestSchema)
    .output(answerOf<TranscriptionAnswer>())
    .mutation(({ ctx, input }) => transcribeAudio(ctx, input)),
  /** POST /v1/audio/translations: English text from audio in any of SPEC's input languages. */
  translations: apiKeyProcedure
    .input(translationRequestSchema)
    .output(answerOf<TranscriptionAnswer>())
    .mutation(({ ctx, input }) => translateAudio(ctx, input)),
});
