import { countTokensRequestSchema, messagesRequestSchema } from '../../server/providers/anthropic/anthropic.wire.js';
import { apiKeyProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import { countTokens } from '../../server/generation/count-tokens.js';
import { messagesCodec } from '../../server/generation/messages.codec.js';
import { runGeneration } from '../../server/generation/generate.js';
import { toGenerationContext } from '../../server/generation/generation-context.js';

export const messagesRouter = router({
  /** POST /v1/messages: a message, or the Anthropic event stream when `stream` is true. */
  create: apiKeyProcedure
    .input(messagesRequestSchema)
    .mutation(({ ctx, input }) => runGeneration(toGenerationContext(ctx), { endpoint: '/v1/messages', codec: messagesCodec, body: input })),

  /** POST /v1/messages/count_tokens: never billed. */
  countTokens: apiKeyProcedure.input(countTokensRequestSchema).mutation(({ ctx, input }) => countTokens(toGenerationContext(ctx), input)),
});
