import { compactRequestSchema, responsesRequestSchema } from '../../server/translate/responses/responses.wire.js';
import { apiKeyProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import { toGenerationContext } from '../../server/generation/generation-context.js';
import { compactResponse, createResponse } from '../../server/generation/responses.service.js';

export const responsesRouter = router({
  /** POST /v1/responses: a Responses object, or named events when `stream` is true. */
  create: apiKeyProcedure.input(responsesRequestSchema).mutation(({ ctx, input }) => createResponse(toGenerationContext(ctx), input)),
  /** POST /v1/responses/compact: billed, never streamed. */
  compact: apiKeyProcedure.input(compactRequestSchema).mutation(({ ctx, input }) => compactResponse(toGenerationContext(ctx), input)),
});
