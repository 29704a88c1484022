import { countTokensRequestSchema, messagesRequestSchema, type CountTokensResponse, type MessagesResponse } from '../../server/providers/anthropic/anthropic.wire.js';
import { apiKeyProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import { countTokens } from '../../server/generation/count-tokens.js';
import { messagesCodec, type MessagesStreamEvent } from '../../server/generation/messages.codec.js';
import { runGeneration, type GenerationAnswer } from '../../server/generation/generate.js';
import { z } from 'zod';
import { answerOf } from '../shared/answer.schema.js';

export type MessagesAnswer = GenerationAnswer<MessagesResponse, MessagesStreamEvent>;

export const messagesRouter = router({
  /** POST /v1/messages: a message, or the Anthropic event stream when `stream` is true. */
  create: apiKeyProcedure
    .input(messagesRequestSchema)
    .output(answerOf<MessagesAnswer>())
    .mutation(({ ctx, input }) => runGeneration(ctx, { endpoint: '/v1/messages', codec: messagesCodec, body: input })),

  /** POST /v1/messages/count_tokens: never billed. */
  countTokens: apiKeyProcedure
    .input(countTokensRequestSchema)
    .output(z.object({ input_tokens: z.number().int().nonnegative() }) satisfies z.ZodType<CountTokensResponse>)
    .mutation(({ ctx, input }) => countTokens(ctx, input)),
});
