/**
 * Videos and their jobs. Every state change is one guarded statement: it
 * moves only along GAPS.md's transitions (`WHERE status IN …`) and, for the
 * job's own steps, only while the caller holds the lease (`locked_by`), so
 * an instance that lost its lease (or a deleted video) changes nothing.
 */
import { sql, type Insertable } from 'kysely';
import type { Video, VideoAssetsRecord, VideosTable } from '../schema.js';
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

/**
 * Takes up to `limit` due, unfinished jobs whose lease is free or ran out
 * (its instance died or stalled), and leases them to `instanceId`. `SKIP
 * LOCKED`: instances claiming at the same time take different jobs and never
 * wait on each other; the outer conditions are checked again on the locked
 * rows, so a job is leased to one instance at a time.
 */
export async function claimDueVideos(db: Executor, instanceId: string, limit: number, leaseMs: number): Promise<Video[]> {
  const result = await sql<Video>`
    UPDATE videos SET locked_by = ${instanceId}, locked_until = ${afterMs(leaseMs)}, updated_at = now()
    WHERE id IN (
      SELECT id FROM videos
      WHERE status IN ('pending', 'processing') AND run_after <= now()
        AND (locked_until IS NULL OR locked_until < now())
      ORDER BY run_after, id
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
      AND status IN ('pending', 'processing')
      AND (locked_until IS NULL OR locked_until < now())
    RETURNING *`.execute(db);
  return result.rows;
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

/** `processing → completed`, with the stored files; ends the job. */
export async function markVideoCompleted(db: Executor, update: { id: string; instanceId: string; duration: number; assets: VideoAssetsRecord }): Promise<boolean> {
  const result = await db
    .updateTable('videos')
    .set({
      status: 'completed',
      duration: update.duration,
      progress: 100,
      assets: JSON.stringify(update.assets),
      completed_at: sql`now()`,
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

/** `pending|processing → failed` with the reason; ends the job. */
export async function markVideoFailed(db: Executor, update: { id: string; instanceId: string; error: string }): Promise<boolean> {
  const result = await db
    .updateTable('videos')
    .set({ status: 'failed', error: update.error, locked_by: null, locked_until: null, updated_at: sql`now()` })
    .where('id', '=', update.id)
    .where('status', 'in', UNFINISHED)
    .where('locked_by', '=', update.instanceId)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}
