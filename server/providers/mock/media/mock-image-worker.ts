/**
 * The mock provider's pictures are drawn on worker threads, never on the
 * gateway's event loop: a 4096×4096 picture costs about 0.3 s of CPU (0.5 s
 * with three partial images), so ten of them inline would stall every other
 * request for seconds.
 *
 * A small pool of long-lived workers (one per spare core, at least one,
 * started on first use and never holding the process open) takes jobs in
 * order; each job is one picture, so the images of concurrent requests
 * interleave. Each PNG is posted back as soon as it is encoded and the
 * caller holds at most one at a time, so `n` 4096² pictures never sit in
 * memory together (a mock PNG is 0.1–0.4 MB; the worker's own peak is the
 * banded encoder's ~1 MiB, plus one decoded input of an edit, 64 MiB at
 * 4096²).
 *
 * Starting a worker from TypeScript sources loads tsx there (see
 * mock-video-worker.ts for why), about 0.4 s of CPU once per worker.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../../../workers/start-worker.js';
import { MediaFormatError, type MediaFormatErrorReason } from '../../../media/media-format-error.js';
import type { MockImageFrame } from './mock-images.js';

/** Longest side kept of an edit's further images: they are only drawn as thumbnails (at most 512 px at 4096²). */
export const MOCK_THUMBNAIL_SOURCE_SIDE = 512;

/** One picture to draw; `partialImages: null` draws only the final picture. */
export type MockImageJob =
  | { kind: 'generate'; prompt: string; index: number; width: number; height: number; partialImages: number | null }
  | {
      kind: 'edit';
      prompt: string;
      index: number;
      width: number;
      height: number;
      partialImages: number | null;
      /** Uploaded PNGs on disk (the first is edited, the others become thumbnails). */
      imagePaths: string[];
      maskPath?: string;
    };

export type MockImageWorkerRequest = { kind: 'job'; id: number; job: MockImageJob } | { kind: 'cancel'; id: number };

export type MockImageWorkerReply =
  | { id: number; frame: MockImageFrame }
  | { id: number; done: true }
  | { id: number; error: { name: string; message: string; reason?: MediaFormatErrorReason } };

/** Frames of one job as they arrive, read by one consumer. */
class FrameQueue {
  private readonly frames: MockImageFrame[] = [];
  private ended = false;
  private failure: Error | undefined;
  private wake: (() => void) | undefined;

  push(frame: MockImageFrame): void {
    this.frames.push(frame);
    this.wake?.();
  }

  end(failure?: Error): void {
    this.ended = true;
    this.failure ??= failure;
    this.wake?.();
  }

  async *read(): AsyncGenerator<MockImageFrame> {
    while (true) {
      const frame = this.frames.shift();
      if (frame) {
        yield frame;
        continue;
      }
      if (this.failure) throw this.failure;
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}

function startWorker(): Worker {
  const worker = startModuleWorker(import.meta.url, './mock-image-worker-entry');
  // Idle workers never keep the process alive.
  worker.unref();
  return worker;
}

interface PooledWorker {
  worker: Worker;
  jobs: Map<number, FrameQueue>;
}

function toError(error: { name: string; message: string; reason?: MediaFormatErrorReason }): Error {
  if (error.reason) return new MediaFormatError(error.reason, error.message);
  const failure = new Error(error.message);
  failure.name = error.name;
  return failure;
}

/** The pool; module-wide, since workers are a property of the process, not of one gateway instance. */
class MockImagePool {
  private readonly workers: Array<PooledWorker | undefined>;
  private nextJobId = 0;

  constructor(size: number) {
    this.workers = Array.from({ length: size }, () => undefined);
  }

  private acquire(): PooledWorker {
    // The least busy worker; a missing one (never started, or crashed) is started.
    let chosen = 0;
    for (let index = 0; index < this.workers.length; index++) {
      const load = this.workers[index]?.jobs.size ?? 0;
      if (load < (this.workers[chosen]?.jobs.size ?? 0)) chosen = index;
      if (load === 0) {
        chosen = index;
        break;
      }
    }
    return (this.workers[chosen] ??= this.spawn(chosen));
  }

  private spawn(slot: number): PooledWorker {
    const pooled: PooledWorker = { worker: startWorker(), jobs: new Map() };
    const failAll = (error: Error) => {
      if (this.workers[slot] === pooled) this.workers[slot] = undefined;
      for (const queue of pooled.jobs.values()) queue.end(error);
      pooled.jobs.clear();
    };
    pooled.worker.on('message', (reply: MockImageWorkerReply) => {
      const queue = pooled.jobs.get(reply.id);
      if (!queue) return;
      if ('frame' in reply) {
        const png = reply.frame.png as Uint8Array;
        // Structured clone turns a Buffer into a plain Uint8Array.
        queue.push({ ...reply.frame, png: Buffer.from(png.buffer, png.byteOffset, png.byteLength) });
        return;
      }
      pooled.jobs.delete(reply.id);
      queue.end('error' in reply ? toError(reply.error) : undefined);
    });
    pooled.worker.on('error', (error) => failAll(error));
    pooled.worker.on('exit', (code) => failAll(new Error(`mock image worker exited with code ${code}`)));
    return pooled;
  }

  /** The frames of one job; breaking out of the loop (or `signal`) cancels the rest. */
  async *render(job: MockImageJob, signal?: AbortSignal): AsyncGenerator<MockImageFrame> {
    signal?.throwIfAborted();
    const pooled = this.acquire();
    const id = ++this.nextJobId;
    const queue = new FrameQueue();
    pooled.jobs.set(id, queue);
    // A worker with work keeps the process alive until the work is answered; an idle one does not.
    pooled.worker.ref();
    const onAbort = () => queue.end(signal?.reason instanceof Error ? signal.reason : new Error('aborted'));
    signal?.addEventListener('abort', onAbort, { once: true });
    pooled.worker.postMessage({ kind: 'job', id, job } satisfies MockImageWorkerRequest);
    try {
      yield* queue.read();
    } finally {
      signal?.removeEventListener('abort', onAbort);
      if (pooled.jobs.delete(id)) pooled.worker.postMessage({ kind: 'cancel', id } satisfies MockImageWorkerRequest);
      if (pooled.jobs.size === 0) pooled.worker.unref();
    }
  }
}

let pool: MockImagePool | undefined;

/** Workers in the pool: the cores left beside the main thread, at least one, at most four. */
function poolSize(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

/**
 * Draws one mock picture (or edit) on a worker: the partial pictures when
 * `partialImages` is a number, then the final one. Input problems come back
 * as {@link MediaFormatError}; `signal` stops waiting and cancels the job.
 */
export function renderMockImage(job: MockImageJob, signal?: AbortSignal): AsyncGenerator<MockImageFrame> {
  pool ??= new MockImagePool(poolSize());
  return pool.render(job, signal);
}
