/**
 * Catalog reload of a gateway process (`npm start`'s server/main.ts): SIGHUP
 * reads GATEWAY_CONFIG again, and so does the admin CLI's `catalog:reload`;
 * a broken file leaves the running catalog and the log or the CLI says why.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogFile } from '../../server/catalog/catalog.schema.js';
import { runAdminCli } from '../support/admin-cli.js';
import { getJson } from '../support/http.js';
import { killSpawnedGateways, listeningUrl, spawnGateway, type SpawnedGateway } from '../support/spawn-gateway.js';
import { waitFor } from '../support/wait.js';

/** Budgets for a loaded machine (a spawned gateway or a CLI run may take tens of seconds), not expectations. */
const SPAWN_BUDGET = { timeout: 240_000 };
const DEADLINE_MS = 30_000;
const ADMIN_TOKEN = 'reload-signal-admin-token-0123456789';

function mockCatalog(modelIds: string[]): CatalogFile {
  return {
    providers: [{ id: 'mock', kind: 'mock' }],
    models: modelIds.map((id) => ({ id, ownedBy: 'test', provider: 'mock', upstreamModel: 'mock-chat', endpoints: ['/v1/chat/completions' as const], pricing: { input: 0, output: 0 } })),
  };
}

let directory: string;
let catalogFile: string;
let gateway: SpawnedGateway;

async function listedModels(): Promise<string[]> {
  const answer = await getJson(`${gateway.url}/v1/models`);
  return (answer.body.data as Array<{ id: string }>).map((model) => model.id);
}

beforeAll(async () => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'umg-reload-signal-'));
  catalogFile = path.join(directory, 'catalog.yaml');
  // YAML: the file kind a reload reads is the one the start read (JSON is a subset anyway).
  writeFileSync(catalogFile, 'providers:\n  - { id: mock, kind: mock }\nmodels:\n  - { id: first, ownedBy: test, provider: mock, upstreamModel: mock-chat, endpoints: [/v1/chat/completions], pricing: { input: 0, output: 0 } }\n');
  gateway = await spawnGateway({ GATEWAY_CONFIG: catalogFile, DATA_DIR: path.join(directory, 'data'), GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN, LOG_LEVEL: 'info' });
}, SPAWN_BUDGET.timeout);

afterAll(async () => {
  await killSpawnedGateways();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe('reloading a gateway process', () => {
  it('SIGHUP loads the changed file; a broken one changes nothing and the log says why', SPAWN_BUDGET, async () => {
    expect(await listedModels()).toEqual(['first']);
    writeFileSync(catalogFile, JSON.stringify(mockCatalog(['second', 'third'])));
    gateway.child.kill('SIGHUP');
    await waitFor(async () => (await listedModels()).join() === 'second,third', { timeoutMs: DEADLINE_MS, message: 'the process to serve the reloaded catalog' });
    // The log is written asynchronously: its line may follow the catalog it announces.
    await waitFor(() => /"event":"catalog\.reloaded","trigger":"sighup"/.test(gateway.output()), { timeoutMs: DEADLINE_MS, message: 'the reload to be logged' });

    writeFileSync(catalogFile, 'providers: [\n');
    gateway.child.kill('SIGHUP');
    await waitFor(() => gateway.output().includes('"event":"catalog.reload_failed"'), { timeoutMs: DEADLINE_MS, message: 'the failed reload to be logged' });
    expect(gateway.output()).toMatch(/"event":"catalog\.reload_failed","trigger":"sighup","message":"GATEWAY_CONFIG [^"]*catalog\.yaml: not valid YAML at line \d+, column \d+/);
    expect(gateway.alive()).toBe(true);
    expect(await listedModels()).toEqual(['second', 'third']);
  });

  it('the admin CLI reloads through the running gateway, and prints why it refused a broken file', SPAWN_BUDGET, async () => {
    const env = { GATEWAY_URL: gateway.url, GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN };
    writeFileSync(catalogFile, JSON.stringify(mockCatalog(['third', 'fourth'])));
    const run = await runAdminCli(['catalog:reload'], env);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ models: 2, added: ['fourth'], removed: ['second'], unset_secrets: [] });
    expect(await listedModels()).toEqual(['third', 'fourth']);

    writeFileSync(catalogFile, JSON.stringify({ ...mockCatalog(['fifth']), providers: [] }));
    const refused = await runAdminCli(['catalog:reload'], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/The catalog was not reloaded \(the running one stays\): GATEWAY_CONFIG .*catalog\.yaml: models\[0\]\.provider: unknown provider/);
    expect(await listedModels()).toEqual(['third', 'fourth']);
  });

  it('a SIGHUP while the process starts does not end it: the reload runs once it serves', SPAWN_BUDGET, async () => {
    const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
    const dataDir = path.join(directory, 'starting-data');
    const startingCatalog = path.join(directory, 'starting.json');
    writeFileSync(startingCatalog, JSON.stringify(mockCatalog(['early'])));
    const child = spawn(process.execPath, ['--import', 'tsx', '--import', './test/foundation/exit-with-parent.ts', 'server/main.ts'], {
      cwd: root,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', GATEWAY_DEMO: '0', REDIS_URL: '', DATABASE_URL: '', DATA_DIR: dataDir, GATEWAY_CONFIG: startingCatalog, LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    try {
      const announced = listeningUrl(child, SPAWN_BUDGET.timeout, () => output);
      announced.catch(() => undefined);
      // The data directory is made by the start itself, after the entry module installed its handlers.
      await waitFor(() => existsSync(dataDir) || child.exitCode !== null, { timeoutMs: 120_000, intervalMs: 20, message: 'the process to begin its start' });
      child.kill('SIGHUP');
      const url = await announced;
      await waitFor(() => /"event":"catalog\.reloaded","trigger":"sighup"/.test(output), { timeoutMs: DEADLINE_MS, message: 'the remembered reload to run' });
      expect(child.exitCode).toBeNull();
      expect(child.signalCode).toBeNull();
      const models = await getJson(`${url}/v1/models`);
      expect((models.body.data as Array<{ id: string }>).map((model) => model.id)).toEqual(['early']);
    } finally {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
    }
  });
});
