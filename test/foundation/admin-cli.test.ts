/**
 * The operator's CLI (server/cli/admin.ts), spawned as a user runs it: against
 * a running gateway with GATEWAY_URL and GATEWAY_ADMIN_TOKEN, and with
 * `--direct` on an embedded (PGlite) data directory, free or held by a
 * running gateway process.
 *
 * Each spawn costs about a second of start-up, so the independent runs start
 * together in beforeAll and the tests await their results.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer, postJson, type Json } from '../support/http.js';
import { listeningUrl } from '../support/spawn-gateway.js';
import { waitFor } from '../support/wait.js';
import { CHAT_BODY } from './http.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = 'server/cli/admin.ts';
/**
 * A budget, not an assertion: a spawned process starts in about a second, much
 * slower on a busy machine (10–30 s per CLI run seen at a load average of 20 on two cores).
 */
const SPAWN_BUDGET = { timeout: 180_000 };
/**
 * How long `npm start` on a fresh data directory may take to answer /healthz:
 * 28 s alone at a load average of 22 on two cores, over 100 s beside the CLI
 * runs of this file and another test file.
 */
const GATEWAY_START_BUDGET_MS = 170_000;

interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment of a user's shell, without anything that would point the CLI somewhere else. */
function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['DATABASE_URL', 'DATA_DIR', 'GATEWAY_URL', 'GATEWAY_ADMIN_TOKEN', 'PORT', 'HOST', 'GATEWAY_CONFIG', 'GATEWAY_BOOTSTRAP_KEY']) delete env[name];
  return { ...env, LOG_LEVEL: 'warn', ...extra };
}

/** Every process this file started, so afterAll can end the ones still running (even after a failed hook). */
const children = new Set<ChildProcess>();

function runNode(script: string, args: string[], env: NodeJS.ProcessEnv, options: { exitWithParent?: boolean } = {}): ChildProcess {
  const child = options.exitWithParent
    ? spawn(process.execPath, ['--import', 'tsx', '--import', './test/foundation/exit-with-parent.ts', script, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe', 'ipc'] })
    : spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

function runCli(args: string[], env: Record<string, string>): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = runNode(CLI, args, baseEnv(env));
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', (error) => resolve({ code: null, stdout, stderr: `${stderr}${error.message}` }));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function parseJson<T = Json>(run: CliRun): T {
  expect(run.code, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(0);
  return JSON.parse(run.stdout) as T;
}

/** `npm start` on an embedded data directory; resolves once /healthz answers. */
async function startGatewayProcess(dataDir: string): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = runNode('server/main.ts', [], baseEnv({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', GATEWAY_DEMO: '0' }), { exitWithParent: true });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let url = '';
  const answersHealthz = async (): Promise<boolean> => {
    if (child.exitCode !== null) throw new Error(`the gateway process exited with ${child.exitCode}: ${output}`);
    try {
      return (await fetch(`${url}/healthz`)).status === 200;
    } catch {
      return false; // not listening yet
    }
  };
  try {
    url = await listeningUrl(child, GATEWAY_START_BUDGET_MS, () => output);
    await waitFor(answersHealthz, { timeoutMs: GATEWAY_START_BUDGET_MS, intervalMs: 100, message: 'the gateway process to answer /healthz' });
  } catch (error) {
    throw new Error(`${(error as Error).message}: ${output}`);
  }
  return { child, url, output: () => output };
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timer);
}

let gateway: TestGateway;
let remoteEnv: Record<string, string>;
const tempDirs: string[] = [];

/** Independent runs, started together in beforeAll. */
let help: Promise<CliRun>;
let unknownCommand: Promise<CliRun>;
let wrongToken: Promise<CliRun>;
let directFresh: Promise<CliRun>;
let freshDataDir: string;
let directRefused: Promise<{ run: CliRun; dataDir: string }>;
let directHeld: Promise<{ direct: CliRun; tokenFromFile: CliRun; dataDir: string }>;

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'umg-cli-'));
  tempDirs.push(dir);
  return dir;
}

beforeAll(async () => {
  gateway = await startTestGateway();
  remoteEnv = { GATEWAY_URL: gateway.url, GATEWAY_ADMIN_TOKEN: gateway.adminToken, DATA_DIR: tempDir() };
  wrongToken = runCli(['accounts:list'], { ...remoteEnv, GATEWAY_ADMIN_TOKEN: 'not-the-admin-token' });

  const heldDir = tempDir();
  directHeld = (async () => {
    const running = await startGatewayProcess(heldDir);
    const [direct, tokenFromFile] = await Promise.all([
      runCli(['accounts:create', '--direct', '--name', 'intruder'], { DATA_DIR: heldDir }),
      // Without GATEWAY_ADMIN_TOKEN the CLI reads DATA_DIR/admin-token, written by the gateway's first start.
      runCli(['accounts:list'], { DATA_DIR: heldDir, GATEWAY_URL: running.url }),
    ]);
    return { direct, tokenFromFile, dataDir: heldDir };
  })();
  // Nobody waits on it before the tests: keep a failure for the test that reads it.
  directHeld.catch(() => undefined);

  freshDataDir = tempDir();
  directFresh = runCli(['accounts:create', '--direct', '--create-database', '--name', 'offline', '--credits', '3'], { DATA_DIR: freshDataDir });
  // A PostgreSQL gateway's data directory: its admin-token, no embedded database.
  const foreignDir = tempDir();
  writeFileSync(path.join(foreignDir, 'admin-token'), 'umg-admin-of-another-gateway\n', { mode: 0o600 });
  directRefused = runCli(['accounts:list', '--direct'], { DATA_DIR: foreignDir }).then((run) => ({ run, dataDir: foreignDir }));

  help = runCli(['help'], {});
  unknownCommand = runCli(['accounts:explode'], {});
});

afterAll(async () => {
  // The held gateway runs until stopped; every other process is a CLI run that ends by itself.
  await Promise.all([...children].map((child) => stopProcess(child)));
  await gateway?.close();
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

describe('admin CLI against a running gateway', SPAWN_BUDGET, () => {
  let accountId: string;
  let key: string;
  let keyId: string;

  it('help lists every command', async () => {
    const run = await help;
    expect(run.code).toBe(0);
    for (const command of ['accounts:create', 'accounts:list', 'accounts:get', 'accounts:set-plan', 'accounts:disable', 'accounts:enable', 'accounts:adjust-credits', 'accounts:set-ip-allowlist', 'keys:create', 'keys:list', 'keys:rename', 'keys:enable', 'keys:disable', 'keys:delete', 'accounts:set-daily-limit', 'accounts:set-reset-cycle', 'admin-token:rotate', 'help']) {
      expect(run.stdout).toContain(command);
    }
  });

  it('accounts:create prints the account as JSON with an id', async () => {
    const account = parseJson<{ id: string; name: string; current_credits: number; plan: string; disabled: boolean }>(
      await runCli(['accounts:create', '--name', 'x', '--credits', '5'], remoteEnv),
    );
    expect(account.id).toMatch(/^acct_/);
    expect(account).toMatchObject({ name: 'x', current_credits: 5, plan: 'pro', disabled: false });
    accountId = account.id;
  });

  it('keys:create prints the full key once', async () => {
    const created = parseJson<{ id: string; key: string; display: string; account_id: string }>(
      await runCli(['keys:create', '--account', accountId, '--name', 'cli key'], remoteEnv),
    );
    expect(created.key).toMatch(/^sk-umg-[0-9A-Za-z]{40,}$/);
    expect(created.display).toBe(`sk-umg-…${created.key.slice(-4)}`);
    expect(created.account_id).toBe(accountId);
    key = created.key;
    keyId = created.id;
  });

  it('the printed key authenticates against the gateway', async () => {
    const answer = await postJson(`${gateway.url}/v1/chat/completions`, CHAT_BODY, bearer(key));
    expect(answer.status, answer.text).toBe(200);
  });

  it('keys:list shows only the display form, never the full key', async () => {
    const run = await runCli(['keys:list', '--account', accountId], remoteEnv);
    const keys = parseJson<Array<Record<string, unknown>>>(run);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ id: keyId, name: 'cli key', display: `sk-umg-…${key.slice(-4)}`, enabled: true });
    expect(keys[0]).not.toHaveProperty('key');
    expect(keys[0]).not.toHaveProperty('key_hash');
    expect(run.stdout).not.toContain(key);
    expect(run.stdout).not.toContain(key.slice(7, 20));
  });

  it('keys:disable makes the gateway refuse the key', async () => {
    const disabled = parseJson<{ id: string; enabled: boolean }>(await runCli(['keys:disable', '--key', keyId], remoteEnv));
    expect(disabled).toMatchObject({ id: keyId, enabled: false });
    const answer = await postJson(`${gateway.url}/v1/chat/completions`, CHAT_BODY, bearer(key));
    expect(answer.status, answer.text).toBe(401);
    expect((answer.body.error as Json).code).toBe('INVALID_KEY');
  });

  it('a wrong admin token fails with a non-zero exit and a clear message', async () => {
    const run = await wrongToken;
    expect(run.code).not.toBe(0);
    expect(run.code).not.toBeNull();
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/admin token/i);
    expect(run.stderr).toContain('UNAUTHORIZED_ADMIN');
    expect(run.stderr).not.toContain('not-the-admin-token');
    // Which token it tried, and where to find the right one.
    expect(run.stderr).toContain(`The gateway at ${gateway.url} refused the admin token from GATEWAY_ADMIN_TOKEN.`);
    expect(run.stderr).toContain('admin-token:rotate --direct');
  });

  it('sets the daily limit and the reset cycle of an account', async () => {
    const limited = parseJson<{ daily_limit: number | null; reset_cycle_days: number }>(await runCli(['accounts:set-daily-limit', '--account', accountId, '--limit', '7.5'], remoteEnv));
    expect(limited.daily_limit).toBe(7.5);
    const [cycle, unlimited, notANumber] = await Promise.all([
      runCli(['accounts:set-reset-cycle', '--account', accountId, '--days', '7'], remoteEnv),
      runCli(['accounts:set-daily-limit', '--account', accountId, '--limit', 'none'], remoteEnv),
      runCli(['accounts:set-daily-limit', '--account', accountId, '--limit', 'lots'], remoteEnv),
    ]);
    expect(parseJson<{ reset_cycle_days: number }>(cycle).reset_cycle_days).toBe(7);
    expect(parseJson<{ daily_limit: number | null }>(unlimited).daily_limit).toBeNull();
    expect(notANumber.code).toBe(2);
    expect(notANumber.stderr).toContain('--limit must be a number');
    const account = parseJson<{ daily_limit: number | null; reset_cycle_days: number }>(await runCli(['accounts:get', '--account', accountId], remoteEnv));
    expect(account).toMatchObject({ daily_limit: null, reset_cycle_days: 7 });
  });

  it('refuses a plan that RATE_LIMITS does not know, naming the plans', async () => {
    const run = await runCli(['accounts:create', '--name', 'gold digger', '--plan', 'gold'], remoteEnv);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const { error } = JSON.parse(run.stderr.split('\n')[0]!) as { error: { code: string; status: number; message: string } };
    expect(error).toMatchObject({ code: 'INVALID_REQUEST', status: 400 });
    expect(error.message).toContain('Unknown plan "gold"');
    expect(error.message).toContain('"free", "pro"');
  });

  it('prints every answer with snake_case field names', async () => {
    const [pool, health] = await Promise.all([runCli(['discounts:get'], remoteEnv), runCli(['providers:health'], remoteEnv)]);
    expect(Object.keys(parseJson<Record<string, unknown>>(pool)).sort()).toEqual(['max_percentage', 'min_percentage', 'models', 'per_account']);
    expect(parseJson<Record<string, unknown>>(health)).toMatchObject({ instance_id: expect.any(String), window_ms: expect.any(Number), cooldown_ms: expect.any(Number) });
  });

  it('an unknown command exits 2 and names the command', async () => {
    const run = await unknownCommand;
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Unknown command "accounts:explode"');
  });
});

describe('admin CLI with --direct on an embedded data directory', SPAWN_BUDGET, () => {
  it('refuses a data directory without a database unless asked to create one, and leaves its admin-token alone', async () => {
    const { run, dataDir } = await directRefused;
    expect(run.code, run.stderr).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toContain(`${dataDir} holds no embedded database and DATABASE_URL is not set`);
    expect(run.stderr).toContain('--create-database');
    expect(existsSync(path.join(dataDir, 'PG_VERSION'))).toBe(false);
    expect(readFileSync(path.join(dataDir, 'admin-token'), 'utf8')).toBe('umg-admin-of-another-gateway\n');
  });

  it('creates an account in a fresh data directory with --create-database, and writes no admin-token there', async () => {
    const account = parseJson<{ id: string; name: string; current_credits: number }>(await directFresh);
    expect(account.id).toMatch(/^acct_/);
    expect(account).toMatchObject({ name: 'offline', current_credits: 3 });
    expect(readdirSync(freshDataDir)).not.toContain('admin-token');
  });

  it('refuses a data directory held by a running gateway with a clear "in use" message', async () => {
    const { direct, dataDir } = await directHeld;
    expect(direct.code, direct.stdout).not.toBe(0);
    expect(direct.code).not.toBeNull();
    expect(direct.stdout).toBe('');
    expect(direct.stderr).toMatch(/in use/i);
    expect(direct.stderr).toContain(dataDir);
  });

  it('finds the admin token in DATA_DIR/admin-token when GATEWAY_ADMIN_TOKEN is not set', async () => {
    const { tokenFromFile } = await directHeld;
    expect(Array.isArray(parseJson<unknown[]>(tokenFromFile))).toBe(true);
  });
});
