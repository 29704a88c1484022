/**
 * The OpenAI-format video adapter against the upstream test server: what the
 * gateway sends on create, polling until done, the files copied into the
 * gateway's storage (and still served after the provider deleted its own),
 * a provider-side failure, a refused create, transient errors retried, and
 * a delete before completion that cancels the generation upstream.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLedger } from '../../server/billing/ledger-check.js';
import { renderMockVideo } from '../../server/providers/mock/media/mock-video.js';
import { FAST_UPSTREAM } from '../support/e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer } from '../support/http.js';
import { balancesOf, usageRowsOf } from '../support/usage.js';
import { createVideoUpstream, type VideoUpstreamState } from '../upstreams/openai-videos-upstream.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { FAST_VIDEO_ENV, TINY_PNG, VIDEO_PRICE_PER_SECOND_MICRO, waitForVideoStatus, videoCatalog, type Json } from './video-support.js';

const UPSTREAM_KEY = 'sk-upstream-video-test-0123456789';

let upstream: UpstreamServer;
let state: VideoUpstreamState;
let gateway: TestGateway;
let upstreamVideo: Buffer;

beforeAll(async () => {
  upstreamVideo = (await renderMockVideo({ prompt: 'upstream', width: 64, height: 64, seconds: 1 })).video;
  const videoUpstream = createVideoUpstream({ video: upstreamVideo, thumbnail: Buffer.from('RIFF....WEBPthumb'), spritesheet: Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3]) });
  state = videoUpstream.state;
  upstream = await startOpenAIUpstream({ routes: videoUpstream.routes, expectedApiKey: UPSTREAM_KEY });
  gateway = await startTestGateway({ catalog: videoCatalog(upstream.url), env: { ...FAST_VIDEO_ENV, VIDEO_UPSTREAM_KEY: UPSTREAM_KEY, VIDEO_MAX_ATTEMPTS: '4' }, config: { upstream: FAST_UPSTREAM } });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

function client(key: string): OpenAI {
  return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
}

function requestsFor(path: string, method: string) {
  return upstream.requests.filter((request) => request.path === path && request.method === method && request.step === undefined);
}

async function expectLedgerGreen(accountId: string): Promise<void> {
  await gateway.gateway.services.billing.flush();
  const check = await checkLedger(gateway.gateway.services.db, accountId);
  expect(check.ok, JSON.stringify(check.accounts)).toBe(true);
}

describe('the OpenAI-format video adapter', () => {
  it('creates with a multipart body, polls until completed, copies the files and serves them after the provider deleted its copy', async () => {
    state.pollsToComplete = 3;
    const { key, accountId } = await gateway.createAccountWithKey({ credits: 10 });
    const created = await client(key).videos.create({
      model: 'sora-test',
      prompt: 'a fox in the snow',
      size: '1280x720',
      seconds: '4',
      input_reference: await toFile(TINY_PNG, 'fox.png', { type: 'image/png' }),
    });
    const done = await waitForVideoStatus(gateway, key, created.id, ['completed', 'failed']);
    expect(done).toMatchObject({ status: 'completed', duration: 4, model: 'sora-test' });

    const [create] = requestsFor('/v1/videos', 'POST').filter((request) => request.headers['idempotency-key'] === created.id);
    expect(create).toBeDefined();
    expect(create!.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(create!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    const generation = [...state.generations.values()].find((candidate) => candidate.idempotencyKey === created.id)!;
    expect(generation).toMatchObject({ model: 'sora-2', prompt: 'a fox in the snow', size: '1280x720', seconds: '4', referenceBytes: TINY_PNG.length });
    // Polled until the provider said completed, then the three files downloaded.
    expect(requestsFor(`/v1/videos/${generation.id}`, 'GET').length).toBeGreaterThanOrEqual(3);
    expect(requestsFor(`/v1/videos/${generation.id}/content`, 'GET').map((request) => request.query.variant ?? 'video').sort()).toEqual(['spritesheet', 'thumbnail', 'video']);

    // The provider forgets its copy: ours is served all the same.
    generation.deleted = true;
    const video = await fetch(`${gateway.url}/v1/videos/${created.id}/content`, { headers: bearer(key) });
    expect(video.status).toBe(200);
    expect(Buffer.from(await video.arrayBuffer()).equals(upstreamVideo)).toBe(true);
    const thumbnail = await client(key).videos.downloadContent(created.id, { variant: 'thumbnail' });
    expect(thumbnail.headers.get('content-type')).toBe('image/webp');
    expect(Buffer.from(await thumbnail.arrayBuffer()).toString()).toBe('RIFF....WEBPthumb');
    const spritesheet = await client(key).videos.downloadContent(created.id, { variant: 'spritesheet' });
    expect(spritesheet.headers.get('content-type')).toBe('image/jpeg');

    const rows = await usageRowsOf(gateway, accountId);
    expect(rows.map((row) => [row.status, row.cost, row.provider])).toEqual([[200, 4 * VIDEO_PRICE_PER_SECOND_MICRO, 'openai-up']]);
    expect((await balancesOf(gateway, accountId)).held).toBe(0);
    await expectLedgerGreen(accountId);
  });

  it('ends a generation the provider failed as failed, with its error, and releases the hold', async () => {
    state.pollsToComplete = 2;
    state.failNext = { code: 'moderation_blocked', message: 'The prompt was blocked by moderation.' };
    const { key, accountId } = await gateway.createAccountWithKey({ credits: 10 });
    const created = await client(key).videos.create({ model: 'sora-test', prompt: 'something blocked', size: '720x1280', seconds: '8' });
    const failed = await waitForVideoStatus(gateway, key, created.id, ['completed', 'failed']);
    expect(failed).toMatchObject({ status: 'failed', error: 'The prompt was blocked by moderation.', duration: null, completed_at: null });
    // A failed video is a video, not an HTTP error; it has no content.
    const content = await fetch(`${gateway.url}/v1/videos/${created.id}/content`, { headers: bearer(key) });
    expect(content.status).toBe(409);
    expect(((await content.json()) as { error: Json }).error.code).toBe('VIDEO_NOT_READY');
    expect(await balancesOf(gateway, accountId)).toMatchObject({ held: 0, current: 10_000_000 });
    expect((await usageRowsOf(gateway, accountId)).map((row) => [row.status, row.error_code, row.cost])).toEqual([[502, 'VIDEO_FAILED', 0]]);
    await expectLedgerGreen(accountId);
  });

  it('fails a video whose create the provider refuses, and retries one the provider fails transiently', async () => {
    const { key, accountId } = await gateway.createAccountWithKey({ credits: 10 });
    upstream.script({ kind: 'status', status: 400, message: 'Invalid size for this model.', param: 'size' });
    const refused = await client(key).videos.create({ model: 'sora-test', prompt: 'refused', size: '720x1280', seconds: '4' });
    expect(await waitForVideoStatus(gateway, key, refused.id, ['completed', 'failed'])).toMatchObject({ status: 'failed', error: 'Invalid size for this model.' });

    // Three 503s: more than the transport's own retries, so the job retries the step later.
    upstream.script({ kind: 'status', status: 503 }, { kind: 'status', status: 503 }, { kind: 'status', status: 503 });
    const retried = await client(key).videos.create({ model: 'sora-test', prompt: 'after a hiccup', size: '720x1280', seconds: '4' });
    expect(await waitForVideoStatus(gateway, key, retried.id, ['completed', 'failed'])).toMatchObject({ status: 'completed' });
    expect(upstream.pendingSteps).toBe(0);
    expect([...state.generations.values()].filter((generation) => generation.idempotencyKey === retried.id)).toHaveLength(1);
    expect(await balancesOf(gateway, accountId)).toMatchObject({ held: 0, current: 10_000_000 - 4 * VIDEO_PRICE_PER_SECOND_MICRO });
    await expectLedgerGreen(accountId);
  });

  it('cancels a generation upstream and releases the hold when the video is deleted before it completes', async () => {
    state.holdAll = true;
    try {
      const { key, accountId } = await gateway.createAccountWithKey({ credits: 10 });
      const created = await client(key).videos.create({ model: 'sora-test', prompt: 'never mind', size: '720x1280', seconds: '12' });
      await waitForVideoStatus(gateway, key, created.id, ['processing']);
      expect((await balancesOf(gateway, accountId)).held).toBe(12 * VIDEO_PRICE_PER_SECOND_MICRO);
      const generation = [...state.generations.values()].find((candidate) => candidate.idempotencyKey === created.id)!;
      const deleted = await fetch(`${gateway.url}/v1/videos/${created.id}`, { method: 'DELETE', headers: bearer(key) });
      expect(deleted.status).toBe(200);
      expect(await deleted.json()).toMatchObject({ success: true });
      expect(state.deletes).toContain(generation.id);
      expect(await balancesOf(gateway, accountId)).toMatchObject({ held: 0, current: 10_000_000 });
      expect((await fetch(`${gateway.url}/v1/videos/${created.id}`, { headers: bearer(key) })).status).toBe(404);
      expect(await usageRowsOf(gateway, accountId)).toHaveLength(1);
      await expectLedgerGreen(accountId);
    } finally {
      state.holdAll = false;
    }
  });
});
