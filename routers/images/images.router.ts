import { apiKeyProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import type { JsonAnswer } from '../../server/answers.js';
import { imageGenerationRequestSchema, type ImagesResponse } from '../../server/providers/openai/openai-images.wire.js';
import { generateImages } from '../../server/images/images.service.js';
import { answerOf } from '../shared/answer.schema.js';

export const imagesRouter = router({
  /** POST /v1/images/generations: not for free-plan accounts. */
  generate: apiKeyProcedure
    .input(imageGenerationRequestSchema)
    .output(answerOf<JsonAnswer<ImagesResponse>>())
    .mutation(({ ctx, input }) => generateImages(ctx, input)),
});
