/**
 * The retention of finished videos' files (server/videos/video-retention.ts).
 * A video whose `expires_at` has passed loses its files; the row stays (its
 * status, duration and times), with `assets` and `input_reference` cleared.
 * A sweep claims its videos with the job lease columns (`locked_by`,
 * `locked_until`), which a finished video does not otherwise use: two
 * instances sweeping at once take different videos.
 */
import { sql } from 'kysely';
import type { Video } from '../schema.js';
import type { Executor } from './executor.js';

/**
 * Videos that finished while files were kept for ever (or before retention
 * existed) get their expiry now: `retentionMs` after they finished.
 */
export async function backfillVideoExpiry(db: Executor, retentionMs: number): Promise<number> {
  const result = await sql`
    UPDATE videos SET expires_at = coalesce(completed_at, updated_at) + make_interval(secs => ${retentionMs / 1000})
    WHERE status IN ('completed', 'failed') AND expires_at IS NULL
      AND (assets IS NOT NULL OR input_reference IS NOT NULL)`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Leases up to `limit` finished videos whose files have expired and are still stored, for `leaseMs`. */
export async function claimExpiredVideos(db: Executor, instanceId: string, limit: number, leaseMs: number): Promise<Video[]> {
  const result = await sql<Video>`
    UPDATE videos SET locked_by = ${instanceId}, locked_until = now() + make_interval(secs => ${leaseMs / 1000})
    WHERE id IN (
      SELECT id FROM videos
      WHERE expires_at <= now() AND (assets IS NOT NULL OR input_reference IS NOT NULL)
        AND status IN ('completed', 'failed')
        AND (locked_until IS NULL OR locked_until < now())
      ORDER BY expires_at
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
      AND (locked_until IS NULL OR locked_until < now())
    RETURNING *`.execute(db);
  return result.rows;
}

/** Records that a swept video's files are gone (only while this instance holds the sweep's lease). */
export async function markVideoFilesExpired(db: Executor, id: string, instanceId: string): Promise<boolean> {
  const result = await db
    .updateTable('videos')
    .set({ assets: null, input_reference: null, locked_by: null, locked_until: null, updated_at: sql`now()` })
    .where('id', '=', id)
    .where('locked_by', '=', instanceId)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}
