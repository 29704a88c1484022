/**
 * The background side of `/v1/videos`: each instance runs a small loop that
 * claims due jobs from the `videos` table, drives each one a step at a time
 * (create at the provider, poll with a growing interval, copy the files into
 * the gateway's storage, settle the money) and hands it back between polls.
 *
 * Why a queue of our own and not graphile-worker or pg-boss: neither runs on
 * PGlite (the default database), and the job needs its lease, its provider
 * state and its money in the same rows and transactions as the video itself.
 *
 * - A job runs on one instance at a time: it is claimed with `FOR UPDATE SKIP
 *   LOCKED` and leased to the instance (`locked_by`, `locked_until`); every
 *   step writes only while the lease is the instance's, and the lease is
 *   renewed while the instance works. An instance that finds its lease gone
 *   (taken over, or the video deleted) stops the job's work at once.
 * - A killed instance renews nothing: once its leases run out, the others
 *   take its jobs over. A stopping instance hands its leases back at once.
 * - Between polls the job is not leased at all: its next poll time is in the
 *   row, and whichever instance is free then polls.
 * - Accounts take turns, each with at most VIDEO_MAX_RUNNING_PER_ACCOUNT jobs
 *   running across all instances (claimDueVideos).
 */
import { mkdirSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { scratchFolderPath } from '../scratch-folders.js';
import {
  claimDueVideos,
  findVideo,
  markVideoCompleted,
  markVideoFailed,
  markVideoProcessing,
  releaseAllVideoLeases,
  releaseVideoLease,
  renewVideoLeases,
  scheduleVideoPoll,
  scheduleVideoRetry,
} from '../../db/queries/videos.queries.js';
import type { Video as VideoRow, VideoAssetsRecord } from '../../db/schema.js';
import type { CatalogModel, ResolvedDeployment } from '../catalog/catalog.js';
import { GatewayError, toGatewayError, UpstreamError } from '../errors.js';
import type { MeteredUsage } from '../operations/metering.js';
import { redactError } from '../operations/redaction.js';
import { routeDeployments } from '../operations/routing.js';
import { adapterFor } from '../providers/registry.js';
import type { UpstreamFile, UpstreamVideo, VideoJobRef, VideoVariant } from '../providers/types.js';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Catalog } from '../catalog/catalog.js';
import type { GatewayConfig } from '../config.js';
import type { RoutingDeps } from '../operations/routing.js';
import type { JobMeterDeps } from '../operations/job-meter.js';
import { createTransport } from '../upstream/transport.js';
import { copyVideoAsset, deleteVideoAssets, readStoredAsset } from './video-assets.js';
import { VideoRetention } from './video-retention.js';
import { JobMeter } from '../operations/job-meter.js';
import type { VideoStorage } from './video-storage.js';

/** Why a job's work was stopped. */
const STOPPING = 'instance stopping';
const DELETED = 'video deleted';
const LEASE_LOST = 'lease lost';

const VARIANTS: readonly VideoVariant[] = ['video', 'thumbnail', 'spritesheet'];
const NOTHING_USED: MeteredUsage = { inputTokens: 0, outputTokens: 0 };

interface RunningJob {
  controller: AbortController;
  done: Promise<void>;
  /** When the lease ends unless renewed (this instance's clock, a little early). */
  leaseEndsAt: number;
}

/** A step of a job that the provider's answer ended for good (a refusal, a failed generation). */
function isPermanent(error: unknown): boolean {
  if (error instanceof UpstreamError) return !(error.retryable || error.timeout || error.status === 0 || error.status >= 500);
  if (error instanceof GatewayError) return error.code !== 'SERVICE_UNAVAILABLE' && error.status < 500;
  return false;
}

/** What the video jobs use, given when the worker is built. */
export interface VideoWorkerDeps extends RoutingDeps, JobMeterDeps {
  db: Kysely<Database>;
  instanceId: string;
  config: Pick<GatewayConfig, 'videos' | 'upstream'>;
  catalog: Pick<Catalog, 'get'>;
}

export class VideoWorker {
  private readonly meter: JobMeter;
  private started = false;
  private readonly running = new Map<string, RunningJob>();
  private readonly wakeups = new Set<NodeJS.Timeout>();
  private tickTimer: NodeJS.Timeout | undefined;
  private leaseTimer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private tickWanted = false;
  /** Claims failing on every tick (the database is away) are logged this often. */
  private lastClaimFailureLog = 0;
  private stopping = false;
  private readonly workDirectory: string;
  /** Deletes finished videos' files once they expire. */
  readonly retention: VideoRetention;

  constructor(
    private readonly deps: VideoWorkerDeps,
    /** Where finished videos are kept. */
    readonly storage: VideoStorage,
  ) {
    this.workDirectory = scratchFolderPath('video-work');
    this.meter = new JobMeter(deps, '/v1/videos');
    this.retention = new VideoRetention({ ...deps, storage });
  }

  /** Starts claiming jobs. */
  start(): void {
    this.started = true;
    const { deps } = this;
    mkdirSync(this.workDirectory, { recursive: true, mode: 0o700 });
    const { workerIntervalMs, leaseMs } = deps.config.videos;
    this.tickTimer = setInterval(() => this.nudge(), workerIntervalMs);
    this.tickTimer.unref();
    this.leaseTimer = setInterval(() => void this.renewLeases(), Math.max(250, Math.floor(leaseMs / 4)));
    this.leaseTimer.unref();
    this.retention.start();
    this.nudge();
  }

  /** Looks for due jobs now (a video was just created, or a job slot freed up). */
  nudge(): void {
    if (!this.started || this.stopping) return;
    if (this.ticking) {
      this.tickWanted = true;
      return;
    }
    this.ticking = this.tick().finally(() => {
      this.ticking = undefined;
    });
  }

  /** Jobs this instance is working on. */
  get activeJobs(): number {
    return this.running.size;
  }

  /** Stops this instance's work on a video that was deleted (other instances notice through their lease). */
  abort(videoId: string): void {
    this.running.get(videoId)?.controller.abort(DELETED);
  }

  /**
   * Stops claiming, stops the jobs under way (each is safe to redo: a poll,
   * a download, a render) and hands every lease back, so that another
   * instance takes the jobs at once.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearInterval(this.tickTimer);
    clearInterval(this.leaseTimer);
    await this.retention.stop();
    for (const timer of this.wakeups) clearTimeout(timer);
    this.wakeups.clear();
    // A claim under way hands back what it got (see tick).
    await this.ticking;
    for (const job of this.running.values()) job.controller.abort(STOPPING);
    await Promise.allSettled([...this.running.values()].map((job) => job.done));
    if (this.started) {
      await releaseAllVideoLeases(this.deps.db, this.deps.instanceId).catch((error: Error) =>
        this.deps.log.warn('video.release_leases_failed', { message: error.message }),
      );
    }
    await rm(this.workDirectory, { recursive: true, force: true });
    await this.storage.close();
  }

  private async tick(): Promise<void> {
    const { deps } = this;
    try {
      do {
        this.tickWanted = false;
        const free = deps.config.videos.concurrency - this.running.size;
        if (free <= 0 || this.stopping) break;
        const claimedAt = Date.now();
        const { leaseMs, maxRunningPerAccount } = deps.config.videos;
        const jobs = await claimDueVideos(deps.db, { instanceId: deps.instanceId, limit: free, leaseMs, maxRunningPerAccount });
        for (const job of jobs) {
          if (this.stopping) await releaseVideoLease(deps.db, job.id, deps.instanceId);
          else this.launch(job, claimedAt);
        }
      } while (this.tickWanted && !this.stopping);
    } catch (error) {
      if (Date.now() - this.lastClaimFailureLog >= 10_000) {
        this.lastClaimFailureLog = Date.now();
        deps.log.warn('video.claim_failed', { message: (error as Error).message });
      }
    }
  }

  private launch(row: VideoRow, claimedAt: number): void {
    const controller = new AbortController();
    const done = this.runJob(row, controller.signal)
      .catch((error: Error) => this.deps.log.error('video.job_crashed', { video: row.id, message: error.message }))
      .finally(() => {
        this.running.delete(row.id);
        this.nudge();
      });
    this.running.set(row.id, { controller, done, leaseEndsAt: claimedAt + this.deps.config.videos.leaseMs });
  }

  /**
   * Renews the leases of the jobs under way. A job whose lease is gone (taken
   * over, deleted) stops; so does one whose lease could not be renewed (the
   * database is away) and is about to run out: another instance may take it
   * then, and two instances must never work on one job.
   */
  private async renewLeases(): Promise<void> {
    const { deps } = this;
    if (!this.started || this.running.size === 0) return;
    const { leaseMs } = deps.config.videos;
    const ids = [...this.running.keys()];
    const askedAt = Date.now();
    try {
      const held = await renewVideoLeases(deps.db, deps.instanceId, ids, leaseMs);
      for (const id of ids) {
        const job = this.running.get(id);
        if (!held.has(id)) job?.controller.abort(LEASE_LOST);
        else if (job) job.leaseEndsAt = askedAt + leaseMs;
      }
    } catch (error) {
      deps.log.warn('video.lease_renewal_failed', { message: (error as Error).message });
    }
    for (const job of this.running.values()) if (job.leaseEndsAt - Date.now() < leaseMs / 3) job.controller.abort(LEASE_LOST);
  }

  /** Polls again after `delayMs` (the loop's own interval may be longer). */
  private wakeAfter(delayMs: number): void {
    const timer = setTimeout(() => {
      this.wakeups.delete(timer);
      this.nudge();
    }, delayMs);
    timer.unref();
    this.wakeups.add(timer);
  }

  private async runJob(row: VideoRow, signal: AbortSignal): Promise<void> {
    try {
      await this.advance(row, signal);
    } catch (error) {
      await this.onStepFailed(row, error, signal);
    }
  }

  /** One step of a job: create at the provider, or poll it; then finish it, or schedule the next poll. */
  private async advance(row: VideoRow, signal: AbortSignal): Promise<void> {
    const { deps } = this;
    const model = deps.catalog.get(row.model);
    if (!model) return this.fail(row, undefined, `The model '${row.model}' is no longer offered.`);
    let job: VideoRow = row;
    let deployment: ResolvedDeployment;
    let upstream: UpstreamVideo;
    if (job.provider_job_id === null) {
      const created = await this.createUpstream(job, model, signal);
      deployment = created.deployment;
      upstream = created.upstream;
      const marked = await markVideoProcessing(deps.db, {
        id: job.id,
        instanceId: deps.instanceId,
        providerId: deployment.provider.id,
        upstreamModel: deployment.upstreamModel,
        providerJobId: upstream.id,
        progress: upstream.progress ?? 0,
      });
      const jobRef = this.jobRefOf(job, deployment.upstreamModel, upstream.id);
      if (!marked) {
        // Deleted meanwhile (or taken over after a lost lease): this generation is nobody's.
        await this.removeUpstream(deployment, jobRef);
        return;
      }
      job = { ...job, status: 'processing', provider_id: deployment.provider.id, upstream_model: deployment.upstreamModel, provider_job_id: upstream.id };
      deps.log.info('video.processing', { video: job.id, provider: deployment.provider.id });
    } else {
      const found = this.deploymentOf(model, job.provider_id);
      if (!found) return this.fail(job, model, `The provider '${job.provider_id}' of this video is no longer configured.`);
      deployment = found;
      const adapter = adapterFor(deployment.provider.kind, 'videos')!;
      upstream = await adapter.retrieve(this.transportFor(deployment, signal), deployment.provider, this.jobRefOf(job, job.upstream_model!, job.provider_job_id));
    }
    if (upstream.status === 'completed') return this.complete(job, model, deployment, upstream, signal);
    if (upstream.status === 'failed') return this.fail(job, model, upstream.error ?? 'The provider failed to generate the video.');
    const { pollMinMs, pollMaxMs } = deps.config.videos;
    let delayMs = Math.min(pollMaxMs, pollMinMs * 2 ** Math.min(job.polls, 20));
    if (upstream.retryAfterMs !== undefined) delayMs = Math.max(1, Math.min(delayMs, upstream.retryAfterMs));
    if (await scheduleVideoPoll(deps.db, { id: job.id, instanceId: deps.instanceId, progress: upstream.progress, delayMs })) this.wakeAfter(delayMs);
  }

  /** The create, through the one failover loop over the model's deployments (no retry of a create whose answer was lost: the job's own retry sends the same idempotency key). */
  private async createUpstream(job: VideoRow, model: CatalogModel, signal: AbortSignal): Promise<{ deployment: ResolvedDeployment; upstream: UpstreamVideo }> {
    const { deps } = this;
    const reference = job.input_reference;
    const inputReference: UpstreamFile | undefined = reference
      ? { filename: reference.filename, contentType: reference.contentType, size: reference.size, open: () => readStoredAsset(this.storage, reference.key) }
      : undefined;
    return routeDeployments(
      { services: deps, requestId: job.id, signal },
      model,
      'videos',
      async ({ deployment, adapter, transport }) => ({
        deployment,
        upstream: await adapter.create(
          transport,
          deployment.provider,
          { model: deployment.upstreamModel, prompt: job.prompt, size: job.size, seconds: job.seconds, ...(inputReference ? { inputReference } : {}) },
          { idempotencyKey: job.id, simulatedDelayMs: deps.config.videos.mockDelayMs },
        ),
      }),
      { maxRetries: 0, signal },
    );
  }

  /** Copies the files into storage, then completes the video and charges it in one transaction (only while the lease is ours). */
  private async complete(job: VideoRow, model: CatalogModel, deployment: ResolvedDeployment, upstream: UpstreamVideo, signal: AbortSignal): Promise<void> {
    const { deps } = this;
    const adapter = adapterFor(deployment.provider.kind, 'videos')!;
    const transport = this.transportFor(deployment, signal);
    const jobRef = this.jobRefOf(job, job.upstream_model!, job.provider_job_id!);
    const stored: Partial<VideoAssetsRecord> = {};
    try {
      for (const variant of VARIANTS) {
        stored[variant] = await copyVideoAsset(this.storage, { adapter, transport, deployment, jobRef, videoId: job.id, variant, signal }, this.workDirectory, deps.config.videos.maxAssetBytes);
      }
    } catch (error) {
      await deleteVideoAssets(this.storage, Object.values(stored));
      throw error;
    }
    const assets = stored as VideoAssetsRecord;
    const duration = upstream.durationSeconds ?? job.seconds;
    // Charged by the real duration, at the discount of the day it was created; never more than was held.
    const cost = await this.meter.settle(job, model, { ...NOTHING_USED, seconds: duration }, deployment.provider.id, (trx) =>
      markVideoCompleted(trx, { id: job.id, instanceId: deps.instanceId, duration, assets, retentionMs: deps.config.videos.retentionMs }),
    );
    if (cost !== undefined) {
      deps.log.info('video.completed', { video: job.id, provider: deployment.provider.id, duration, cost });
      return;
    }
    // Not ours to complete: deleted meanwhile (its files must not stay), or completed by the instance that took the job over (same keys, same files).
    if (!(await findVideo(deps.db, job.id))) await deleteVideoAssets(this.storage, Object.values(assets));
  }

  /** Ends the job as `failed` with its reason, releasing its hold, in one transaction (only while the lease is ours). */
  private async fail(job: VideoRow, model: CatalogModel | undefined, reason: string): Promise<void> {
    const { deps } = this;
    const failed = await this.meter.release(job, model, { status: 502, errorCode: 'VIDEO_FAILED', provider: job.provider_id }, (trx) =>
      markVideoFailed(trx, { id: job.id, instanceId: deps.instanceId, error: reason, retentionMs: deps.config.videos.retentionMs }),
    );
    if (failed) deps.log.info('video.failed', { video: job.id, provider: job.provider_id, reason });
  }

  private async onStepFailed(job: VideoRow, error: unknown, signal: AbortSignal): Promise<void> {
    const { deps } = this;
    if (signal.aborted) {
      // Stopping: the job goes back now, for another instance. Deleted or lease lost: nothing of it is ours any more.
      if (signal.reason === STOPPING) await releaseVideoLease(deps.db, job.id, deps.instanceId).catch(() => undefined);
      return;
    }
    const model = deps.catalog.get(job.model);
    const message = redactError(toGatewayError(error), model?.secrets ?? []).message;
    if (isPermanent(error)) return this.fail(job, model, message);
    const { maxAttempts, pollMinMs, pollMaxMs } = deps.config.videos;
    if (job.attempts + 1 >= maxAttempts) return this.fail(job, model, `The video could not be generated after ${maxAttempts} attempts: ${message}`);
    const delayMs = Math.min(pollMaxMs, pollMinMs * 2 ** Math.min(job.attempts + 1, 20));
    deps.log.warn('video.retry', { video: job.id, attempt: job.attempts + 1, message });
    if ((await scheduleVideoRetry(deps.db, { id: job.id, instanceId: deps.instanceId, delayMs })) !== undefined) this.wakeAfter(delayMs);
  }

  private deploymentOf(model: CatalogModel, providerId: string | null): ResolvedDeployment | undefined {
    return model.deployments.find((deployment) => deployment.provider.id === providerId && adapterFor(deployment.provider.kind, 'videos') !== undefined);
  }

  private transportFor(deployment: ResolvedDeployment, signal: AbortSignal) {
    const { deps } = this;
    return createTransport({ client: deps.upstream, provider: deployment.provider, signal, timeouts: deps.config.upstream });
  }

  private jobRefOf(job: VideoRow, upstreamModel: string, providerJobId: string): VideoJobRef {
    return { providerJobId, request: { model: upstreamModel, prompt: job.prompt, size: job.size, seconds: job.seconds } };
  }

  /** Cancels a generation at its provider, best effort (the video is gone either way). */
  async removeUpstream(deployment: ResolvedDeployment, jobRef: VideoJobRef): Promise<void> {
    const { deps } = this;
    const adapter = adapterFor(deployment.provider.kind, 'videos');
    if (!adapter) return;
    const controller = new AbortController();
    try {
      await adapter.remove(this.transportFor(deployment, controller.signal), deployment.provider, jobRef);
    } catch (error) {
      deps.log.warn('video.upstream_remove_failed', { provider: deployment.provider.id, message: (error as Error).message });
    }
  }

  /** The deployment a stored video's generation runs on, for a delete from any instance. */
  deploymentOfVideo(row: VideoRow): { deployment: ResolvedDeployment; jobRef: VideoJobRef } | undefined {
    const model = this.deps.catalog.get(row.model);
    if (!model || row.provider_job_id === null) return undefined;
    const deployment = this.deploymentOf(model, row.provider_id);
    return deployment ? { deployment, jobRef: this.jobRefOf(row, row.upstream_model ?? deployment.upstreamModel, row.provider_job_id) } : undefined;
  }
}
