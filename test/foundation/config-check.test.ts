/**
 * A bad setting stops the gateway before it starts, with exit code 78 and a
 * line naming each bad variable; `npm run config -- --check` (server/cli/config.ts)
 * gives the same verdict on an environment and its catalog without starting.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PROCESS_BUDGET = { timeout: 120_000 };

function run(script: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd: ROOT, env: { ...process.env, DATABASE_URL: '', GATEWAY_CONFIG: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('configuration checked at start and by npm run config -- --check', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'umg-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses to start on bad variables: exit 78, each one named, nothing created', PROCESS_BUDGET, async () => {
    const dataDir = path.join(dir, 'never-created');
    const result = await run('server/main.ts', [], { DATA_DIR: dataDir, PORT: 'eighty', LOG_LEVEL: 'verbose', METRICS_TOKEN: '', GATEWAY_ADMIN_TOKEN: 'config-test-admin' });
    expect(result.code).toBe(78);
    expect(result.stderr).toContain('Invalid configuration:');
    expect(result.stderr).toContain('PORT: must be a whole number from 0 to 65535, got "eighty"');
    expect(result.stderr).toContain('LOG_LEVEL: must be one of debug, info, warn, error, silent, got "verbose"');
    expect(result.stderr).not.toContain('config-test-admin');
    expect(existsSync(dataDir)).toBe(false);
  });

  it('--check passes a good environment and catalog, and fails a bad catalog or variable with 78', PROCESS_BUDGET, async () => {
    const good = await run('server/cli/config.ts', ['--check'], { PORT: '9000', LOG_LEVEL: 'warn' });
    expect(good.code, good.stderr).toBe(0);
    expect(good.stdout).toContain('Catalog (demo catalog)');
    expect(good.stdout).toContain('Configuration is valid.');

    const catalogFile = path.join(dir, 'catalog.json');
    writeFileSync(catalogFile, JSON.stringify({ providers: [{ id: 'p', kind: 'no-such-kind' }], models: [] }));
    const badCatalog = await run('server/cli/config.ts', ['--check'], { GATEWAY_CONFIG: catalogFile });
    expect(badCatalog.code).toBe(78);
    expect(badCatalog.stderr).toContain('Invalid catalog:');
    expect(badCatalog.stderr).toContain(`GATEWAY_CONFIG ${catalogFile}`);

    const badVariable = await run('server/cli/config.ts', ['--check'], { VIDEO_STORAGE: 's3', REDIS_URL: 'http://not-redis' });
    expect(badVariable.code).toBe(78);
    expect(badVariable.stderr).toContain('REDIS_URL: must be a URL (redis:// or rediss://)');
    expect(badVariable.stderr).not.toContain('not-redis');
  });
});
