/**
 * Retention of finished videos' files: `VIDEO_RETENTION_HOURS` after a video
 * finished (its `expires_at`, shown on the video object), its video,
 * thumbnail, spritesheet and input reference are deleted from storage; the
 * video itself stays, and its content answers 404 `VIDEO_EXPIRED` from
 * `expires_at` on, whether or not the sweep has run yet.
 *
 * Every instance sweeps every `VIDEO_RETENTION_SWEEP_MS`. A sweep leases the
 * expired videos it takes (videos.queries' lease columns), so two instances
 * never sweep the same video at once; it deletes the files first and then
 * clears the record's file list (while it still holds the lease): a sweep
 * cut short leaves the record pointing at files that may be gone, and the
 * next sweep deletes them again (deleting a missing file is no error), never
 * a file no record knows.
 */
import { backfillVideoExpiry, claimExpiredVideos, markVideoFilesExpired } from '../../db/queries/video-retention.queries.js';
import type { Video as VideoRow } from '../../db/schema.js';
import { GatewayError } from '../errors.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { VideoConfig } from '../config.js';
import type { Logger } from '../logger.js';
import type { VideoStorage } from './video-storage.js';

/** Videos taken per claim. */
const BATCH = 50;
/** How long a sweep holds a video (its deletes are a few storage calls). */
const SWEEP_LEASE_MS = 5 * 60_000;

/** Every stored file of a video. */
export function videoFileKeys(row: Pick<VideoRow, 'assets' | 'input_reference'>): string[] {
  return [...(row.assets ? [row.assets.video.key, row.assets.thumbnail.key, row.assets.spritesheet.key] : []), ...(row.input_reference ? [row.input_reference.key] : [])];
}

/** 404 VIDEO_EXPIRED for a completed video whose files expired (from `expires_at` on, swept or not). */
export function assertFilesKept(row: VideoRow): void {
  const expiresAt = row.expires_at === null ? undefined : new Date(row.expires_at);
  if (row.status !== 'completed' || (row.assets && (!expiresAt || expiresAt.getTime() > Date.now()))) return;
  const when = expiresAt ? ` at ${expiresAt.toISOString()}` : '';
  throw new GatewayError('VIDEO_EXPIRED', `The files of the video '${row.id}' expired${when} and were deleted; the video record remains.`);
}

/** What the sweep uses: the videos table, the storage, this instance's id and the retention settings. */
export interface VideoRetentionDeps {
  db: Kysely<Database>;
  instanceId: string;
  log: Logger;
  storage: VideoStorage;
  config: { videos: Pick<VideoConfig, 'retentionMs' | 'retentionSweepMs'> };
}

export class VideoRetention {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<number> | undefined;

  constructor(private readonly deps: VideoRetentionDeps) {}

  start(): void {
    const { retentionMs, retentionSweepMs } = this.deps.config.videos;
    if (retentionMs <= 0) return;
    // A sweep still under way when the next is due is not doubled.
    this.timer = setInterval(() => void (this.sweeping ? undefined : this.run().catch(() => undefined)), retentionSweepMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping?.catch(() => undefined);
  }

  /** A whole sweep that starts after this call (after the one under way, if any); how many videos lost their files. */
  async sweep(): Promise<number> {
    while (this.sweeping) await this.sweeping.catch(() => undefined);
    return this.run();
  }

  private run(): Promise<number> {
    const run: Promise<number> = this.sweepAll().finally(() => {
      if (this.sweeping === run) this.sweeping = undefined;
    });
    this.sweeping = run;
    return run;
  }

  private async sweepAll(): Promise<number> {
    const { db, instanceId, log, config } = this.deps;
    if (config.videos.retentionMs <= 0) return 0;
    try {
      await backfillVideoExpiry(db, config.videos.retentionMs);
      let swept = 0;
      for (;;) {
        const rows = await claimExpiredVideos(db, instanceId, BATCH, SWEEP_LEASE_MS);
        for (const row of rows) if (await this.expire(row)) swept++;
        if (rows.length < BATCH) break;
      }
      if (swept > 0) log.info('video.files_expired', { videos: swept });
      return swept;
    } catch (error) {
      log.warn('video.retention_sweep_failed', { message: (error as Error).message });
      throw error;
    }
  }

  /** Deletes one video's files, then records it; a storage failure leaves the video to the next sweep once the lease runs out. */
  private async expire(row: VideoRow): Promise<boolean> {
    const { db, instanceId, log, storage } = this.deps;
    try {
      for (const key of videoFileKeys(row)) await storage.delete(key);
    } catch (error) {
      log.warn('video.file_expiry_failed', { video: row.id, message: (error as Error).message });
      return false;
    }
    return markVideoFilesExpired(db, row.id, instanceId);
  }
}
