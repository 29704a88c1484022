/**
 * The staff review queue of the restricted family: list and filter it, view an item with its
 * account's metadata and recent usage, resolve it. Each action is kept with who took it and
 * when; `revoke_grant` and `disable_account` take effect on every instance through the cache
 * channel, like any grant or account change.
 */
import type { Kysely } from 'kysely';
import { findAccount, updateAccountColumns } from '../../db/queries/accounts.queries.js';
import { listGrants } from '../../db/queries/access-grants.queries.js';
import {
  findUsageReview,
  listReviewActions,
  listUsageReviews,
  markReviewResolved,
  recentUsageOf,
  recordReviewAction,
  reviewHistoryOf,
  warningsOf,
  type UsageReviewActionRow,
  type UsageReviewRow,
} from '../../db/queries/usage-reviews.queries.js';
import type { Database, ReviewAction } from '../../db/schema.js';
import { microToCredits } from '../billing/money.js';
import { GatewayError } from '../errors.js';
import type { Logger } from '../logger.js';
import { announceAccount, revokeAccessGrant, toGrantView, type GrantView } from './grants.js';

export interface ReviewItemView {
  id: string;
  accountId: string;
  keyId: string | null;
  model: string;
  family: string;
  endpoint: string;
  requestId: string;
  clientAddress: string | null;
  createdAt: string;
  decision: 'flag' | 'reject';
  ruleId: string | null;
  matchedRules: string[];
  categories: string[];
  scores: Record<string, number>;
  roleplay: boolean;
  excerpt: string;
  status: 'open' | 'resolved';
  resolution: ReviewAction | null;
  resolvedBy: string | null;
  resolvedAt: string | null;
  resolutionNote: string | null;
}

export interface ReviewActionView {
  action: ReviewAction;
  actor: string;
  note: string | null;
  at: string;
}

export interface ReviewDetail {
  item: ReviewItemView;
  actions: ReviewActionView[];
  account: {
    id: string;
    name: string;
    plan: string;
    disabled: boolean;
    createdAt: string;
    grants: GrantView[];
    warnings: number;
    openReviews: number;
    totalReviews: number;
  };
  recentUsage: Array<{
    requestId: string;
    model: string;
    endpoint: string;
    status: number;
    errorCode: string | null;
    stream: boolean;
    inputTokens: number;
    outputTokens: number;
    /** Credits charged. */
    cost: number;
    createdAt: string;
  }>;
}

const iso = (value: Date | string): string => new Date(value).toISOString();

/** JSON columns arrive parsed from pg and as text from some drivers. */
function parsed<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

export function toReviewItemView(row: UsageReviewRow): ReviewItemView {
  return {
    id: row.id,
    accountId: row.account_id,
    keyId: row.key_id,
    model: row.model,
    family: row.family,
    endpoint: row.endpoint,
    requestId: row.request_id,
    clientAddress: row.client_address,
    createdAt: iso(row.created_at),
    decision: row.decision,
    ruleId: row.rule_id,
    matchedRules: parsed<string[]>(row.matched_rules),
    categories: parsed<string[]>(row.categories),
    scores: parsed<Record<string, number>>(row.scores),
    roleplay: row.roleplay,
    excerpt: row.excerpt,
    status: row.status,
    resolution: row.resolution,
    resolvedBy: row.resolved_by,
    resolvedAt: row.resolved_at === null ? null : iso(row.resolved_at),
    resolutionNote: row.resolution_note,
  };
}

function toActionView(row: UsageReviewActionRow): ReviewActionView {
  return { action: row.action, actor: row.actor, note: row.note, at: iso(row.created_at) };
}

/** Cursors are the `seq` of the last item of a page, opaque to callers. */
function readCursor(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const seq = /^[1-9]\d{0,15}$/.test(cursor) ? Number(cursor) : Number.NaN;
  if (!Number.isSafeInteger(seq)) throw new GatewayError('INVALID_REQUEST', 'cursor is not one this list handed out.', { param: 'cursor' });
  return seq;
}

export async function listReviews(
  db: Kysely<Database>,
  filter: { decision?: 'flag' | 'reject'; status?: 'open' | 'resolved'; accountId?: string; limit: number; cursor?: string },
): Promise<{ items: ReviewItemView[]; nextCursor: string | null }> {
  const rows = await listUsageReviews(db, {
    decision: filter.decision,
    status: filter.status,
    accountId: filter.accountId,
    beforeSeq: readCursor(filter.cursor),
    limit: filter.limit + 1,
  });
  const page = rows.slice(0, filter.limit);
  const nextCursor = rows.length > filter.limit ? String(page.at(-1)!.seq) : null;
  return { items: page.map(toReviewItemView), nextCursor };
}

const RECENT_USAGE_ROWS = 20;

export async function getReview(db: Kysely<Database>, id: string): Promise<ReviewDetail> {
  const row = await findUsageReview(db, id);
  if (!row) throw new GatewayError('NOT_FOUND', `No review item "${id}".`, { param: 'id' });
  const [account, actions, grants, history, usage] = await Promise.all([
    findAccount(db, row.account_id),
    listReviewActions(db, id),
    listGrants(db, { accountId: row.account_id, includeInactive: true, now: new Date(), limit: 100 }),
    reviewHistoryOf(db, row.account_id),
    recentUsageOf(db, row.account_id, RECENT_USAGE_ROWS),
  ]);
  if (!account) throw new GatewayError('NOT_FOUND', `No account "${row.account_id}".`, { param: 'id' });
  return {
    item: toReviewItemView(row),
    actions: actions.map(toActionView),
    account: {
      id: account.id,
      name: account.name,
      plan: account.plan,
      disabled: account.disabled,
      createdAt: iso(account.created_at),
      grants: grants.map((grant) => toGrantView(grant)),
      warnings: history.warnings,
      openReviews: history.open,
      totalReviews: history.total,
    },
    recentUsage: usage.map((entry) => ({
      requestId: entry.request_id,
      model: entry.model,
      endpoint: entry.endpoint,
      status: entry.status,
      errorCode: entry.error_code,
      stream: entry.stream,
      inputTokens: entry.input_tokens,
      outputTokens: entry.output_tokens,
      cost: microToCredits(entry.cost),
      createdAt: iso(entry.created_at),
    })),
  };
}

/**
 * Resolves an item with one action, in one transaction with the action's effect: `dismiss`
 * only records; `warn` records, and the account's people see it on their dashboard
 * ({@link accountWarnings}); `revoke_grant` revokes the account's grant on the item's family;
 * `disable_account` disables the account. A resolved item can be acted on again (a warning
 * followed by a revocation): every action is kept, the item shows the last.
 */
export async function resolveReview(
  { db, log }: { db: Kysely<Database>; log: Logger },
  input: { id: string; action: ReviewAction; note?: string },
  actor: string,
): Promise<{ item: ReviewItemView; actions: ReviewActionView[] }> {
  const note = input.note ?? null;
  const item = await db.transaction().execute(async (trx) => {
    const row = await findUsageReview(trx, input.id, { forUpdate: true });
    if (!row) throw new GatewayError('NOT_FOUND', `No review item "${input.id}".`, { param: 'id' });
    if (input.action === 'revoke_grant') {
      await revokeAccessGrant(trx, row.account_id, row.family, actor, note ?? `review ${row.id}`);
    } else if (input.action === 'disable_account') {
      await updateAccountColumns(trx, row.account_id, { disabled: true });
    }
    await recordReviewAction(trx, { reviewId: row.id, accountId: row.account_id, action: input.action, actor, note });
    return markReviewResolved(trx, row.id, input.action, actor, note, new Date());
  });
  if (input.action === 'revoke_grant' || input.action === 'disable_account') await announceAccount(db, item.account_id);
  // The item and its account and family: nothing of the request (its excerpt stays in the database).
  if (input.action === 'warn') log.info('restricted.review_warned', { reviewId: item.id, accountId: item.account_id, family: item.family });
  return { item: toReviewItemView(item), actions: (await listReviewActions(db, item.id)).map(toActionView) };
}

/** A warning as the warned account's people see it: when, the family and rule, the staff note. */
export interface AccountWarningView {
  given_at: string;
  family: string;
  rule_id: string | null;
  note: string | null;
}

/** At most this many warnings are listed (the newest). */
const ACCOUNT_WARNINGS_LIMIT = 50;

/** The warnings staff gave an account, newest first (the last {@link ACCOUNT_WARNINGS_LIMIT}). */
export async function accountWarnings(db: Kysely<Database>, accountId: string): Promise<AccountWarningView[]> {
  const rows = await warningsOf(db, accountId, ACCOUNT_WARNINGS_LIMIT);
  return rows.map((row) => ({ given_at: iso(row.created_at), family: row.family, rule_id: row.rule_id, note: row.note }));
}
