/**
 * Catalog reload of a gateway process (`npm start`'s server/main.ts): SIGHUP
 * reads GATEWAY_CONFIG again, and so does the admin CLI's `catalog:reload`;
 * a broken file leaves the running catalog and the log or the CLI says why.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogFile } from '../../server/catalog/catalog.schema.js';
import { runAdminCli } from '../support/admin-cli.js';
import { getJson } from '../support/http.js';
import { killSpawnedGateways, spawnGateway, type SpawnedGateway } from '../support/spawn-gateway.js';
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
});
