import { apiKeyProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import { toGenerationContext } from '../../server/generation/generation-context.js';
import { imageGenerationRequestSchema } from '../../server/images/images.schema.js';
import { generateImages } from '../../server/images/images.service.js';

export const imagesRouter = router({
  /** POST /v1/images/generations: not for free-plan accounts. */
  generate: apiKeyProcedure.input(imageGenerationRequestSchema).mutation(({ ctx, input }) => generateImages(toGenerationContext(ctx), input)),
});
