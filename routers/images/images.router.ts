import { z } from 'zod';
import { apiKeyProcedure, publicProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import type { BinaryAnswer } from '../../server/answers.js';
import { imageEditRequestSchema, imageGenerationRequestSchema } from '../../server/providers/openai/openai-images.wire.js';
import { generateImages } from '../../server/images/images.service.js';
import { editImages } from '../../server/images/image-edits.service.js';
import { readImageFile } from '../../server/images/image-files.service.js';
import type { ImagesAnswer } from '../../server/images/image-requests.js';
import { answerOf } from '../shared/answer.schema.js';

export const imagesRouter = router({
  /** POST /v1/images/generations: not for free-plan accounts; an Image list, or its events when `stream` is true. */
  generate: apiKeyProcedure
    .input(imageGenerationRequestSchema)
    .output(answerOf<ImagesAnswer>())
    .mutation(({ ctx, input }) => generateImages(ctx, input)),
  /** POST /v1/images/edits (multipart: files by upload id): not for free-plan accounts. */
  edit: apiKeyProcedure
    .input(imageEditRequestSchema)
    .output(answerOf<ImagesAnswer>())
    .mutation(({ ctx, input }) => editImages(ctx, input)),
  /** GET /v1/images/files/{id}: a generated image by its signed, expiring link (no API key). */
  file: publicProcedure
    .input(z.object({ id: z.string().max(100), expires: z.string().max(20), signature: z.string().max(100) }))
    .output(answerOf<BinaryAnswer>())
    .query(({ ctx, input }) => readImageFile(ctx.services, input, ctx.headers)),
});
