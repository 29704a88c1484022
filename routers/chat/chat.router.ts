import { chatCompletionRequestSchema, type ChatCompletion } from '../../server/providers/openai/openai.wire.js';
import { apiKeyProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import { chatCodec, type ChatStreamEvent } from '../../server/generation/chat.codec.js';
import { runGeneration, type GenerationAnswer } from '../../server/generation/generate.js';
import { answerOf } from '../shared/answer.schema.js';

export type ChatCompletionAnswer = GenerationAnswer<ChatCompletion, ChatStreamEvent>;

export const chatRouter = router({
  /** POST /v1/chat/completions: a chat completion, or a stream of chunks when `stream` is true. */
  completions: apiKeyProcedure
    .input(chatCompletionRequestSchema)
    .output(answerOf<ChatCompletionAnswer>())
    .mutation(({ ctx, input }) => runGeneration(ctx, { endpoint: '/v1/chat/completions', codec: chatCodec, body: input })),
});
