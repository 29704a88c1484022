import { z } from 'zod';

const accountId = z.string().min(1).max(200);
const family = z.string().min(1).max(64);
const note = z.string().max(1000);
const isoTimestamp = z.iso.datetime({ offset: true });
const reviewAction = z.enum(['dismiss', 'warn', 'revoke_grant', 'disable_account']);

export const grantInputSchema = z.object({ accountId, family, expiresAt: isoTimestamp.optional(), note: note.optional() });
export const revokeInputSchema = z.object({ accountId, family, note: note.optional() });
export const listGrantsInputSchema = z.object({ accountId: accountId.optional(), family: family.optional(), includeInactive: z.boolean().optional() }).default({});

export const grantViewSchema = z.object({
  id: z.string(),
  accountId: z.string(),
  family: z.string(),
  grantedBy: z.string(),
  grantedAt: z.string(),
  expiresAt: z.string().nullable(),
  note: z.string().nullable(),
  revokedAt: z.string().nullable(),
  revokedBy: z.string().nullable(),
  revokeNote: z.string().nullable(),
  active: z.boolean(),
});

export const listReviewsInputSchema = z
  .object({
    decision: z.enum(['flag', 'reject']).optional(),
    status: z.enum(['open', 'resolved']).optional(),
    accountId: accountId.optional(),
    limit: z.number().int().min(1).max(200).default(50),
    cursor: z.string().max(32).optional(),
  })
  .default({ limit: 50 });
export const reviewIdInputSchema = z.object({ id: z.string().min(1).max(100) });
export const resolveReviewInputSchema = z.object({ id: z.string().min(1).max(100), action: reviewAction, note: note.optional() });

export const reviewItemSchema = z.object({
  id: z.string(),
  accountId: z.string(),
  keyId: z.string().nullable(),
  model: z.string(),
  family: z.string(),
  endpoint: z.string(),
  requestId: z.string(),
  clientAddress: z.string().nullable(),
  createdAt: z.string(),
  decision: z.enum(['flag', 'reject']),
  ruleId: z.string().nullable(),
  matchedRules: z.array(z.string()),
  categories: z.array(z.string()),
  scores: z.record(z.string(), z.number()),
  roleplay: z.boolean(),
  /** At most 400 characters of the prompt. */
  excerpt: z.string(),
  status: z.enum(['open', 'resolved']),
  resolution: reviewAction.nullable(),
  resolvedBy: z.string().nullable(),
  resolvedAt: z.string().nullable(),
  resolutionNote: z.string().nullable(),
});

export const reviewActionSchema = z.object({ action: reviewAction, actor: z.string(), note: z.string().nullable(), at: z.string() });

export const reviewListSchema = z.object({ items: z.array(reviewItemSchema), nextCursor: z.string().nullable() });

export const reviewDetailSchema = z.object({
  item: reviewItemSchema,
  actions: z.array(reviewActionSchema),
  account: z.object({
    id: z.string(),
    name: z.string(),
    plan: z.string(),
    disabled: z.boolean(),
    createdAt: z.string(),
    grants: z.array(grantViewSchema),
    warnings: z.number().int(),
    openReviews: z.number().int(),
    totalReviews: z.number().int(),
  }),
  recentUsage: z.array(
    z.object({
      requestId: z.string(),
      model: z.string(),
      endpoint: z.string(),
      status: z.number().int(),
      errorCode: z.string().nullable(),
      stream: z.boolean(),
      inputTokens: z.number().int(),
      outputTokens: z.number().int(),
      cost: z.number(),
      createdAt: z.string(),
    }),
  ),
});

export const resolveResultSchema = z.object({ item: reviewItemSchema, actions: z.array(reviewActionSchema) });

export const familyViewSchema = z.object({
  name: z.string(),
  description: z.string().nullable(),
  /** Whether requests of this family pass the usage check (false when the catalog turns it off). */
  usageChecks: z.boolean(),
});
