/**
 * The admin token of a fleet: several instances on one PostgreSQL database
 * check the database's token. The first start of the database generates it
 * and writes it to that instance's DATA_DIR/admin-token (never over a file,
 * never again); admin-token:rotate changes it for every instance at once;
 * GATEWAY_ADMIN_TOKEN set on an instance makes it the fleet's; `--direct`
 * on the database recovers a lost token and never touches a token file. The
 * CLI's 401 says which token it tried.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { runAdminCli, stopAdminCliRuns, type CliRun } from '../support/admin-cli.js';
import { waitFor } from '../support/wait.js';
import { expectTrpcError, trpcMutation, trpcQuery } from './http.js';

/** A budget, not an assertion: each CLI run starts a process (tens of seconds on a loaded two-core machine). */
const SPAWN_BUDGET = { timeout: 300_000 };
/** How long a rotation may take to reach another instance (a notification, then one read). */
const FOLLOW_BUDGET = { timeoutMs: 30_000, message: 'the other instance to take the new admin token' };

const databases: TestDatabase[] = [];
const gateways: TestGateway[] = [];
const dirs: string[] = [];
let database: TestDatabase;
let a: TestGateway;
let b: TestGateway;
let dirA: string;
let dirB: string;

function tempDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'umg-admin-token-'));
  dirs.push(dir);
  return dir;
}

/** A gateway on `databaseUrl` with DATA_DIR `dataDir` and, unless given, no GATEWAY_ADMIN_TOKEN. */
async function instance(databaseUrl: string, dataDir: string, adminToken?: string, logLines?: string[]): Promise<TestGateway> {
  const gateway = await startTestGateway({ databaseUrl, config: { adminToken, dataDir }, logLines });
  gateways.push(gateway);
  return gateway;
}

/** The HTTP status of an admin call with `token`. */
async function adminStatus(gateway: TestGateway, token: string): Promise<number> {
  return (await trpcQuery(gateway.url, 'admin.accounts.list', { limit: 1 }, token)).status;
}

function json<T>(run: CliRun): T {
  expect(run.code, `exit ${run.code}\nstdout: ${run.stdout}\nstderr: ${run.stderr}`).toBe(0);
  return JSON.parse(run.stdout) as T;
}

beforeAll(async () => {
  database = await createTestDatabase();
  databases.push(database);
  dirA = tempDir();
  dirB = tempDir();
  a = await instance(database.url, dirA);
  b = await instance(database.url, dirB);
});

afterAll(async () => {
  stopAdminCliRuns();
  for (const gateway of gateways) await gateway.close();
  for (const each of databases) await each.drop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the admin token of two instances on one PostgreSQL database', SPAWN_BUDGET, () => {
  let fileToken: string;

  it('is generated once, written only into the first instance\'s DATA_DIR (0600), and accepted by both', async () => {
    fileToken = readFileSync(path.join(dirA, 'admin-token'), 'utf8').trim();
    expect(fileToken).toMatch(/^umg-admin-/);
    expect(statSync(path.join(dirA, 'admin-token')).mode & 0o777).toBe(0o600);
    expect(existsSync(path.join(dirB, 'admin-token'))).toBe(false);
    expect(await adminStatus(a, fileToken)).toBe(200);
    expect(await adminStatus(b, fileToken)).toBe(200);
  });

  it('the CLI reads the file of the instance that wrote it, and names the file it could not find', async () => {
    const [throughB, noFile] = await Promise.all([
      runAdminCli(['accounts:list'], { GATEWAY_URL: b.url, DATA_DIR: dirA }),
      runAdminCli(['accounts:list'], { GATEWAY_URL: b.url, DATA_DIR: dirB }),
    ]);
    expect(Array.isArray(json(throughB))).toBe(true);
    expect(noFile.code).toBe(2);
    expect(noFile.stderr).toContain(`${path.join(dirB, 'admin-token')} does not exist`);
    expect(noFile.stderr).toContain('GATEWAY_ADMIN_TOKEN');
  });

  it('admin-token:rotate changes it for every instance at once, and leaves the file as it was', async () => {
    const rotated = json<{ admin_token: string; note: string }>(await runAdminCli(['admin-token:rotate'], { GATEWAY_URL: a.url, DATA_DIR: dirA }));
    expect(rotated.admin_token).toMatch(/^umg-admin-/);
    expect(rotated.admin_token).not.toBe(fileToken);
    expect(await adminStatus(a, rotated.admin_token)).toBe(200);
    await waitFor(async () => (await adminStatus(b, rotated.admin_token)) === 200, FOLLOW_BUDGET);
    expect(await adminStatus(a, fileToken)).toBe(401);
    expect(await adminStatus(b, fileToken)).toBe(401);
    expect(readFileSync(path.join(dirA, 'admin-token'), 'utf8').trim()).toBe(fileToken);

    // The CLI still reading the old file says which token it tried, and how to get the right one.
    const stale = await runAdminCli(['accounts:list'], { GATEWAY_URL: b.url, DATA_DIR: dirA });
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain('UNAUTHORIZED_ADMIN');
    expect(stale.stderr).toContain(`The gateway at ${b.url} refused the admin token from ${path.join(dirA, 'admin-token')}.`);
    expect(stale.stderr).toContain('admin-token:rotate --direct');
    expect(stale.stderr).not.toContain(fileToken);
  });

  it('--direct on the database recovers a lost token for every instance, without touching a token file', async () => {
    const before = readFileSync(path.join(dirA, 'admin-token'), 'utf8');
    const recovered = json<{ admin_token: string }>(await runAdminCli(['admin-token:rotate', '--direct'], { DATABASE_URL: database.url, DATA_DIR: dirA }));
    await waitFor(async () => (await adminStatus(a, recovered.admin_token)) === 200, FOLLOW_BUDGET);
    await waitFor(async () => (await adminStatus(b, recovered.admin_token)) === 200, FOLLOW_BUDGET);
    expect(readFileSync(path.join(dirA, 'admin-token'), 'utf8')).toBe(before);
    expect(existsSync(path.join(dirB, 'admin-token'))).toBe(false);
  });

  it('GATEWAY_ADMIN_TOKEN on an instance becomes every instance\'s token; rotating it through the API is refused', async () => {
    const fleetToken = 'umg-admin-fleet-token-set-by-the-operator';
    const dirC = tempDir();
    const c = await instance(database.url, dirC, fleetToken);
    expect(await adminStatus(c, fleetToken)).toBe(200);
    await waitFor(async () => (await adminStatus(a, fleetToken)) === 200, FOLLOW_BUDGET);
    await waitFor(async () => (await adminStatus(b, fleetToken)) === 200, FOLLOW_BUDGET);
    expect(existsSync(path.join(dirC, 'admin-token'))).toBe(false);

    const refused = expectTrpcError(await trpcMutation(c.url, 'admin.adminToken.rotate', undefined, fleetToken), 400, 'INVALID_REQUEST');
    expect(refused.message).toContain('GATEWAY_ADMIN_TOKEN');
    expect(await adminStatus(b, fleetToken)).toBe(200);
  });
});

describe('a token file already in DATA_DIR', () => {
  it('is taken over by the first start of a new database, and left as it was', async () => {
    const fresh = await createTestDatabase();
    databases.push(fresh);
    const dir = tempDir();
    writeFileSync(path.join(dir, 'admin-token'), 'umg-admin-left-by-an-embedded-gateway\n', { mode: 0o600 });
    const gateway = await instance(fresh.url, dir);
    expect(await adminStatus(gateway, 'umg-admin-left-by-an-embedded-gateway')).toBe(200);
    expect(readFileSync(path.join(dir, 'admin-token'), 'utf8')).toBe('umg-admin-left-by-an-embedded-gateway\n');
  });

  it('that is not the database\'s token is named in a warning at start, and left as it was', async () => {
    const dir = tempDir();
    writeFileSync(path.join(dir, 'admin-token'), 'umg-admin-stale\n', { mode: 0o600 });
    const lines: string[] = [];
    await instance(database.url, dir, undefined, lines);
    const warning = lines.map((line) => JSON.parse(line) as Record<string, unknown>).find((line) => line.event === 'admin.token_file_stale');
    expect(warning).toMatchObject({ level: 'warn', file: path.join(dir, 'admin-token') });
    expect(JSON.stringify(lines)).not.toContain('umg-admin-stale');
    expect(readFileSync(path.join(dir, 'admin-token'), 'utf8')).toBe('umg-admin-stale\n');
  });
});
