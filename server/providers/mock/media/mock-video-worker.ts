/**
 * Runs the mock video generator on a worker thread, so that not even its
 * short stretches of work (about 8 ms each, see mock-video.ts) run on the
 * caller's event loop.
 *
 * One worker per call. Starting one is not free: from TypeScript sources the
 * worker loads tsx and transforms the modules again, about 0.4 s of CPU,
 * more than rendering 1920×1080 × 20 s itself (about 0.25 s). Calling
 * `renderMockVideo` directly is usually the better choice; this is for
 * callers that want the event loop entirely free.
 */
import type { Worker } from 'node:worker_threads';
import { startModuleWorker } from '../../../workers/start-worker.js';
import type {
  MockVideo,
  MockVideoFilePaths,
  MockVideoFiles,
  MockVideoRenderOptions,
  MockVideoRequest,
} from './mock-video.js';

/** The message a worker starts with (its `workerData`). */
export type MockVideoWorkerData =
  | { kind: 'memory'; request: MockVideoRequest }
  | { kind: 'files'; request: MockVideoRequest & MockVideoFilePaths };

/** Like `renderMockVideo`, on a worker thread. Aborting terminates the worker. */
export async function renderMockVideoInWorker(
  request: MockVideoRequest,
  options: MockVideoRenderOptions = {},
): Promise<MockVideo> {
  const result = await runWorker<MockVideo>({ kind: 'memory', request: copyRequest(request) }, options.signal);
  // Buffers cross the thread boundary as plain Uint8Arrays.
  return {
    ...result,
    video: toBuffer(result.video),
    thumbnail: toBuffer(result.thumbnail),
    spritesheet: toBuffer(result.spritesheet),
  };
}

/** Like `renderMockVideoToFiles`, on a worker thread. Aborting terminates the worker (files may be partly written). */
export function renderMockVideoToFilesInWorker(
  request: MockVideoRequest & MockVideoFilePaths,
  options: MockVideoRenderOptions = {},
): Promise<MockVideoFiles> {
  const { videoPath, thumbnailPath, spritesheetPath } = request;
  return runWorker<MockVideoFiles>(
    { kind: 'files', request: { ...copyRequest(request), videoPath, thumbnailPath, spritesheetPath } },
    options.signal,
  );
}

/** Only the known fields, so that nothing uncloneable reaches `postMessage`. */
function copyRequest(request: MockVideoRequest): MockVideoRequest {
  const { prompt, width, height, seconds, fps } = request;
  return fps === undefined ? { prompt, width, height, seconds } : { prompt, width, height, seconds, fps };
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function startWorker(data: MockVideoWorkerData): Worker {
  return startModuleWorker(import.meta.url, './mock-video-worker-entry', data);
}

function runWorker<T>(data: MockVideoWorkerData, signal: AbortSignal | undefined): Promise<T> {
  signal?.throwIfAborted();
  const worker = startWorker(data);
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const finish = (settle: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      settle();
    };
    const onAbort = () => {
      finish(() => reject(signal?.reason));
      void worker.terminate();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.once('message', (result: T) => finish(() => resolve(result)));
    worker.once('error', (error: Error) => finish(() => reject(error)));
    worker.once('exit', (code) => finish(() => reject(new Error(`mock video worker exited with code ${code} before answering`))));
  });
}
