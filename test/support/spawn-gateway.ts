/**
 * A real gateway process (`server/main.ts` under tsx, or the compiled
 * `dist/server/main.js` that `npm start` runs), for tests that kill
 * it, cut its database, or measure its CPU and memory from outside. It exits
 * with the test process (see test/foundation/exit-with-parent.ts).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

/**
 * The URL a gateway process spawned with an IPC channel announces once it
 * listens (server/main.ts). Its PORT is 0: the kernel picks a free port at
 * the listen itself, where a port probed free beforehand can be taken by
 * another test's server in between (and the test would talk to that one).
 */
export function listeningUrl(child: ChildProcess, timeoutMs: number, output: () => string = () => ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const done = (settle: () => void) => {
      clearTimeout(timer);
      child.off('message', onMessage);
      child.off('exit', onExit);
      settle();
    };
    const onMessage = (message: unknown) => {
      const announced = message as { event?: unknown; url?: unknown } | null;
      if (announced?.event === 'gateway.listening' && typeof announced.url === 'string') done(() => resolve(announced.url as string));
    };
    const onExit = (code: number | null, signal: string | null) => done(() => reject(new Error(`the gateway exited while starting (${signal ?? code}):\n${output()}`)));
    const timer = setTimeout(() => done(() => reject(new Error(`the gateway did not announce its URL within ${timeoutMs} ms:\n${output()}`))), timeoutMs);
    child.on('message', onMessage);
    child.once('exit', onExit);
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
      PORT: '0',
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
  const readyTimeoutMs = options.readyTimeoutMs ?? 120_000;
  const announced = listeningUrl(child, readyTimeoutMs, () => output);
  // Its exit is reported by the wait below; this one only must not go unhandled meanwhile.
  announced.catch(() => undefined);
  const gateway: SpawnedGateway = {
    url: '',
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
  gateway.url = await announced;
  await waitFor(
    async () => {
      if (!gateway.alive()) throw new Error(`the gateway exited while starting:\n${output}`);
      return fetch(`${gateway.url}/readyz`).then(
        (answer) => answer.ok,
        () => false,
      );
    },
    { timeoutMs: readyTimeoutMs, intervalMs: 200, message: 'the gateway to start' },
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
