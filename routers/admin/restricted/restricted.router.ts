import { grantAccess, listGrantViews, revokeAccess } from '../../../server/restricted/grants.js';
import { getReview, listReviews, resolveReview } from '../../../server/restricted/review.service.js';
import { adminProcedure } from '../../../server/procedures/index.js';
import { router } from '../../../server/trpc.js';
import { z } from 'zod';
import {
  grantInputSchema,
  grantViewSchema,
  listGrantsInputSchema,
  listReviewsInputSchema,
  resolveResultSchema,
  resolveReviewInputSchema,
  familyViewSchema,
  reviewDetailSchema,
  reviewIdInputSchema,
  reviewListSchema,
  revokeInputSchema,
} from './restricted.schema.js';

/**
 * Who an admin action is recorded as taken by: the staff user of a dashboard session
 * (`staff:<email>`, set by the admin middleware), else the admin token itself.
 */
function actorOf(ctx: object): string {
  const actor = (ctx as { adminActor?: unknown }).adminActor;
  return typeof actor === 'string' && actor !== '' ? actor : 'admin-token';
}

const grantsRouter = router({
  grant: adminProcedure
    .input(grantInputSchema)
    .output(grantViewSchema)
    .mutation(({ ctx, input }) =>
      grantAccess(ctx.services.db, ctx.services.restricted, { accountId: input.accountId, family: input.family, expiresAt: input.expiresAt ? new Date(input.expiresAt) : null, note: input.note }, actorOf(ctx)),
    ),
  revoke: adminProcedure
    .input(revokeInputSchema)
    .output(grantViewSchema)
    .mutation(({ ctx, input }) => revokeAccess(ctx.services.db, input, actorOf(ctx))),
  list: adminProcedure
    .input(listGrantsInputSchema)
    .output(z.array(grantViewSchema))
    .query(({ ctx, input }) => listGrantViews(ctx.services.db, input)),
});

const reviewRouter = router({
  list: adminProcedure
    .input(listReviewsInputSchema)
    .output(reviewListSchema)
    .query(({ ctx, input }) => listReviews(ctx.services.db, input)),
  get: adminProcedure
    .input(reviewIdInputSchema)
    .output(reviewDetailSchema)
    .query(({ ctx, input }) => getReview(ctx.services.db, input.id)),
  resolve: adminProcedure
    .input(resolveReviewInputSchema)
    .output(resolveResultSchema)
    .mutation(({ ctx, input }) => resolveReview(ctx.services, input, actorOf(ctx))),
});

const familiesRouter = router({
  /** The catalog's restricted families: what a grant can be given for. */
  list: adminProcedure
    .output(z.array(familyViewSchema))
    .query(({ ctx }) => ctx.services.restricted.list().map((family) => ({ name: family.name, description: family.description, usageChecks: family.usageRules !== null }))),
});

/** `admin.restricted.*`: access grants to restricted families, the families themselves and the usage review queue. */
export const restrictedAdminRouter = router({ grants: grantsRouter, review: reviewRouter, families: familiesRouter });
