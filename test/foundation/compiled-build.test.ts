/**
 * The compiled build: scripts/build.mjs (run by `npm ci` and `npm start`)
 * turns the TypeScript into dist/, and `node dist/server/main.js` — what
 * `npm start` runs, no tsx — serves the API, loads its worker threads from
 * compiled files and finds the files it reads at run time (the dashboard
 * bundle, the API reference's assets) in the project, not in dist/.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../server/auth/api-keys.js';
import { killSpawnedGateways, spawnGateway } from '../support/spawn-gateway.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

describe('compiled build', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'umg-compiled-'));

  afterAll(async () => {
    await killSpawnedGateways();
    rmSync(dir, { recursive: true, force: true });
  });

  it('npm start runs the compiled build, which scripts/build.mjs makes (and postinstall runs)', () => {
    const manifest = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(manifest.scripts.start).toMatch(/node scripts\/build\.mjs .*&& node dist\/server\/main\.js$/);
    expect(manifest.scripts.postinstall).toMatch(/^node scripts\/build\.mjs/);
    const build = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, encoding: 'utf8' });
    expect(build.status, build.stderr).toBe(0);
    expect(build.stdout).toMatch(/Compiled \d+ files|dist\/ is current/);
    for (const file of ['server/main.js', 'server/workers/start-worker.js', 'server/providers/mock/media/mock-image-worker-entry.js', 'compat/openapi.js']) {
      expect(existsSync(path.join(ROOT, 'dist', file)), file).toBe(true);
    }
    expect(existsSync(path.join(ROOT, 'dist/server/config.test.js'))).toBe(false);
  });

  it('starts from dist/ without tsx and serves the API, a worker-thread image, /docs and the dashboard', { timeout: 240_000 }, async () => {
    const key = generateApiKey();
    const gateway = await spawnGateway({ DATA_DIR: path.join(dir, 'data'), DATABASE_URL: '', GATEWAY_CONFIG: '', GATEWAY_BOOTSTRAP_KEY: key, GATEWAY_ADMIN_TOKEN: 'compiled-admin' }, { compiled: true, readyTimeoutMs: 180_000 });
    const models = (await (await fetch(`${gateway.url}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((model) => model.id)).toContain('mock-chat');

    const chat = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'Hello from the compiled build' }] }),
    });
    expect(chat.status).toBe(200);
    expect(((await chat.json()) as { object: string }).object).toBe('chat.completion');

    // The mock draws images in a worker thread, which loads the compiled entry next to its caller.
    const image = await fetch(`${gateway.url}/v1/images/generations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-image', prompt: 'a lighthouse', response_format: 'b64_json', size: '1024x1024' }),
    });
    expect(image.status, gateway.output()).toBe(200);
    const { data } = (await image.json()) as { data: { b64_json: string }[] };
    expect(Buffer.from(data[0]!.b64_json, 'base64').subarray(0, 8)).toEqual(PNG_SIGNATURE);

    expect((await fetch(`${gateway.url}/docs/assets/swagger-ui.css`)).status).toBe(200);
    const dashboard = await fetch(`${gateway.url}/dashboard`);
    expect(dashboard.status).toBe(200);
    expect(await dashboard.text()).toContain('<script');
    expect(gateway.output()).not.toMatch(/tsx/);
  });
});
