/**
 * `/v1/videos` on the mock provider, through the `openai` SDK and plain HTTP:
 * the whole life of a video (create, poll, download with Range and each
 * variant, list, delete), ownership, validation and the money of a job.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLedger } from '../../server/billing/ledger-check.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer } from '../support/http.js';
import { balancesOf, usageRowsOf } from '../support/usage.js';
import { waitFor } from '../support/wait.js';
import { FAST_VIDEO_ENV, TINY_PNG, VIDEO_PRICE_PER_SECOND_MICRO, fetchVideo, probeVideo, videoCatalog, waitForVideoStatus, type Json } from './video-support.js';

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway({ catalog: videoCatalog(), env: FAST_VIDEO_ENV });
});

afterAll(async () => {
  await gateway?.close();
});

function client(key: string): OpenAI {
  return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
}

async function expectLedgerGreen(accountId: string): Promise<void> {
  await gateway.gateway.services.billing.flush();
  const check = await checkLedger(gateway.gateway.services.db, accountId);
  expect(check.ok, JSON.stringify(check.accounts)).toBe(true);
}

async function createOverHttp(key: string, body: Json): Promise<{ status: number; body: Json }> {
  const answer = await fetch(`${gateway.url}/v1/videos`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: answer.status, body: (await answer.json()) as Json };
}

describe('a video through the openai SDK', () => {
  it('is created pending, completes, downloads whole, by Range and as each variant, and is deleted with its files', async () => {
    const { key, accountId } = await gateway.createAccountWithKey({ credits: 10 });
    const sdk = client(key);
    const created = await sdk.videos.create({ model: 'mock-video', prompt: 'a paper boat on a pond', size: '320x180' as never, seconds: '2' as never });
    expect(created.id).toMatch(/^video_[A-Za-z0-9]{32}$/);
    expect(created.status).toBe('pending');
    expect(typeof created.created_at).toBe('number');

    let video = await sdk.videos.retrieve(created.id);
    await waitFor(
      async () => {
        video = await sdk.videos.retrieve(created.id);
        return video.status === ('completed' as never);
      },
      { timeoutMs: 60_000, intervalMs: 50, message: 'the video to complete' },
    );
    const shown = video as unknown as Json;
    expect(shown).toMatchObject({ id: created.id, status: 'completed', model: 'mock-video', prompt: 'a paper boat on a pond', size: '320x180', duration: 2, error: null });
    expect(shown.completed_at).toBeGreaterThanOrEqual(created.created_at);

    const whole = Buffer.from(await (await sdk.videos.downloadContent(created.id)).arrayBuffer());
    const probe = probeVideo(whole);
    expect(probe).toMatchObject({ width: 320, height: 180, codec: 'h264' });
    expect(probe.duration).toBeCloseTo(2, 1);

    const ranged = await sdk.videos.downloadContent(created.id, {}, { headers: { Range: 'bytes=100-1099' } });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe(`bytes 100-1099/${whole.length}`);
    expect(Buffer.from(await ranged.arrayBuffer()).equals(whole.subarray(100, 1100))).toBe(true);

    for (const variant of ['thumbnail', 'spritesheet'] as const) {
      const image = await sdk.videos.downloadContent(created.id, { variant });
      expect(image.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await image.arrayBuffer()).subarray(1, 4).toString('ascii')).toBe('PNG');
    }

    // Charged once, by the real duration; the hold released in the same transaction.
    await waitFor(async () => (await balancesOf(gateway, accountId)).held === 0, { message: 'the hold to be released' });
    const rows = await usageRowsOf(gateway, accountId);
    expect(rows.map((row) => [row.request_id, row.endpoint, row.status, row.cost, row.units])).toEqual([[created.id, '/v1/videos', 200, 2 * VIDEO_PRICE_PER_SECOND_MICRO, 2000]]);
    expect((await balancesOf(gateway, accountId)).current).toBe(10_000_000 - 2 * VIDEO_PRICE_PER_SECOND_MICRO);
    await expectLedgerGreen(accountId);

    const storage = gateway.gateway.services.videoStorage;
    const keys = [`${created.id}/video.mp4`, `${created.id}/thumbnail`, `${created.id}/spritesheet`];
    for (const storedKey of keys) expect(await storage.exists(storedKey)).toBe(true);
    const deleted = await sdk.videos.delete(created.id);
    expect(deleted as unknown as Json).toMatchObject({ success: true, id: created.id, deleted: true });
    expect(typeof (deleted as unknown as Json).message).toBe('string');
    const gone = await sdk.videos.retrieve(created.id).catch((error: unknown) => error);
    expect(gone).toBeInstanceOf(OpenAI.NotFoundError);
    expect((gone as InstanceType<typeof OpenAI.APIError>).code).toBe('NOT_FOUND');
    for (const storedKey of keys) expect(await storage.exists(storedKey)).toBe(false);
    // Deleting a finished video changes no money.
    expect(await usageRowsOf(gateway, accountId)).toHaveLength(1);
    await expectLedgerGreen(accountId);
  });

  it('takes an input reference image as a multipart file, and refuses a file that is not an image or a video', async () => {
    const { key } = await gateway.createAccountWithKey({ credits: 10 });
    const sdk = client(key);
    const created = await sdk.videos.create({
      model: 'mock-video',
      prompt: 'from a picture',
      size: '180x320' as never,
      seconds: '1' as never,
      input_reference: await toFile(TINY_PNG, 'start.png', { type: 'image/png' }),
    });
    expect(await gateway.gateway.services.videoStorage.exists(`${created.id}/input_reference`)).toBe(true);
    await waitForVideoStatus(gateway, key, created.id, ['completed']);
    await sdk.videos.delete(created.id);
    expect(await gateway.gateway.services.videoStorage.exists(`${created.id}/input_reference`)).toBe(false);

    const refused = await sdk.videos
      .create({ model: 'mock-video', prompt: 'x', input_reference: await toFile(Buffer.from('just some text'), 'notes.txt', { type: 'image/png' }) })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(415);
    expect((refused as InstanceType<typeof OpenAI.APIError>).param).toBe('input_reference');
  });

  it('lists only the caller’s videos, newest first, by page and through the SDK’s auto-pagination', async () => {
    const first = await gateway.createAccountWithKey({ credits: 10 });
    const second = await gateway.createAccountWithKey({ credits: 10 });
    const ids: string[] = [];
    for (const prompt of ['one', 'two', 'three']) {
      ids.push((await client(first.key).videos.create({ model: 'mock-video', prompt, size: '320x180' as never, seconds: '1' as never })).id);
    }
    const other = await client(second.key).videos.create({ model: 'mock-video', prompt: 'elsewhere', size: '320x180' as never, seconds: '1' as never });

    const page1 = (await (await fetch(`${gateway.url}/v1/videos?limit=2`, { headers: bearer(first.key) })).json()) as Json;
    expect((page1.data as Json[]).map((video) => video.id)).toEqual([ids[2], ids[1]]);
    expect(page1.pagination).toEqual({ page: 1, limit: 2, total: 3 });
    const page2 = (await (await fetch(`${gateway.url}/v1/videos?limit=2&page=2`, { headers: bearer(first.key) })).json()) as Json;
    expect((page2.data as Json[]).map((video) => video.id)).toEqual([ids[0]]);
    expect(page2.pagination).toEqual({ page: 2, limit: 2, total: 3 });
    const defaults = (await (await fetch(`${gateway.url}/v1/videos`, { headers: bearer(second.key) })).json()) as Json;
    expect((defaults.data as Json[]).map((video) => video.id)).toEqual([other.id]);
    expect(defaults.pagination).toEqual({ page: 1, limit: 20, total: 1 });

    const listed: string[] = [];
    for await (const video of client(first.key).videos.list({ limit: 2 })) listed.push(video.id);
    expect(listed).toEqual([ids[2], ids[1], ids[0]]);

    const tooMany = await fetch(`${gateway.url}/v1/videos?limit=101`, { headers: bearer(first.key) });
    expect(tooMany.status).toBe(400);
    expect(((await tooMany.json()) as { error: Json }).error).toMatchObject({ code: 'INVALID_REQUEST', param: 'limit' });
  });

  it('answers another account FORBIDDEN on get, content and delete, and an unknown id NOT_FOUND', async () => {
    const owner = await gateway.createAccountWithKey({ credits: 10 });
    const stranger = await gateway.createAccountWithKey({ credits: 10 });
    const created = await client(owner.key).videos.create({ model: 'mock-video', prompt: 'mine', size: '320x180' as never, seconds: '1' as never });
    await waitForVideoStatus(gateway, owner.key, created.id, ['completed']);
    for (const [method, suffix] of [
      ['GET', ''],
      ['GET', '/content'],
      ['DELETE', ''],
    ] as const) {
      const answer = await fetch(`${gateway.url}/v1/videos/${created.id}${suffix}`, { method, headers: bearer(stranger.key) });
      expect(answer.status, `${method} ${suffix}`).toBe(403);
      expect(((await answer.json()) as { error: Json }).error.code).toBe('FORBIDDEN');
    }
    const forbidden = await client(stranger.key).videos.retrieve(created.id).catch((error: unknown) => error);
    expect(forbidden).toBeInstanceOf(OpenAI.PermissionDeniedError);
    // Still there for its owner.
    expect((await fetchVideo(gateway, owner.key, created.id)).body.status).toBe('completed');
    for (const [method, suffix] of [
      ['GET', ''],
      ['GET', '/content'],
      ['DELETE', ''],
    ] as const) {
      const answer = await fetch(`${gateway.url}/v1/videos/video_doesnotexist${suffix}`, { method, headers: bearer(owner.key) });
      expect(answer.status).toBe(404);
      expect(((await answer.json()) as { error: Json }).error.code).toBe('NOT_FOUND');
    }
  });
});

describe('a video over plain HTTP', () => {
  it('is created from a JSON body and served with content-length, accept-ranges, 206, 416 and whole-file answers', async () => {
    const { key } = await gateway.createAccountWithKey({ credits: 10 });
    const created = await createOverHttp(key, { model: 'mock-video', prompt: 'a lighthouse', size: '640x360', seconds: 1 });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ status: 'pending', object: 'video' });
    const id = String(created.body.id);
    await waitForVideoStatus(gateway, key, id, ['completed']);

    const whole = await fetch(`${gateway.url}/v1/videos/${id}/content`, { headers: bearer(key) });
    expect(whole.status).toBe(200);
    expect(whole.headers.get('content-type')).toBe('video/mp4');
    expect(whole.headers.get('accept-ranges')).toBe('bytes');
    const bytes = Buffer.from(await whole.arrayBuffer());
    expect(Number(whole.headers.get('content-length'))).toBe(bytes.length);
    expect(probeVideo(bytes)).toMatchObject({ width: 640, height: 360 });

    const tail = await fetch(`${gateway.url}/v1/videos/${id}/content`, { headers: { ...bearer(key), range: 'bytes=-10' } });
    expect(tail.status).toBe(206);
    expect(tail.headers.get('content-range')).toBe(`bytes ${bytes.length - 10}-${bytes.length - 1}/${bytes.length}`);
    expect(tail.headers.get('content-length')).toBe('10');
    expect(Buffer.from(await tail.arrayBuffer()).equals(bytes.subarray(bytes.length - 10))).toBe(true);

    const beyond = await fetch(`${gateway.url}/v1/videos/${id}/content`, { headers: { ...bearer(key), range: `bytes=${bytes.length}-` } });
    expect(beyond.status).toBe(416);
    expect(beyond.headers.get('content-range')).toBe(`bytes */${bytes.length}`);
    expect(((await beyond.json()) as { error: Json }).error.code).toBe('RANGE_NOT_SATISFIABLE');

    // Several ranges apart: the whole file (documented).
    const several = await fetch(`${gateway.url}/v1/videos/${id}/content`, { headers: { ...bearer(key), range: 'bytes=0-9,100-109' } });
    expect(several.status).toBe(200);
    expect(Buffer.from(await several.arrayBuffer()).length).toBe(bytes.length);

    // RFC 9110: a suffix longer than the file is the whole file as a part; an invalid or malformed range is ignored.
    const ranged = (range: string, extra: Record<string, string> = {}) => fetch(`${gateway.url}/v1/videos/${id}/content`, { headers: { ...bearer(key), range, ...extra } });
    const longSuffix = await ranged(`bytes=-${bytes.length + 1000}`);
    expect(longSuffix.status).toBe(206);
    expect(longSuffix.headers.get('content-range')).toBe(`bytes 0-${bytes.length - 1}/${bytes.length}`);
    expect(Buffer.from(await longSuffix.arrayBuffer()).equals(bytes)).toBe(true);
    for (const range of ['bytes=5-2', 'bytes=abc', 'items=0-9']) {
      const ignored = await ranged(range);
      expect(ignored.status, range).toBe(200);
      expect(ignored.headers.get('content-range')).toBeNull();
      expect(Buffer.from(await ignored.arrayBuffer()).length).toBe(bytes.length);
    }
    const joined = await ranged('bytes=0-4,5-9');
    expect(joined.status).toBe(206);
    expect(joined.headers.get('content-range')).toBe(`bytes 0-9/${bytes.length}`);
    await joined.arrayBuffer();
    // If-Range: the tag of the file serves the part, any other validator the whole file.
    const etag = whole.headers.get('etag')!;
    expect(etag).toMatch(/^"[^"]+"$/);
    const current = await ranged('bytes=0-9', { 'if-range': etag });
    expect(current.status).toBe(206);
    await current.arrayBuffer();
    const stale = await ranged('bytes=0-9', { 'if-range': '"another-version"' });
    expect(stale.status).toBe(200);
    expect(Buffer.from(await stale.arrayBuffer()).length).toBe(bytes.length);

    const thumbnail = await fetch(`${gateway.url}/v1/videos/${id}/content?variant=thumbnail`, { headers: bearer(key) });
    expect(thumbnail.status).toBe(200);
    expect(thumbnail.headers.get('content-type')).toBe('image/png');
    await thumbnail.arrayBuffer();
    const unknown = await fetch(`${gateway.url}/v1/videos/${id}/content?variant=poster`, { headers: bearer(key) });
    expect(unknown.status).toBe(400);
    expect(((await unknown.json()) as { error: Json }).error).toMatchObject({ code: 'INVALID_REQUEST', param: 'variant' });
  });

  it('validates the model, prompt, size and seconds with 400s naming the field, and refuses what the balance cannot hold', async () => {
    const { key, accountId } = await gateway.createAccountWithKey({ credits: 10 });
    for (const [body, param, code] of [
      [{ model: 'mock-video', prompt: 'x', size: '1920x1080' }, 'size', 'INVALID_REQUEST'],
      [{ model: 'mock-video', prompt: 'x', seconds: 'four' }, 'seconds', 'INVALID_REQUEST'],
      [{ model: 'mock-video', prompt: 'x', seconds: '9' }, 'seconds', 'INVALID_REQUEST'],
      [{ model: 'mock-video', prompt: 'x', seconds: 0 }, 'seconds', 'INVALID_REQUEST'],
      [{ model: 'mock-video' }, 'prompt', 'INVALID_REQUEST'],
      [{ prompt: 'x' }, 'model', 'INVALID_REQUEST'],
      [{ model: 'no-such-model', prompt: 'x' }, 'model', 'MODEL_NOT_FOUND'],
      [{ model: 'mock-video', prompt: 'x', input_reference: { image_url: 'https://example.com/a.png' } }, 'input_reference.image_url', 'INVALID_REQUEST'],
    ] as const) {
      const answer = await createOverHttp(key, body);
      expect(answer.status, JSON.stringify(body)).toBe(code === 'MODEL_NOT_FOUND' ? 404 : 400);
      expect((answer.body.error as Json).param, JSON.stringify(body)).toBe(param);
      expect((answer.body.error as Json).code).toBe(code);
    }
    expect(await usageRowsOf(gateway, accountId)).toHaveLength(0);

    const poor = await gateway.createAccountWithKey({ credits: 0.15 });
    const refused = await createOverHttp(poor.key, { model: 'mock-video', prompt: 'x', size: '320x180', seconds: '2' });
    expect(refused.status).toBe(402);
    expect((refused.body.error as Json).code).toBe('INSUFFICIENT_CREDITS');
    const list = (await (await fetch(`${gateway.url}/v1/videos`, { headers: bearer(poor.key) })).json()) as Json;
    expect(list.data).toEqual([]);
    await expectLedgerGreen(poor.accountId);
  });
});

describe('a video that takes its time', () => {
  let slow: TestGateway;

  beforeAll(async () => {
    slow = await startTestGateway({ catalog: videoCatalog(), env: { ...FAST_VIDEO_ENV, MOCK_VIDEO_DELAY_MS: '600000' } });
  });

  afterAll(async () => {
    await slow?.close();
  });

  it('answers 409 VIDEO_NOT_READY for its content, and a delete before completion releases the whole hold', async () => {
    const { key, accountId } = await slow.createAccountWithKey({ credits: 10 });
    const sdk = new OpenAI({ baseURL: `${slow.url}/v1`, apiKey: key, maxRetries: 0 });
    const created = await sdk.videos.create({ model: 'mock-video', prompt: 'slowly', size: '320x180' as never, seconds: '4' as never });
    await waitForVideoStatus(slow, key, created.id, ['processing']);
    const early = await fetch(`${slow.url}/v1/videos/${created.id}/content`, { headers: bearer(key) });
    expect(early.status).toBe(409);
    expect(((await early.json()) as { error: Json }).error.code).toBe('VIDEO_NOT_READY');
    expect((await balancesOf(slow, accountId)).held).toBe(4 * VIDEO_PRICE_PER_SECOND_MICRO);

    await sdk.videos.delete(created.id);
    expect(await sdk.videos.retrieve(created.id).catch((error: unknown) => error)).toBeInstanceOf(OpenAI.NotFoundError);
    const balances = await balancesOf(slow, accountId);
    expect(balances).toMatchObject({ held: 0, current: 10_000_000 });
    const rows = await usageRowsOf(slow, accountId);
    expect(rows.map((row) => [row.request_id, row.status, row.error_code, row.cost])).toEqual([[created.id, 499, 'VIDEO_DELETED', 0]]);
    await slow.gateway.services.billing.flush();
    expect((await checkLedger(slow.gateway.services.db, accountId)).ok).toBe(true);
  });
});
