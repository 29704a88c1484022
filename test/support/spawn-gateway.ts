/**
 * A real gateway process (`server/main.ts` under tsx, or the compiled
 * `dist/server/main.js` that `npm start` runs), for tests that kill
 * it, cut its database, or measure its CPU and memory from outside. It exits
 * with the test process (see test/foundation/exit-with-parent.ts).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitFor } from './wait.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface SpawnedGateway {
  url: string;
  child: ChildProcess;
  /** Its stdout (JSON log lines) and stderr, the last 20 KB, for failure messages. */
  output(): string;
  alive(): boolean;
  /** CPU seconds (user + system) the process has used so far, from /proc. */
  cpuSeconds(): number;
  /** Resident memory, bytes, from /proc. */
  rssBytes(): number;
  /** SIGKILL, resolved once it exited. */
  kill(): Promise<void>;
}

const children = new Set<ChildProcess>();

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** exit-with-parent.ts for a process without tsx (the compiled gateway). */
const EXIT_WITH_PARENT_JS = `data:text/javascript,process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));`;

export interface SpawnOptions {
  readyTimeoutMs?: number;
  /** Run the compiled build (dist/, made by scripts/build.mjs) without tsx, as `npm start` does. */
  compiled?: boolean;
  /** Another Node.js binary (e.g. Node 24) than the one running the tests. */
  nodeBinary?: string;
}

/** Starts a gateway with `env` over these defaults and waits for `/readyz`. */
export async function spawnGateway(env: Record<string, string>, options: SpawnOptions = {}): Promise<SpawnedGateway> {
  const port = await freePort();
  if (options.compiled) {
    // As npm start does: compile first (nothing to do when dist/ is current).
    const build = spawnSync(options.nodeBinary ?? process.execPath, ['scripts/build.mjs', '--quiet'], { cwd: ROOT, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`scripts/build.mjs failed:\n${build.stderr}`);
  }
  const argv = options.compiled
    ? ['--enable-source-maps', '--import', EXIT_WITH_PARENT_JS, 'dist/server/main.js']
    : ['--import', 'tsx', '--import', './test/foundation/exit-with-parent.ts', 'server/main.ts'];
  const child = spawn(options.nodeBinary ?? process.execPath, argv, {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      GATEWAY_DEMO: '0',
      RATE_LIMITS: 'pro=0',
      REDIS_URL: '',
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  child.stderr!.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000)));
  const procStat = (): string[] => readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const gateway: SpawnedGateway = {
    url: `http://127.0.0.1:${port}`,
    child,
    output: () => output,
    alive: () => child.exitCode === null && child.signalCode === null,
    cpuSeconds: () => {
      const fields = procStat();
      // Fields 14 and 15 of /proc/<pid>/stat (utime, stime), in clock ticks (100 per second on Linux).
      return (Number(fields[11]) + Number(fields[12])) / 100;
    },
    rssBytes: () => Number(procStat()[21]) * 4096,
    async kill() {
      if (!gateway.alive()) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
  await waitFor(
    async () => {
      if (!gateway.alive()) throw new Error(`the gateway exited while starting:\n${output}`);
      return fetch(`${gateway.url}/readyz`).then(
        (answer) => answer.ok,
        () => false,
      );
    },
    { timeoutMs: options.readyTimeoutMs ?? 120_000, intervalMs: 200, message: 'the gateway to start' },
  );
  return gateway;
}

/** Kills every gateway this test process spawned (afterAll). */
export async function killSpawnedGateways(): Promise<void> {
  await Promise.all(
    [...children].map((child) => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      return exited;
    }),
  );
}
