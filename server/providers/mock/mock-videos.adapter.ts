/**
 * The mock provider's video generation, in-process and stateless: a
 * generation's id carries when it started and when it is ready, and its
 * files are a pure function of the request (mock-video.ts), so any instance
 * can poll or download a generation another one created, also after a
 * restart. It takes the configured delay, then renders a real H.264 MP4, a
 * PNG thumbnail and a PNG spritesheet when the files are downloaded.
 *
 * The render runs on a worker thread (`renderMockVideoInWorker`); aborting
 * the download terminates it. Measured on the loaded two-core machine (load
 * average ~18): rendered in slices on the main thread, 1280×720 × 8 s and
 * 1920×1080 × 20 s stalled the event loop up to 70–170 ms (p99 72–120 ms,
 * against p99 4 ms idle); on a worker, p99 4–8 ms, at ~0.4 s more CPU per
 * video (the worker loads tsx from the TypeScript sources). A video's
 * generation is rare and slow; a stalled event loop delays every request.
 */
import { randomBytes } from 'node:crypto';
import { UpstreamError } from '../../errors.js';
import type { UpstreamVideo, VideoDownload, VideoJobRef, VideosAdapter } from '../types.js';
import { normaliseMockVideoRequest, type MockVideo } from './media/mock-video.js';
import { renderMockVideoInWorker } from './media/mock-video-worker.js';

const ID_PATTERN = /^mockvid_([0-9a-z]+)_([0-9a-z]+)_[0-9a-f]+$/;
/** A render is kept this long for the other files of the same download. */
const RENDER_KEEP_MS = 60_000;

interface Render {
  video: Promise<MockVideo>;
  timer: NodeJS.Timeout;
}

/** Renders under way or just done, by generation id: the three files of one download share one render. */
const renders = new Map<string, Render>();

function toMockRequest(job: VideoJobRef) {
  const [width, height] = job.request.size.split('x').map(Number);
  return { prompt: job.request.prompt, width: width ?? 0, height: height ?? 0, seconds: job.request.seconds };
}

function readTimes(providerJobId: string): { startedAt: number; readyAt: number } | undefined {
  const match = ID_PATTERN.exec(providerJobId);
  if (!match) return undefined;
  return { startedAt: parseInt(match[1]!, 36), readyAt: parseInt(match[2]!, 36) };
}

function renderOnce(job: VideoJobRef, signal: AbortSignal): Promise<MockVideo> {
  const existing = renders.get(job.providerJobId);
  if (existing) return existing.video;
  const video = renderMockVideoInWorker(toMockRequest(job), { signal });
  const timer = setTimeout(() => renders.delete(job.providerJobId), RENDER_KEEP_MS);
  timer.unref();
  renders.set(job.providerJobId, { video, timer });
  // A failed or aborted render is not kept: the next download starts a new one.
  video.catch(() => {
    clearTimeout(timer);
    renders.delete(job.providerJobId);
  });
  return video;
}

function oneChunk(bytes: Buffer): AsyncIterable<Uint8Array> {
  return (async function* () {
    yield bytes;
  })();
}

export const mockVideosAdapter: VideosAdapter = {
  async create(_transport, connection, request, options) {
    const [width, height] = request.size.split('x').map(Number);
    try {
      normaliseMockVideoRequest({ prompt: request.prompt, width: width ?? 0, height: height ?? 0, seconds: request.seconds });
    } catch (error) {
      // What the mock cannot render is a provider-side refusal, as a real provider's 400 would be.
      throw new UpstreamError(`The mock provider cannot render this video: ${(error as Error).message}.`, { status: 400, provider: connection.id, retryable: false });
    }
    const startedAt = Date.now();
    const readyAt = startedAt + options.simulatedDelayMs;
    const id = `mockvid_${startedAt.toString(36)}_${readyAt.toString(36)}_${randomBytes(8).toString('hex')}`;
    return { id, status: 'queued', progress: 0, retryAfterMs: options.simulatedDelayMs };
  },

  async retrieve(_transport, connection, job): Promise<UpstreamVideo> {
    const times = readTimes(job.providerJobId);
    if (!times) throw new UpstreamError('The mock provider does not know this generation.', { status: 404, provider: connection.id, retryable: false });
    const now = Date.now();
    if (now < times.readyAt) {
      const progress = Math.floor((100 * (now - times.startedAt)) / Math.max(1, times.readyAt - times.startedAt));
      return { id: job.providerJobId, status: 'in_progress', progress: Math.max(0, Math.min(99, progress)), retryAfterMs: times.readyAt - now };
    }
    const { fps, frameCount } = normaliseMockVideoRequest(toMockRequest(job));
    return { id: job.providerJobId, status: 'completed', progress: 100, durationSeconds: frameCount / fps };
  },

  async download(transport, _connection, job, variant): Promise<VideoDownload> {
    const video = await renderOnce(job, transport.signal);
    const bytes = variant === 'video' ? video.video : variant === 'thumbnail' ? video.thumbnail : video.spritesheet;
    return { contentType: video.contentTypes[variant], contentLength: bytes.length, body: oneChunk(bytes) };
  },

  async remove(_transport, _connection, job) {
    // Nothing runs at the mock between polls; a render under way is stopped by its download's signal.
    const render = renders.get(job.providerJobId);
    if (render) {
      clearTimeout(render.timer);
      renders.delete(job.providerJobId);
    }
  },
};
