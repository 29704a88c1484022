/**
 * Videos and their jobs. Every state change is one guarded statement: it
 * moves only along GAPS.md's transitions (`WHERE status IN …`) and, for the
 * job's own steps, only while the caller holds the lease (`locked_by`), so
 * an instance that lost its lease (or a deleted video) changes nothing.
 */
import { sql, type Insertable, type Kysely } from 'kysely';
import type { Database, Video, VideoAssetsRecord, VideosTable } from '../schema.js';
import type { Executor } from './executor.js';

const UNFINISHED = ['pending', 'processing'];

function afterMs(ms: number) {
  return sql<Date>`now() + make_interval(secs => ${Math.max(0, ms) / 1000})`;
}

export async function insertVideo(db: Executor, row: Insertable<VideosTable>): Promise<Video> {
  return db.insertInto('videos').values(row).returningAll().executeTakeFirstOrThrow();
}

export function findVideo(db: Executor, id: string): Promise<Video | undefined> {
  return db.selectFrom('videos').selectAll().where('id', '=', id).executeTakeFirst();
}

export interface VideoListFilter {
  accountId: string;
  limit: number;
  offset: number;
  order: 'asc' | 'desc';
  /** Only videos after this one (in `order`); a video of another account or none means no cursor. */
  afterId?: string;
}

/** An account's videos, newest first (or oldest first), whether more follow, and how many it has in all. */
export async function listVideos(db: Executor, filter: VideoListFilter): Promise<{ rows: Video[]; hasMore: boolean; total: number }> {
  let query = db.selectFrom('videos').selectAll().where('account_id', '=', filter.accountId);
  if (filter.afterId) {
    const cursor = await db.selectFrom('videos').select('id').where('id', '=', filter.afterId).where('account_id', '=', filter.accountId).executeTakeFirst();
    if (cursor) {
      // Compared in SQL: the stored time has microseconds, a JavaScript Date only milliseconds.
      const comparison = filter.order === 'desc' ? sql`<` : sql`>`;
      query = query.where(sql<boolean>`(created_at, id) ${comparison} (SELECT created_at, id FROM videos WHERE id = ${cursor.id})`);
    }
  }
  const [rows, total] = await Promise.all([
    query
      .orderBy('created_at', filter.order)
      .orderBy('id', filter.order)
      .limit(filter.limit + 1)
      .offset(filter.offset)
      .execute(),
    db
      .selectFrom('videos')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('account_id', '=', filter.accountId)
      .executeTakeFirstOrThrow(),
  ]);
  return { rows: rows.slice(0, filter.limit), hasMore: rows.length > filter.limit, total: Number(total.count) };
}

/** Removes an account's video for good; the row as it was, or undefined. */
export function deleteVideo(db: Executor, id: string, accountId: string): Promise<Video | undefined> {
  return db.deleteFrom('videos').where('id', '=', id).where('account_id', '=', accountId).returningAll().executeTakeFirst();
}

/** What one claim of due jobs may take. */
export interface VideoClaim {
  instanceId: string;
  /** Jobs this instance has room for. */
  limit: number;
  leaseMs: number;
  /** Jobs of one account at the provider at once, every instance together. */
  maxRunningPerAccount: number;
}

/** Serialises claims across instances (pg_try_advisory_xact_lock(727001) is the reset sweep's). */
const CLAIM_LOCK = 727002;

/**
 * Takes up to `limit` due, unfinished jobs whose lease is free or ran out
 * (its instance died or stalled), and leases them to the instance.
 *
 * Fair across accounts: an account's jobs *running* are its `processing`
 * ones (the provider has them) and its `pending` ones leased right now (being
 * sent); a `pending` job is taken only while its account stays within
 * `maxRunningPerAccount`, and jobs are taken round-robin: each account's
 * next pending job has the turn "its running jobs + its place in the
 * account's queue", each due poll its place among the account's polls, and
 * the lowest turns go first. One account's flood waits behind its own cap
 * while another account's first job has turn 1.
 *
 * The cap holds across instances because claims take turns (a transaction
 * lock, held for this one statement): a claim counts with every earlier
 * claim committed. `SKIP LOCKED` leaves rows another transaction is changing
 * (a delete, a step's write) to the next claim; the outer conditions are
 * checked again on the locked rows, so a job is leased to one instance at a
 * time.
 */
export async function claimDueVideos(db: Kysely<Database>, claim: VideoClaim): Promise<Video[]> {
  if (claim.limit <= 0) return [];
  return db.transaction().execute(async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${CLAIM_LOCK})`.execute(trx);
    const result = await sql<Video>`
      WITH running AS (
        SELECT account_id, count(*) AS n FROM videos
        WHERE status = 'processing' OR (status = 'pending' AND locked_until >= now())
        GROUP BY account_id
      ),
      due AS (
        SELECT id, account_id, status, run_after,
          row_number() OVER (PARTITION BY account_id, status ORDER BY run_after, id) AS place
        FROM videos
        WHERE status IN ('pending', 'processing') AND run_after <= now()
          AND (locked_until IS NULL OR locked_until < now())
      ),
      turns AS (
        SELECT due.id, due.run_after,
          CASE WHEN due.status = 'processing' THEN due.place ELSE coalesce(running.n, 0) + due.place END AS turn
        FROM due LEFT JOIN running ON running.account_id = due.account_id
        WHERE due.status = 'processing' OR coalesce(running.n, 0) + due.place <= ${claim.maxRunningPerAccount}
        ORDER BY turn, due.run_after, due.id
        LIMIT ${claim.limit}
      )
      UPDATE videos SET locked_by = ${claim.instanceId}, locked_until = ${afterMs(claim.leaseMs)}, updated_at = now()
      WHERE id IN (SELECT videos.id FROM videos JOIN turns ON turns.id = videos.id FOR UPDATE OF videos SKIP LOCKED)
        AND status IN ('pending', 'processing')
        AND (locked_until IS NULL OR locked_until < now())
      RETURNING *`.execute(trx);
    return result.rows;
  });
}

/**
 * The account's unfinished videos (pending or processing). In a transaction
 * with `lock`, counted after locking the account's row: creates of one
 * account then take turns, so a bound on the count holds however many
 * instances create at once.
 */
export async function countUnfinishedVideos(db: Executor, accountId: string, lock: boolean): Promise<number> {
  if (lock) await sql`SELECT 1 FROM accounts WHERE id = ${accountId} FOR NO KEY UPDATE`.execute(db);
  const row = await db
    .selectFrom('videos')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('account_id', '=', accountId)
    .where('status', 'in', UNFINISHED)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Extends this instance's leases on `ids`; answers the ids it still holds (a deleted or finished job is not among them). */
export async function renewVideoLeases(db: Executor, instanceId: string, ids: readonly string[], leaseMs: number): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .updateTable('videos')
    .set({ locked_until: afterMs(leaseMs) })
    .where('locked_by', '=', instanceId)
    .where('id', 'in', ids)
    .where('status', 'in', UNFINISHED)
    .returning('id')
    .execute();
  return new Set(rows.map((row) => row.id));
}

/** Hands back every lease of this instance (a graceful stop): other instances take the jobs at once. */
export async function releaseAllVideoLeases(db: Executor, instanceId: string): Promise<number> {
  const result = await db.updateTable('videos').set({ locked_by: null, locked_until: null }).where('locked_by', '=', instanceId).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Hands back one job's lease, to run again at once (the instance is stopping). */
export async function releaseVideoLease(db: Executor, id: string, instanceId: string): Promise<boolean> {
  const result = await db.updateTable('videos').set({ locked_by: null, locked_until: null }).where('id', '=', id).where('locked_by', '=', instanceId).executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** `pending → processing`: the provider accepted the generation. The lease is kept. */
export async function markVideoProcessing(
  db: Executor,
  update: { id: string; instanceId: string; providerId: string; upstreamModel: string; providerJobId: string; progress: number },
): Promise<boolean> {
  const result = await db
    .updateTable('videos')
    .set({
      status: 'processing',
      provider_id: update.providerId,
      upstream_model: update.upstreamModel,
      provider_job_id: update.providerJobId,
      progress: update.progress,
      attempts: 0,
      updated_at: sql`now()`,
    })
    .where('id', '=', update.id)
    .where('status', '=', 'pending')
    .where('locked_by', '=', update.instanceId)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** Still generating: note the progress, hand back the lease and poll again after `delayMs`. */
export async function scheduleVideoPoll(db: Executor, update: { id: string; instanceId: string; progress: number | undefined; delayMs: number }): Promise<boolean> {
  const result = await db
    .updateTable('videos')
    .set((eb) => ({
      progress: update.progress ?? eb.ref('progress'),
      polls: eb('polls', '+', 1),
      attempts: 0,
      run_after: afterMs(update.delayMs),
      locked_by: null,
      locked_until: null,
      updated_at: sql`now()`,
    }))
    .where('id', '=', update.id)
    .where('status', '=', 'processing')
    .where('locked_by', '=', update.instanceId)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** A try failed in a way that may pass (network, 5xx): count it, hand back the lease, try again after `delayMs`. The attempts so far, or undefined when the job is no longer this instance's. */
export async function scheduleVideoRetry(db: Executor, update: { id: string; instanceId: string; delayMs: number }): Promise<number | undefined> {
  const row = await db
    .updateTable('videos')
    .set((eb) => ({ attempts: eb('attempts', '+', 1), run_after: afterMs(update.delayMs), locked_by: null, locked_until: null, updated_at: sql`now()` }))
    .where('id', '=', update.id)
    .where('status', 'in', UNFINISHED)
    .where('locked_by', '=', update.instanceId)
    .returning('attempts')
    .executeTakeFirst();
  return row?.attempts;
}

/** When a video finishing now has its files deleted: `retentionMs` from now, or never (0). */
function expiryAfter(retentionMs: number) {
  return retentionMs > 0 ? afterMs(retentionMs) : null;
}

/** `processing → completed`, with the stored files (kept `retentionMs`, 0: for ever); ends the job. */
export async function markVideoCompleted(
  db: Executor,
  update: { id: string; instanceId: string; duration: number; assets: VideoAssetsRecord; retentionMs: number },
): Promise<boolean> {
  const result = await db
    .updateTable('videos')
    .set({
      status: 'completed',
      duration: update.duration,
      progress: 100,
      assets: JSON.stringify(update.assets),
      completed_at: sql`now()`,
      expires_at: expiryAfter(update.retentionMs),
      locked_by: null,
      locked_until: null,
      updated_at: sql`now()`,
    })
    .where('id', '=', update.id)
    .where('status', '=', 'processing')
    .where('locked_by', '=', update.instanceId)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** `pending|processing → failed` with the reason; ends the job (its input reference is kept `retentionMs`, 0: for ever). */
export async function markVideoFailed(db: Executor, update: { id: string; instanceId: string; error: string; retentionMs: number }): Promise<boolean> {
  const result = await db
    .updateTable('videos')
    .set({ status: 'failed', error: update.error, expires_at: expiryAfter(update.retentionMs), locked_by: null, locked_until: null, updated_at: sql`now()` })
    .where('id', '=', update.id)
    .where('status', 'in', UNFINISHED)
    .where('locked_by', '=', update.instanceId)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}
