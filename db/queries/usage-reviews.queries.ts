import type { Insertable, Selectable } from 'kysely';
import type { Database, ReviewAction } from '../schema.js';
import type { Executor } from './executor.js';

export type UsageReviewRow = Selectable<Database['usage_reviews']>;
export type UsageReviewActionRow = Selectable<Database['usage_review_actions']>;

export async function insertUsageReview(db: Executor, row: Insertable<Database['usage_reviews']>): Promise<void> {
  await db.insertInto('usage_reviews').values(row).execute();
}

export interface ReviewFilter {
  decision?: 'flag' | 'reject';
  status?: 'open' | 'resolved';
  accountId?: string;
  /** Items older than this `seq` (the previous page's cursor). */
  beforeSeq?: number;
  limit: number;
}

/** The review queue, newest first. */
export function listUsageReviews(db: Executor, filter: ReviewFilter): Promise<UsageReviewRow[]> {
  let query = db.selectFrom('usage_reviews').selectAll();
  if (filter.decision !== undefined) query = query.where('decision', '=', filter.decision);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.accountId !== undefined) query = query.where('account_id', '=', filter.accountId);
  if (filter.beforeSeq !== undefined) query = query.where('seq', '<', filter.beforeSeq as never);
  return query.orderBy('seq', 'desc').limit(filter.limit).execute();
}

export function findUsageReview(db: Executor, id: string, options: { forUpdate?: boolean } = {}): Promise<UsageReviewRow | undefined> {
  const query = db.selectFrom('usage_reviews').selectAll().where('id', '=', id);
  return (options.forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

export function listReviewActions(db: Executor, reviewId: string): Promise<UsageReviewActionRow[]> {
  return db.selectFrom('usage_review_actions').selectAll().where('review_id', '=', reviewId).orderBy('id').execute();
}

export async function recordReviewAction(
  db: Executor,
  action: { reviewId: string; accountId: string; action: ReviewAction; actor: string; note: string | null },
): Promise<UsageReviewActionRow> {
  return db
    .insertInto('usage_review_actions')
    .values({ review_id: action.reviewId, account_id: action.accountId, action: action.action, actor: action.actor, note: action.note })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function markReviewResolved(db: Executor, id: string, action: ReviewAction, actor: string, note: string | null, at: Date): Promise<UsageReviewRow> {
  return db
    .updateTable('usage_reviews')
    .set({ status: 'resolved', resolution: action, resolved_by: actor, resolved_at: at, resolution_note: note })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Per account: warnings given so far, and its review items open and in all. */
export async function reviewHistoryOf(db: Executor, accountId: string): Promise<{ warnings: number; open: number; total: number }> {
  const [warnings, counts] = await Promise.all([
    db
      .selectFrom('usage_review_actions')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('account_id', '=', accountId)
      .where('action', '=', 'warn')
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('usage_reviews')
      .select((eb) => [eb.fn.countAll<number>().as('total'), eb.fn.sum<number>(eb.case().when('status', '=', 'open').then(1).else(0).end()).as('open')])
      .where('account_id', '=', accountId)
      .executeTakeFirstOrThrow(),
  ]);
  return { warnings: Number(warnings.count), open: Number(counts.open ?? 0), total: Number(counts.total) };
}

/** The account's latest usage rows (any status), newest first. */
export function recentUsageOf(db: Executor, accountId: string, limit: number) {
  return db
    .selectFrom('usage')
    .select(['request_id', 'model', 'endpoint', 'status', 'error_code', 'stream', 'input_tokens', 'output_tokens', 'cost', 'created_at'])
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/**
 * The warnings staff gave an account, newest first: when, the family and rule of the item
 * warned about, the staff note. Nothing of the request itself (no excerpt, no model).
 */
export function warningsOf(db: Executor, accountId: string, limit: number) {
  return db
    .selectFrom('usage_review_actions as action')
    .innerJoin('usage_reviews as review', 'review.id', 'action.review_id')
    .select(['action.created_at', 'action.note', 'review.family', 'review.rule_id'])
    .where('action.account_id', '=', accountId)
    .where('review.account_id', '=', accountId)
    .where('action.action', '=', 'warn')
    .orderBy('action.id', 'desc')
    .limit(limit)
    .execute();
}
