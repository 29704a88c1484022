/**
 * A real gateway process, measured from outside: keyless clients uploading
 * large bodies cost it no memory, and one huge prompt costs it bounded CPU
 * while /healthz keeps answering. Figures are printed; the assertions are
 * on memory and CPU seconds (work), not on wall-clock time.
 */
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../server/auth/api-keys.js';
import { killSpawnedGateways, spawnGateway, type SpawnedGateway } from '../support/spawn-gateway.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'umg-bounds-'));
const key = generateApiKey();
let gateway: SpawnedGateway;

beforeAll(async () => {
  const catalogFile = path.join(dir, 'catalog.json');
  writeFileSync(
    catalogFile,
    JSON.stringify({
      providers: [{ id: 'mock', kind: 'mock' }],
      models: [{ id: 'mock-chat', ownedBy: 'umg', provider: 'mock', upstreamModel: 'mock-chat', endpoints: ['/v1/chat/completions', '/v1/messages/count_tokens'], pricing: { input: 0.01, output: 0.01 } }],
    }),
  );
  gateway = await spawnGateway({ DATA_DIR: path.join(dir, 'data'), GATEWAY_CONFIG: catalogFile, GATEWAY_BOOTSTRAP_KEY: key, GATEWAY_BOOTSTRAP_CREDITS: '1000', GATEWAY_ADMIN_TOKEN: 'bounds-admin', AUTH_FAILURES_PER_MINUTE: '1000' });
}, 180_000);

afterAll(async () => {
  await killSpawnedGateways();
  rmSync(dir, { recursive: true, force: true });
});

/** Starts a keyless 19 MB upload, sends `sentBytes` of it and holds; resolves with the status once answered. */
function keylessUpload(sentBytes: number): { status: Promise<number>; close(): void } {
  const target = new URL(gateway.url);
  const request = http.request({ host: target.hostname, port: target.port, path: '/v1/chat/completions', method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': String(19 * 1024 * 1024) } });
  const status = new Promise<number>((resolve, reject) => {
    request.once('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.once('error', reject);
  });
  request.write(Buffer.alloc(sentBytes, 0x61));
  return { status, close: () => request.destroy() };
}

describe('resources a client can take', () => {
  it('refuses 100 keyless 19 MB uploads at once, and its memory stays flat', async () => {
    const before = gateway.rssBytes();
    const uploads = Array.from({ length: 100 }, () => keylessUpload(1024 * 1024));
    const statuses = await Promise.all(uploads.map((upload) => upload.status));
    const during = gateway.rssBytes();
    for (const upload of uploads) upload.close();
    process.stdout.write(`keyless uploads: RSS ${(before / 1e6).toFixed(0)} MB before, ${(during / 1e6).toFixed(0)} MB with 100 open (+${((during - before) / 1e6).toFixed(1)} MB)\n`);
    expect(statuses.every((status) => status === 401)).toBe(true);
    expect(during - before).toBeLessThan(100 * 1024 * 1024);
  });

  it('spends bounded CPU on a 19 MB single-character prompt, and /healthz answers throughout', async () => {
    const prompt = 'a'.repeat(19 * 1024 * 1024);
    const cpuBefore = gateway.cpuSeconds();
    let polling = true;
    let healthAnswers = 0;
    let healthFailures = 0;
    let slowestHealthMs = 0;
    const poll = (async () => {
      while (polling) {
        const started = performance.now();
        const answer = await fetch(`${gateway.url}/healthz`).catch(() => undefined);
        slowestHealthMs = Math.max(slowestHealthMs, performance.now() - started);
        if (answer?.ok) healthAnswers++;
        else healthFailures++;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const answer = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-chat', max_tokens: 16, messages: [{ role: 'user', content: prompt }] }),
    });
    await answer.arrayBuffer();
    const count = await fetch(`${gateway.url}/v1/messages/count_tokens`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: prompt }] }),
    });
    const counted = (await count.json()) as { input_tokens: number };
    polling = false;
    await poll;
    const cpuSeconds = gateway.cpuSeconds() - cpuBefore;
    process.stdout.write(`19 MB prompt: ${cpuSeconds.toFixed(2)} CPU-s for a completion and a count; /healthz ${healthAnswers} answers, slowest ${slowestHealthMs.toFixed(0)} ms\n`);
    expect(answer.status).toBe(200);
    expect(count.status).toBe(200);
    // The count is an upper bound of the real one past the exact budget: at least the prompt's size in tokens, at most its bytes.
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(counted.input_tokens).toBeLessThanOrEqual(prompt.length + 100);
    // Before the bound, one such request took 11–41 CPU-seconds and /healthz stopped answering.
    expect(cpuSeconds).toBeLessThan(5);
    expect(healthFailures).toBe(0);
    expect(healthAnswers).toBeGreaterThan(0);
  });
});
