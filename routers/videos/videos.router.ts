import { apiKeyProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import type { BinaryAnswer } from '../../server/answers.js';
import {
  videoContentQuerySchema,
  videoCreateRequestSchema,
  videoDeleteResultSchema,
  videoIdInputSchema,
  videoListQuerySchema,
  videoListSchema,
  videoSchema,
} from '../../server/providers/openai/openai-videos.wire.js';
import { createVideo, deleteVideo, getVideo, listVideos, readVideoContent } from '../../server/videos/videos.service.js';
import { answerOf } from '../shared/answer.schema.js';

export const videosRouter = router({
  /** POST /v1/videos: answered at once as `pending`; the video is generated in the background. */
  create: apiKeyProcedure
    .input(videoCreateRequestSchema)
    .output(videoSchema)
    .mutation(({ ctx, input }) => createVideo(ctx, input)),

  /** GET /v1/videos: the caller's account's videos, newest first. */
  list: apiKeyProcedure
    .input(videoListQuerySchema)
    .output(videoListSchema)
    .query(({ ctx, input }) => listVideos(ctx, input)),

  /** GET /v1/videos/{id} */
  get: apiKeyProcedure
    .input(videoIdInputSchema)
    .output(videoSchema)
    .query(({ ctx, input }) => getVideo(ctx, input.id)),

  /** GET /v1/videos/{id}/content: the file (or its thumbnail or spritesheet), with Range support. */
  content: apiKeyProcedure
    .input(videoContentQuerySchema)
    .output(answerOf<BinaryAnswer>())
    .query(({ ctx, input }) => readVideoContent(ctx, input)),

  /** DELETE /v1/videos/{id}: the video and its files, for good. */
  delete: apiKeyProcedure
    .input(videoIdInputSchema)
    .output(videoDeleteResultSchema)
    .mutation(({ ctx, input }) => deleteVideo(ctx, input.id)),
});
