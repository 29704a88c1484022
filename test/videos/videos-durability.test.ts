/**
 * Video jobs across instances and restarts: two instances on one PostgreSQL
 * never run the same job (each video is created once upstream), a gateway
 * process killed with SIGKILL mid-job has its job finished by another
 * instance, and a gateway on embedded PGlite resumes its jobs after a restart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../server/auth/api-keys.js';
import { checkLedger } from '../../server/billing/ledger-check.js';
import { renderMockVideo } from '../../server/providers/mock/media/mock-video.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { FAST_UPSTREAM } from '../support/e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer } from '../support/http.js';
import { listeningUrl } from '../support/spawn-gateway.js';
import { waitFor } from '../support/wait.js';
import { createVideoUpstream, type VideoUpstreamState } from '../upstreams/openai-videos-upstream.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { FAST_VIDEO_ENV, VIDEO_PRICE_PER_SECOND_MICRO, probeVideo, videoCatalog, waitForVideoStatus, type Json } from './video-support.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const UPSTREAM_KEY = 'sk-upstream-video-durability-0123456789';
/** A spawned gateway takes 10–25 s to answer on a loaded machine (test/billing/sigkill.test.ts); budgets above that. */
const PROCESS_BUDGET = { timeout: 240_000 };

let upstream: UpstreamServer;
let state: VideoUpstreamState;
let dir: string;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  const video = (await renderMockVideo({ prompt: 'upstream', width: 64, height: 64, seconds: 1 })).video;
  const videoUpstream = createVideoUpstream({ video, thumbnail: Buffer.from('thumb'), spritesheet: Buffer.from('sprites') });
  state = videoUpstream.state;
  upstream = await startOpenAIUpstream({ routes: videoUpstream.routes, expectedApiKey: UPSTREAM_KEY });
  dir = mkdtempSync(path.join(os.tmpdir(), 'umg-video-durability-'));
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function createVideo(url: string, key: string, body: Json): Promise<string> {
  const answer = await fetch(`${url}/v1/videos`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await answer.json()) as Json;
  expect(answer.status, JSON.stringify(json)).toBe(200);
  return String(json.id);
}

/** One row of the videos table, read from outside the gateway process. */
async function readVideoRow(databaseUrl: string, id: string): Promise<{ status: string; locked_by: string | null } | undefined> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ status: string; locked_by: string | null }>('SELECT status, locked_by FROM videos WHERE id = $1', [id]);
    return rows[0];
  } finally {
    await client.end();
  }
}

describe('video jobs on several instances of one PostgreSQL', () => {
  it('runs each job on one instance at a time: every video is created upstream exactly once, charged once', async () => {
    const database: TestDatabase = await createTestDatabase();
    cleanups.push(() => database.drop());
    const storageDir = path.join(dir, 'shared-videos');
    const env = { ...FAST_VIDEO_ENV, VIDEO_UPSTREAM_KEY: UPSTREAM_KEY, VIDEO_STORAGE_DIR: storageDir, VIDEO_CONCURRENCY: '3' };
    const instances: TestGateway[] = [];
    for (let index = 0; index < 2; index++) {
      const instance = await startTestGateway({ databaseUrl: database.url, catalog: videoCatalog(upstream.url), env, config: { upstream: FAST_UPSTREAM } });
      cleanups.push(() => instance.close());
      instances.push(instance);
    }
    state.pollsToComplete = 3;
    const createsBefore = state.creates;
    const { key, accountId } = await instances[0]!.createAccountWithKey({ credits: 100 });
    const ids: string[] = [];
    for (let index = 0; index < 8; index++) {
      ids.push(await createVideo(instances[index % 2]!.url, key, { model: 'sora-test', prompt: `video ${index}`, size: '720x1280', seconds: '4' }));
    }
    for (const id of ids) expect(await waitForVideoStatus(instances[0]!, key, id, ['completed', 'failed'], 120_000)).toMatchObject({ status: 'completed' });

    expect(state.creates - createsBefore).toBe(ids.length);
    const keys = [...state.generations.values()].map((generation) => generation.idempotencyKey).filter((id) => ids.includes(id!));
    expect(keys.sort()).toEqual([...ids].sort());
    // Either instance serves any video (shared storage).
    for (const instance of instances) {
      const content = await fetch(`${instance.url}/v1/videos/${ids[0]}/content`, { headers: bearer(key) });
      expect(content.status).toBe(200);
      expect(probeVideo(Buffer.from(await content.arrayBuffer())).width).toBe(64);
    }
    const db = instances[0]!.gateway.services.db;
    const usage = await db.selectFrom('usage').select(['request_id', 'cost']).where('account_id', '=', accountId).execute();
    expect(usage.map((row) => row.request_id).sort()).toEqual([...ids].sort());
    expect(usage.every((row) => row.cost === 4 * VIDEO_PRICE_PER_SECOND_MICRO)).toBe(true);
    for (const instance of instances) await instance.gateway.services.billing.flush();
    expect((await checkLedger(db, accountId)).ok).toBe(true);
  });

  it('finishes the job of a gateway process killed with SIGKILL mid-job on another instance, without creating it again', PROCESS_BUDGET, async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    const storageDir = path.join(dir, 'sigkill-videos');
    const catalogFile = path.join(dir, 'sigkill-catalog.json');
    writeFileSync(catalogFile, JSON.stringify(videoCatalog(upstream.url)));
    const key = generateApiKey();
    state.holdAll = true;
    const createsBefore = state.creates;
    let child: ChildProcess | undefined = spawn(process.execPath, ['--import', 'tsx', '--import', './test/foundation/exit-with-parent.ts', 'server/main.ts'], {
      cwd: ROOT,
      env: {
        ...process.env,
        ...FAST_VIDEO_ENV,
        VIDEO_UPSTREAM_KEY: UPSTREAM_KEY,
        VIDEO_STORAGE_DIR: storageDir,
        PORT: '0',
        HOST: '127.0.0.1',
        DATABASE_URL: database.url,
        DATA_DIR: path.join(dir, 'sigkill-data'),
        GATEWAY_CONFIG: catalogFile,
        GATEWAY_BOOTSTRAP_KEY: key,
        GATEWAY_BOOTSTRAP_CREDITS: '100',
        GATEWAY_ADMIN_TOKEN: 'video-sigkill-admin',
        RATE_LIMITS: 'pro=0',
        LOG_LEVEL: 'silent',
        UPSTREAM_MAX_RETRIES: '0',
      },
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    });
    cleanups.push(() => void child?.kill('SIGKILL'));
    const url = await listeningUrl(child, 90_000);
    await waitFor(() => fetch(`${url}/readyz`).then((answer) => answer.ok, () => false), { timeoutMs: 90_000, intervalMs: 200, message: 'the gateway process to answer /readyz' });

    const id = await createVideo(url, key, { model: 'sora-test', prompt: 'interrupted', size: '1280x720', seconds: '8' });
    let generationId = '';
    await waitFor(
      () => {
        generationId = [...state.generations.values()].find((generation) => generation.idempotencyKey === id)?.id ?? '';
        return generationId !== '';
      },
      { timeoutMs: 60_000, message: 'the process to create the generation upstream' },
    );
    // The next poll hangs at the provider: the process holds the job's lease while it waits.
    upstream.script({ kind: 'delay', ms: 60_000, path: `/v1/videos/${generationId}` });
    await waitFor(() => upstream.requests.some((request) => request.path === `/v1/videos/${generationId}` && request.step?.kind === 'delay'), {
      timeoutMs: 60_000,
      message: 'the process to poll the generation',
    });
    const leased = await readVideoRow(database.url, id);
    expect(leased).toMatchObject({ status: 'processing' });
    expect(leased?.locked_by).toMatch(/^gw_/);

    const exited = new Promise((resolve) => child!.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    child = undefined;

    state.holdAll = false;
    const survivor = await startTestGateway({
      databaseUrl: database.url,
      catalog: videoCatalog(upstream.url),
      env: { ...FAST_VIDEO_ENV, VIDEO_UPSTREAM_KEY: UPSTREAM_KEY, VIDEO_STORAGE_DIR: storageDir },
      config: { upstream: FAST_UPSTREAM },
    });
    cleanups.push(() => survivor.close());
    // Taken over once the dead process's lease runs out, and finished here.
    expect(await waitForVideoStatus(survivor, key, id, ['completed', 'failed'], 60_000)).toMatchObject({ status: 'completed', duration: 8 });
    expect(state.creates - createsBefore).toBe(1);
    const content = await fetch(`${survivor.url}/v1/videos/${id}/content`, { headers: bearer(key) });
    expect(content.status).toBe(200);
    await content.arrayBuffer();

    const db = survivor.gateway.services.db;
    const accountId = (await db.selectFrom('api_keys').select('account_id').where('key_hash', '=', hashApiKey(key)).executeTakeFirstOrThrow()).account_id;
    const usage = await db.selectFrom('usage').select(['request_id', 'cost']).where('account_id', '=', accountId).execute();
    expect(usage).toEqual([{ request_id: id, cost: 8 * VIDEO_PRICE_PER_SECOND_MICRO }]);
    await survivor.gateway.services.billing.flush();
    const account = await db.selectFrom('accounts').select(['held', 'current_credits']).where('id', '=', accountId).executeTakeFirstOrThrow();
    expect(account).toEqual({ held: 0, current_credits: 100_000_000 - 8 * VIDEO_PRICE_PER_SECOND_MICRO });
    expect((await checkLedger(db, accountId)).ok).toBe(true);
  });
});

describe('video jobs on embedded PGlite', () => {
  it('resume after a restart of the gateway on the same data directory', PROCESS_BUDGET, async () => {
    const dataDir = path.join(dir, 'pglite-data');
    const options = {
      catalog: videoCatalog(),
      env: { ...FAST_VIDEO_ENV, MOCK_VIDEO_DELAY_MS: '1500' },
      // Embedded PGlite in a directory, whatever database the suite runs on.
      config: { databaseUrl: undefined, dataDir },
    };
    const first = await startTestGateway(options);
    let second: TestGateway | undefined;
    try {
      const { key, accountId } = await first.createAccountWithKey({ credits: 10 });
      const id = await createVideo(first.url, key, { model: 'mock-video', prompt: 'across a restart', size: '320x180', seconds: '2' });
      await waitForVideoStatus(first, key, id, ['processing']);
      await first.close();

      second = await startTestGateway(options);
      expect(await waitForVideoStatus(second, key, id, ['completed', 'failed'])).toMatchObject({ status: 'completed', duration: 2 });
      const content = await fetch(`${second.url}/v1/videos/${id}/content`, { headers: bearer(key) });
      expect(probeVideo(Buffer.from(await content.arrayBuffer()))).toMatchObject({ width: 320, height: 180 });
      await second.gateway.services.billing.flush();
      const check = await checkLedger(second.gateway.services.db, accountId);
      expect(check.ok).toBe(true);
      expect(check.accounts[0]).toMatchObject({ held: 0, current_credits: 10_000_000 - 2 * VIDEO_PRICE_PER_SECOND_MICRO });
    } finally {
      await second?.close();
      await first.close();
    }
  });
});
