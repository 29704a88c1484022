import { apiKeyProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import type { JsonAnswer } from '../../server/answers.js';
import { embeddingRequestSchema, type EmbeddingList } from '../../server/providers/openai/openai-embeddings.wire.js';
import { createEmbeddings } from '../../server/embeddings/embeddings.service.js';
import { answerOf } from '../shared/answer.schema.js';

export const embeddingsRouter = router({
  /** POST /v1/embeddings: an Embedding list, billed per input token. */
  create: apiKeyProcedure
    .input(embeddingRequestSchema)
    .output(answerOf<JsonAnswer<EmbeddingList>>())
    .mutation(({ ctx, input }) => createEmbeddings(ctx, input)),
});
