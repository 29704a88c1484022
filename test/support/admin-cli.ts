/**
 * The operator's CLI (server/cli/admin.ts) spawned as a user runs it, in an
 * environment cleared of anything that would point it elsewhere.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Variables of the test process that must not reach the CLI unless a test gives them. */
const CLEARED = ['DATABASE_URL', 'DATA_DIR', 'GATEWAY_URL', 'GATEWAY_ADMIN_TOKEN', 'PORT', 'HOST', 'GATEWAY_CONFIG', 'GATEWAY_BOOTSTRAP_KEY'];

const running = new Set<ChildProcess>();

/** Runs `npm run admin -- <args>` (without npm's banner) with `env` over a cleared environment. */
export function runAdminCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  const base: NodeJS.ProcessEnv = { ...process.env };
  for (const name of CLEARED) delete base[name];
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'server/cli/admin.ts', ...args], { cwd: ROOT, env: { ...base, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (error) => resolve({ code: null, stdout, stderr: `${stderr}${error.message}` }));
    child.on('close', (code) => {
      running.delete(child);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Ends the CLI runs still going (a failed test's). */
export function stopAdminCliRuns(): void {
  for (const child of running) child.kill('SIGKILL');
}
