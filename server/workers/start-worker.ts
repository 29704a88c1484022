/**
 * Starts a worker thread on a module that sits beside its caller, whether
 * the gateway runs from TypeScript sources (`npm run dev` and the tests, under
 * tsx) or from the compiled JavaScript in dist/ that `npm start` runs.
 *
 * Node 20 cannot load TypeScript in a worker: a loader given through
 * `execArgv` (`--import tsx`, as the `tsx` CLI passes it) is ignored there
 * (nodejs/node#47747, fixed in Node 22.2). So a TypeScript entry is started
 * by a small script that loads it through tsx's API (about 0.4 s of CPU once
 * per worker); a compiled entry is started directly.
 */
import { Worker } from 'node:worker_threads';

const TYPESCRIPT_BOOTSTRAP = `
const { workerData } = require('node:worker_threads');
import(workerData.tsxApiUrl).then((tsx) => tsx.tsImport(workerData.entryUrl, workerData.entryUrl));
`;

/**
 * `entryName` without extension (e.g. `./mock-image-worker-entry`), resolved
 * against `callerUrl` (the caller's `import.meta.url`) with the caller's own
 * extension. The entry reads `workerData.data`.
 */
export function startModuleWorker(callerUrl: string, entryName: string, data?: unknown): Worker {
  const extension = new URL(callerUrl).pathname.endsWith('.ts') ? '.ts' : '.js';
  const entry = new URL(`${entryName}${extension}`, callerUrl);
  if (extension === '.js') return new Worker(entry, { workerData: { data } });
  return new Worker(TYPESCRIPT_BOOTSTRAP, { eval: true, workerData: { data, tsxApiUrl: import.meta.resolve('tsx/esm/api'), entryUrl: entry.href } });
}
