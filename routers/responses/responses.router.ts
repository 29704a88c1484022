import { compactRequestSchema, responsesRequestSchema } from '../../server/translate/responses/responses.wire.js';
import type { ResponseObject, ResponsesStreamEvent } from '../../server/translate/responses/responses-object.wire.js';
import { apiKeyProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import type { JsonAnswer } from '../../server/answers.js';
import type { GenerationAnswer } from '../../server/generation/generate.js';
import { compactResponse, createResponse } from '../../server/generation/responses.service.js';
import { answerOf } from '../shared/answer.schema.js';

export type ResponsesAnswer = GenerationAnswer<ResponseObject, ResponsesStreamEvent>;

export const responsesRouter = router({
  /** POST /v1/responses: a Responses object, or named events when `stream` is true. */
  create: apiKeyProcedure
    .input(responsesRequestSchema)
    .output(answerOf<ResponsesAnswer>())
    .mutation(({ ctx, input }) => createResponse(ctx, input)),
  /** POST /v1/responses/compact: billed, never streamed. */
  compact: apiKeyProcedure
    .input(compactRequestSchema)
    .output(answerOf<JsonAnswer<ResponseObject>>())
    .mutation(({ ctx, input }) => compactResponse(ctx, input)),
});
