/**
 * Entry point of the mock image workers (mock-image-worker.ts): draws the
 * jobs it is sent, one after another, and posts each PNG back as soon as it
 * is encoded. Between two PNGs it lets its message queue run, so that a
 * cancelled job stops at the next picture.
 */
import { readFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { decodePng, encodePng } from '../../../media/png.js';
import { MediaFormatError } from '../../../media/media-format-error.js';
import { drawMockImage, drawMockImageProgressive, editMockImage, editMockImageProgressive, type MockImageFrame } from './mock-images.js';
import { MOCK_THUMBNAIL_SOURCE_SIDE, type MockImageJob, type MockImageWorkerReply, type MockImageWorkerRequest } from './mock-image-worker.js';

const cancelled = new Set<number>();
const queue: Array<{ id: number; job: MockImageJob }> = [];
let running = false;
let current: number | undefined;

function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * An image shown only as a thumbnail, shrunk (nearest neighbour) so that at
 * most {@link MOCK_THUMBNAIL_SOURCE_SIDE} pixels are kept on its longer
 * side: sixteen 4096² inputs never sit in memory together.
 */
function shrinkForThumbnail(bytes: Uint8Array): Uint8Array {
  const image = decodePng(bytes);
  const scale = MOCK_THUMBNAIL_SOURCE_SIDE / Math.max(image.width, image.height);
  if (scale >= 1) return bytes;
  const width = Math.max(1, Math.round(image.width * scale));
  const height = Math.max(1, Math.round(image.height * scale));
  const rgba = new Uint8Array(width * height * 4);
  for (let y = 0; y < height; y++) {
    const sourceRow = Math.floor(((y + 0.5) * image.height) / height) * image.width;
    for (let x = 0; x < width; x++) {
      const from = (sourceRow + Math.floor(((x + 0.5) * image.width) / width)) * 4;
      rgba.set(image.rgba.subarray(from, from + 4), (y * width + x) * 4);
    }
  }
  return encodePng(width, height, rgba);
}

function framesOf(job: MockImageJob): Iterable<MockImageFrame> {
  const { prompt, index, width, height, partialImages } = job;
  if (job.kind === 'generate') {
    return partialImages === null ? [{ kind: 'final', png: drawMockImage({ prompt, index, width, height }) }] : drawMockImageProgressive({ prompt, index, width, height, partialImages });
  }
  const [first, ...others] = job.imagePaths;
  const images = [readFileSync(first!), ...others.map((path) => shrinkForThumbnail(readFileSync(path)))];
  const mask = job.maskPath === undefined ? undefined : readFileSync(job.maskPath);
  const request = { prompt, index, width, height, images, ...(mask ? { mask } : {}) };
  return partialImages === null ? [{ kind: 'final', png: editMockImage(request) }] : editMockImageProgressive({ ...request, partialImages });
}

function reply(message: MockImageWorkerReply): void {
  parentPort!.postMessage(message);
}

async function run(id: number, job: MockImageJob): Promise<void> {
  current = id;
  try {
    for (const frame of framesOf(job)) {
      if (cancelled.has(id)) return;
      reply({ id, frame });
      await nextTurn();
    }
    reply({ id, done: true });
  } catch (error) {
    const reason = error instanceof MediaFormatError ? error.reason : undefined;
    reply({ id, error: { name: (error as Error).name, message: (error as Error).message, ...(reason ? { reason } : {}) } });
  } finally {
    current = undefined;
    cancelled.delete(id);
  }
}

async function drain(): Promise<void> {
  if (running) return;
  running = true;
  while (queue.length > 0) {
    const { id, job } = queue.shift()!;
    if (!cancelled.has(id)) await run(id, job);
    else cancelled.delete(id);
  }
  running = false;
}

parentPort!.on('message', (message: MockImageWorkerRequest) => {
  if (message.kind === 'cancel') {
    // A job that already ended has nothing to stop (its last reply crossed the cancel).
    if (current === message.id || queue.some((entry) => entry.id === message.id)) cancelled.add(message.id);
    return;
  }
  queue.push({ id: message.id, job: message.job });
  void drain();
});
