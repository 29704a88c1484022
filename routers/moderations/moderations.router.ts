import { apiKeyProcedure } from '../../server/procedures/index.js';
import { router } from '../../server/trpc.js';
import type { JsonAnswer } from '../../server/answers.js';
import { moderationRequestSchema, type ModerationResult } from '../../server/providers/openai/openai-moderations.wire.js';
import { createModeration } from '../../server/moderation/moderations.service.js';
import { answerOf } from '../shared/answer.schema.js';

export const moderationsRouter = router({
  /** POST /v1/moderations: a Moderation result, one item per input. */
  create: apiKeyProcedure
    .input(moderationRequestSchema)
    .output(answerOf<JsonAnswer<ModerationResult>>())
    .mutation(({ ctx, input }) => createModeration(ctx, input)),
});
