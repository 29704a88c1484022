import { chatCompletionRequestSchema } from '../../server/providers/openai/openai.wire.js';
import { apiKeyProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import { chatCodec } from '../../server/generation/chat.codec.js';
import { runGeneration } from '../../server/generation/generate.js';
import { toGenerationContext } from '../../server/generation/generation-context.js';

export const chatRouter = router({
  /** POST /v1/chat/completions: a chat completion, or a stream of chunks when `stream` is true. */
  completions: apiKeyProcedure
    .input(chatCompletionRequestSchema)
    .mutation(({ ctx, input }) => runGeneration(toGenerationContext(ctx), { endpoint: '/v1/chat/completions', codec: chatCodec, body: input })),
});
