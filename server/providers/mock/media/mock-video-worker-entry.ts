/**
 * Entry point of the worker thread started by `renderMockVideoInWorker`
 * (mock-video-worker.ts): renders what `workerData` asks for and posts the
 * result back. A thrown error becomes the Worker's `error` event.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { renderMockVideo, renderMockVideoToFiles } from './mock-video.js';
import type { MockVideoWorkerData } from './mock-video-worker.js';

const data = (workerData as { data: MockVideoWorkerData }).data;
const result = data.kind === 'files' ? await renderMockVideoToFiles(data.request) : await renderMockVideo(data.request);
parentPort?.postMessage(result);
