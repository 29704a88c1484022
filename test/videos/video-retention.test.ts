/**
 * Retention of finished videos' files (VIDEO_RETENTION_HOURS): a completed
 * video shows when its files expire; past that its content answers 404
 * VIDEO_EXPIRED and the sweep deletes its files (the record stays); nothing
 * is deleted before; videos finished before retention existed get their
 * expiry from their completion; two instances sweeping at once sweep each
 * video once. (The S3 bucket's case is in videos-s3.test.ts.)
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertVideo } from '../../db/queries/videos.queries.js';
import type { VideoAssetsRecord } from '../../db/schema.js';
import { newVideoId, videoAssetKey } from '../../server/videos/video-object.js';
import type { VideoStorage } from '../../server/videos/video-storage.js';
import { createTestDatabase } from '../support/database.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer } from '../support/http.js';
import { waitFor } from '../support/wait.js';
import { FAST_VIDEO_ENV, TINY_PNG, fetchVideo, videoCatalog, waitForVideoStatus } from './video-support.js';

const WEEK_SECONDS = 168 * 3600;

let gateway: TestGateway;
let dir: string;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'umg-video-retention-'));
  // The default retention (168 hours); the sweep runs often.
  gateway = await startTestGateway({ catalog: videoCatalog(), env: { ...FAST_VIDEO_ENV, VIDEO_RETENTION_SWEEP_MS: '100' } });
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await gateway?.close();
  rmSync(dir, { recursive: true, force: true });
});

const VARIANT_KEYS = (id: string) => [videoAssetKey(id, 'video'), videoAssetKey(id, 'thumbnail'), videoAssetKey(id, 'spritesheet')];

async function existing(storage: VideoStorage, keys: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const key of keys) if (await storage.exists(key)) found.push(key);
  return found;
}

/** Sets a video's expiry into the past, as if its retention had run out. */
async function expireNow(target: TestGateway, id: string): Promise<void> {
  await target.gateway.services.db.updateTable('videos').set({ expires_at: sql<Date>`now() - interval '1 second'` }).where('id', '=', id).execute();
}

/** A finished video's row and files put in place directly (status as asked, its files in storage). */
async function storedVideo(target: TestGateway, accountId: string, status: 'completed' | 'failed'): Promise<string> {
  const { db, videoStorage } = target.gateway.services;
  const id = newVideoId();
  const file = path.join(dir, `${id}.bin`);
  writeFileSync(file, 'bytes');
  const assets: VideoAssetsRecord = {
    video: { key: videoAssetKey(id, 'video'), contentType: 'video/mp4', size: 5 },
    thumbnail: { key: videoAssetKey(id, 'thumbnail'), contentType: 'image/png', size: 5 },
    spritesheet: { key: videoAssetKey(id, 'spritesheet'), contentType: 'image/png', size: 5 },
  };
  const reference = { key: videoAssetKey(id, 'input_reference'), filename: 'start.png', contentType: 'image/png', size: 5 };
  for (const key of [...(status === 'completed' ? Object.values(assets).map((asset) => asset.key) : []), reference.key]) await videoStorage.put(key, { path: file, contentType: 'application/octet-stream' });
  await insertVideo(db, {
    id,
    account_id: accountId,
    key_id: null,
    request_id: `req-${id}`,
    model: 'mock-video',
    prompt: 'stored',
    size: '320x180',
    seconds: 1,
    discount_percentage: 0,
    input_reference: JSON.stringify(reference),
    assets: null,
    duration: null,
    error: null,
    provider_id: null,
    upstream_model: null,
    provider_job_id: null,
    run_after: new Date(Date.now() + 86_400_000),
    locked_by: null,
    locked_until: null,
    completed_at: null,
  });
  await db.updateTable('videos').set({ status: 'processing' }).where('id', '=', id).execute();
  await db
    .updateTable('videos')
    .set(status === 'completed' ? { status, assets: JSON.stringify(assets), duration: 1, completed_at: sql<Date>`now()` } : { status, error: 'it failed' })
    .where('id', '=', id)
    .execute();
  return id;
}

describe('video retention', () => {
  it('shows when a completed video’s files expire, keeps them until then, then refuses the content and deletes the files', async () => {
    const { key } = await gateway.createAccountWithKey({ credits: 10 });
    const sdk = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
    const storage = gateway.gateway.services.videoStorage;
    const expiring = await sdk.videos.create({
      model: 'mock-video',
      prompt: 'short-lived',
      size: '320x180' as never,
      seconds: '1' as never,
      input_reference: await toFile(TINY_PNG, 'start.png', { type: 'image/png' }),
    });
    const kept = await sdk.videos.create({ model: 'mock-video', prompt: 'kept', size: '320x180' as never, seconds: '1' as never });
    const done = await waitForVideoStatus(gateway, key, expiring.id, ['completed']);
    await waitForVideoStatus(gateway, key, kept.id, ['completed']);
    expect(done.expires_at).toBe(Number(done.completed_at) + WEEK_SECONDS);
    const expiringKeys = [...VARIANT_KEYS(expiring.id), videoAssetKey(expiring.id, 'input_reference')];

    // Not before expiry: a sweep deletes nothing.
    expect(await gateway.gateway.services.videos.retention.sweep()).toBe(0);
    expect(await existing(storage, expiringKeys)).toEqual(expiringKeys);
    expect((await fetch(`${gateway.url}/v1/videos/${expiring.id}/content`, { headers: bearer(key) })).status).toBe(200);

    await expireNow(gateway, expiring.id);
    // Refused from the expiry on, swept or not; the SDK sees a NotFoundError.
    const refused = await sdk.videos.downloadContent(expiring.id).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe('VIDEO_EXPIRED');

    // The instance's own sweep deletes the files and records it.
    const db = gateway.gateway.services.db;
    await waitFor(async () => (await db.selectFrom('videos').select('assets').where('id', '=', expiring.id).executeTakeFirstOrThrow()).assets === null, {
      message: 'the sweep to delete the expired files',
    });
    expect(await existing(storage, expiringKeys)).toEqual([]);
    const after = await fetchVideo(gateway, key, expiring.id);
    expect(after.body).toMatchObject({ id: expiring.id, status: 'completed', duration: 1 });
    expect(Number(after.body.expires_at)).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    for (const variant of ['video', 'thumbnail']) {
      const content = await fetch(`${gateway.url}/v1/videos/${expiring.id}/content?variant=${variant}`, { headers: bearer(key) });
      expect(content.status).toBe(404);
      expect(await content.json()).toMatchObject({ error: { code: 'VIDEO_EXPIRED', type: 'not_found_error' } });
    }

    // The other video is untouched; the expired one can still be deleted.
    expect(await existing(storage, VARIANT_KEYS(kept.id))).toEqual(VARIANT_KEYS(kept.id));
    expect((await fetch(`${gateway.url}/v1/videos/${kept.id}/content`, { headers: bearer(key) })).status).toBe(200);
    expect(await sdk.videos.delete(expiring.id)).toMatchObject({ deleted: true });
  });

  it('gives videos finished without an expiry one from their completion, and expires a failed video’s input reference', async () => {
    const { accountId } = await gateway.createAccountWithKey();
    const { db, videoStorage } = gateway.gateway.services;
    const old = await storedVideo(gateway, accountId, 'completed');
    const recent = await storedVideo(gateway, accountId, 'completed');
    // Finished 200 and 1 hours ago, before retention existed.
    await db.updateTable('videos').set({ expires_at: null, completed_at: sql<Date>`now() - interval '200 hours'` }).where('id', '=', old).execute();
    await db.updateTable('videos').set({ expires_at: null, completed_at: sql<Date>`now() - interval '1 hour'` }).where('id', '=', recent).execute();
    const failed = await storedVideo(gateway, accountId, 'failed');
    await expireNow(gateway, failed);

    await gateway.gateway.services.videos.retention.sweep();
    const rows = await db
      .selectFrom('videos')
      .select(['id', 'assets', 'input_reference', sql<number>`extract(epoch FROM expires_at - completed_at)::int`.as('kept_seconds')])
      .where('id', 'in', [old, recent, failed])
      .execute();
    const byId = new Map(rows.map((row) => [row.id, row]));
    expect(byId.get(old)).toMatchObject({ assets: null, input_reference: null, kept_seconds: WEEK_SECONDS });
    expect(await existing(videoStorage, [...VARIANT_KEYS(old), videoAssetKey(old, 'input_reference')])).toEqual([]);
    expect(byId.get(recent)?.kept_seconds).toBe(WEEK_SECONDS);
    expect(byId.get(recent)?.assets).not.toBeNull();
    expect(await existing(videoStorage, VARIANT_KEYS(recent))).toEqual(VARIANT_KEYS(recent));
    expect(byId.get(failed)?.input_reference).toBeNull();
    expect(await videoStorage.exists(videoAssetKey(failed, 'input_reference'))).toBe(false);
  });

  it('keeps files for ever with VIDEO_RETENTION_HOURS=0 (no expiry shown)', async () => {
    const forever = await startTestGateway({ catalog: videoCatalog(), env: { ...FAST_VIDEO_ENV, VIDEO_RETENTION_HOURS: '0' } });
    cleanups.push(() => forever.close());
    const { key, accountId } = await forever.createAccountWithKey({ credits: 10 });
    const created = await fetch(`${forever.url}/v1/videos`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-video', prompt: 'for ever', size: '320x180', seconds: '1' }),
    });
    const id = String(((await created.json()) as { id: string }).id);
    expect(await waitForVideoStatus(forever, key, id, ['completed'])).toMatchObject({ expires_at: null });
    const old = await storedVideo(forever, accountId, 'completed');
    await forever.gateway.services.db.updateTable('videos').set({ completed_at: sql<Date>`now() - interval '1000 hours'` }).where('id', '=', old).execute();
    expect(await forever.gateway.services.videos.retention.sweep()).toBe(0);
    expect(await existing(forever.gateway.services.videoStorage, VARIANT_KEYS(old))).toEqual(VARIANT_KEYS(old));
  });

  it('two instances on one PostgreSQL sweeping at once sweep each expired video once', { timeout: 120_000 }, async () => {
    const database = await createTestDatabase();
    cleanups.push(() => database.drop());
    // Shared storage; sweeps only when called.
    const env = { ...FAST_VIDEO_ENV, VIDEO_STORAGE_DIR: path.join(dir, 'shared'), VIDEO_RETENTION_SWEEP_MS: '3600000' };
    const instances: TestGateway[] = [];
    for (let index = 0; index < 2; index++) {
      const instance = await startTestGateway({ databaseUrl: database.url, catalog: videoCatalog(), env });
      cleanups.push(() => instance.close());
      instances.push(instance);
    }
    const { accountId } = await instances[0]!.createAccountWithKey();
    const ids: string[] = [];
    for (let index = 0; index < 8; index++) {
      const id = await storedVideo(instances[0]!, accountId, 'completed');
      await expireNow(instances[0]!, id);
      ids.push(id);
    }
    const counts = await Promise.all(instances.map((instance) => instance.gateway.services.videos.retention.sweep()));
    expect(counts[0]! + counts[1]!).toBe(ids.length);
    const storage = instances[1]!.gateway.services.videoStorage;
    for (const id of ids) expect(await existing(storage, [...VARIANT_KEYS(id), videoAssetKey(id, 'input_reference')])).toEqual([]);
    const left = await instances[1]!.gateway.services.db.selectFrom('videos').select('id').where('id', 'in', ids).where('assets', 'is not', null).execute();
    expect(left).toEqual([]);
  });
});
