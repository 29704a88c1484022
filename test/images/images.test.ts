/**
 * `POST /v1/images/generations` with the official `openai` SDK on the mock
 * provider: every size (the PNG decoded), `b64_json`, `url` (a signed link
 * served without a key, refused when tampered with or expired), streamed
 * events, each limit and capability refused with a 400 naming its field,
 * the free plan refused before anything is held, and one usage row with a
 * charge per image.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePng, readPngInfo } from '../../server/media/png.js';
import { IMAGE_SIZES } from '../../server/providers/openai/openai-images.wire.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { balancesOf, flushAll, usageRowsOf } from '../support/usage.js';
import { apiErrorOf, IMAGE_TEST_CATALOG, imageClient } from './image-e2e.js';

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway({ catalog: IMAGE_TEST_CATALOG });
});

afterAll(async () => {
  await gateway?.close();
});

function client(key: string): OpenAI {
  return imageClient(gateway, key);
}

describe('POST /v1/images/generations', () => {
  it('refuses free-plan accounts with 403 PLAN_RESTRICTED before anything is held or charged', async () => {
    const { key, accountId } = await gateway.createAccountWithKey({ plan: 'free', credits: 10 });
    const error = await client(key)
      .images.generate({ model: 'mock-image', prompt: 'a red fox' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('PLAN_RESTRICTED');
    await gateway.gateway.services.billing.flush();
    const account = await gateway.gateway.services.db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
    expect(account.current_credits).toBe(10_000_000);
    expect(account.held).toBe(0);
    const rows = await gateway.gateway.services.db.selectFrom('usage').selectAll().where('account_id', '=', accountId).execute();
    expect(rows).toHaveLength(0);
  });

  it('generates deterministic PNGs on the mock and bills each image at the catalog price', async () => {
    const { key, accountId } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 });
    const first = await client(key).images.generate({ model: 'mock-image', prompt: 'a red fox', n: 2, response_format: 'b64_json' });
    const second = await client(key).images.generate({ model: 'mock-image', prompt: 'a red fox', n: 1, response_format: 'b64_json' });
    expect(first.data).toHaveLength(2);
    const png = Buffer.from(first.data![0]!.b64_json!, 'base64');
    expect(png.subarray(1, 4).toString('ascii')).toBe('PNG');
    expect(second.data![0]!.b64_json).toBe(first.data![0]!.b64_json);
    expect(first.data![1]!.b64_json).not.toBe(first.data![0]!.b64_json);
    expect(first.data![0]!.revised_prompt).toBe('a red fox');
    await gateway.gateway.services.billing.flush();
    const rows = await gateway.gateway.services.db.selectFrom('usage').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
    // mock-image costs 0.04 credits per image.
    expect(rows.map((row) => [row.endpoint, row.units, row.cost])).toEqual([
      ['/v1/images/generations', 2, 80_000],
      ['/v1/images/generations', 1, 40_000],
    ]);
    const account = await gateway.gateway.services.db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
    expect(account.current_credits).toBe(10_000_000 - 120_000);
    expect(account.held).toBe(0);
  });

  it('draws a PNG of every SPEC size (auto: 1024x1024) that decodes to those dimensions', async () => {
    const { key } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 });
    for (const size of IMAGE_SIZES) {
      const answer = await client(key).images.generate({ model: 'mock-image', prompt: `a lighthouse at ${size}`, size, response_format: 'b64_json' });
      const bytes = Buffer.from(answer.data![0]!.b64_json!, 'base64');
      const [width, height] = size === 'auto' ? [1024, 1024] : size.split('x').map(Number);
      expect(readPngInfo(bytes), size).toMatchObject({ width, height });
      if (width! * height! <= 1024 * 1024) expect(decodePng(bytes).rgba).toHaveLength(width! * height! * 4);
    }
  });

  it('answers url by default: a signed link to the same bytes, served without a key, with length and cache headers', async () => {
    const { key, accountId } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 });
    const prompt = 'a green teapot on a table';
    const linked = await client(key).images.generate({ model: 'mock-image', prompt, size: '256x256', n: 2 });
    const inline = await client(key).images.generate({ model: 'mock-image', prompt, size: '256x256', n: 2, response_format: 'b64_json' });
    expect(linked.data).toHaveLength(2);
    for (const [index, datum] of linked.data!.entries()) {
      expect(datum.b64_json).toBeUndefined();
      const url = new URL(datum.url!);
      expect(url.origin).toBe(new URL(gateway.url).origin);
      expect(url.pathname).toMatch(/^\/v1\/images\/files\/img_[0-9a-f]{32}$/);
      const response = await fetch(url);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('image/png');
      const bytes = Buffer.from(await response.arrayBuffer());
      expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
      expect(response.headers.get('cache-control')).toMatch(/^private, max-age=\d+, immutable$/);
      expect(Number(/max-age=(\d+)/.exec(response.headers.get('cache-control')!)![1])).toBeLessThanOrEqual(3600);
      expect(bytes.equals(Buffer.from(inline.data![index]!.b64_json!, 'base64'))).toBe(true);
    }
    await flushAll(gateway);
    expect((await usageRowsOf(gateway, accountId)).map((row) => [row.units, row.cost])).toEqual([
      [2, 80_000],
      [2, 80_000],
    ]);
  });

  it('refuses a tampered or expired link with 403 before looking the image up, and a live link to a missing image with 404', async () => {
    const { key } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 });
    const answer = await client(key).images.generate({ model: 'mock-image', prompt: 'a blue bicycle', size: '256x256' });
    const url = new URL(answer.data![0]!.url!);
    const id = url.pathname.split('/').at(-1)!;
    const expires = url.searchParams.get('expires')!;
    const signature = url.searchParams.get('signature')!;
    const at = (path: string) => fetch(new URL(path, gateway.url));
    const flipped = `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`;
    const unknownId = `img_${'0'.repeat(32)}`;
    const refusals = [
      `/v1/images/files/${id}?expires=${expires}&signature=${flipped}`,
      `/v1/images/files/${id}?expires=${Number(expires) + 3600}&signature=${signature}`,
      `/v1/images/files/${id}?expires=${expires}`,
      `/v1/images/files/${unknownId}?expires=${expires}&signature=${signature}`,
      `/v1/images/files/${unknownId}?expires=${expires}&signature=${flipped}`,
    ];
    const bodies = new Set<string>();
    for (const path of refusals) {
      const response = await at(path);
      expect(response.status, path).toBe(403);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('FORBIDDEN');
      bodies.add(body.error.message);
    }
    // The same answer whether the id exists or not.
    expect(bodies.size).toBe(1);

    const store = gateway.gateway.services.generatedImages;
    const past = Math.floor(Date.now() / 1000) - 10;
    expect((await at(store.signedPath(id, past))).status).toBe(403);
    const missing = await at(store.signedPath(unknownId, Math.floor(Date.now() / 1000) + 600));
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    expect((await at(url.pathname + url.search)).status).toBe(200);
  });

  it('sweeps expired images away (never served after expiry in any case)', async () => {
    const { accountId } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 });
    const store = gateway.gateway.services.generatedImages;
    const longAgo = new Date(Date.now() - 2 * 3600 * 1000);
    const path = await store.save(accountId, Buffer.from('not really a png'), 'image/png', longAgo);
    const id = new URL(path, gateway.url).pathname.split('/').at(-1)!;
    const count = async () => (await gateway.gateway.services.db.selectFrom('generated_images').select('id').where('id', '=', id).execute()).length;
    expect(await count()).toBe(1);
    expect(await store.sweep()).toBeGreaterThanOrEqual(1);
    expect(await count()).toBe(0);
  });

  it('streams partial and completed events through the SDK, the final image equal to the non-streamed one, billed per completed image', async () => {
    const { key, accountId } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 });
    const stream = await client(key).images.generate({ model: 'mock-image', prompt: 'a paper boat', size: '512x512', n: 2, stream: true, partial_images: 2 });
    const events: OpenAI.Images.ImageGenStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(events.map((event) => (event.type === 'image_generation.partial_image' ? `partial:${event.partial_image_index}` : 'completed'))).toEqual([
      'partial:0',
      'partial:1',
      'completed',
      'partial:0',
      'partial:1',
      'completed',
    ]);
    for (const event of events) {
      expect(readPngInfo(Buffer.from(event.b64_json, 'base64'))).toMatchObject({ width: 512, height: 512 });
      expect(event).toMatchObject({ size: '512x512', output_format: 'png' });
      expect(typeof event.created_at).toBe('number');
    }
    const completed = events.filter((event): event is OpenAI.Images.ImageGenCompletedEvent => event.type === 'image_generation.completed');
    expect(completed[0]!.usage.input_tokens).toBeGreaterThan(0);
    const plain = await client(key).images.generate({ model: 'mock-image', prompt: 'a paper boat', size: '512x512', n: 2, response_format: 'b64_json' });
    expect(completed.map((event) => event.b64_json)).toEqual(plain.data!.map((datum) => datum.b64_json));
    await flushAll(gateway);
    const rows = await usageRowsOf(gateway, accountId);
    expect(rows.map((row) => [row.stream, row.units, row.cost, row.status])).toEqual([
      [true, 2, 80_000, 200],
      [false, 2, 80_000, 200],
    ]);
    expect((await balancesOf(gateway, accountId)).held).toBe(0);
  });

  it('refuses values SPEC does not allow with 400 INVALID_REQUEST naming the field, before anything is held', async () => {
    const { key, accountId } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 });
    for (const [body, param, code] of [
      [{ model: 'mock-image', prompt: 'x', n: 11 }, 'n', 'INVALID_REQUEST'],
      [{ model: 'mock-image', prompt: 'x', n: 0 }, 'n', 'INVALID_REQUEST'],
      [{ model: 'mock-image', prompt: 'x', size: '100x100' }, 'size', 'INVALID_REQUEST'],
      [{ model: 'mock-image', prompt: 'x', quality: 'ultra' }, 'quality', 'INVALID_REQUEST'],
      [{ model: 'mock-image', prompt: 'x', style: 'cartoon' }, 'style', 'INVALID_REQUEST'],
      [{ model: 'mock-image', prompt: 'x', response_format: 'jpeg' }, 'response_format', 'INVALID_REQUEST'],
      [{ model: 'mock-image', prompt: 'x', stream: true, partial_images: 4 }, 'partial_images', 'INVALID_REQUEST'],
      [{ model: 'mock-image' }, 'prompt', 'INVALID_REQUEST'],
      [{ model: 'mock-image', prompt: 'x'.repeat(32_001) }, 'prompt', 'INVALID_REQUEST'],
      [{ model: 'mock-chat', prompt: 'x' }, 'model', 'UNSUPPORTED_ENDPOINT'],
      [{ model: 'no-such-model', prompt: 'x' }, 'model', 'MODEL_NOT_FOUND'],
    ] as const) {
      const error = await apiErrorOf(client(key).images.generate(body as never));
      expect(error.status, JSON.stringify(body).slice(0, 80)).toBe(code === 'MODEL_NOT_FOUND' ? 404 : 400);
      expect(error.param).toBe(param);
      expect(error.code).toBe(code);
    }
    await flushAll(gateway);
    expect(await usageRowsOf(gateway, accountId)).toHaveLength(0);
    expect((await balancesOf(gateway, accountId)).current).toBe(10_000_000);
  });

  it("refuses what the model's catalog entry does not declare with 400 UNSUPPORTED_FEATURE naming the field", async () => {
    const { key, accountId } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 });
    for (const [body, param] of [
      [{ size: '4096x4096' }, 'size'],
      [{ size: 'auto' }, 'size'],
      [{ quality: 'hd' }, 'quality'],
      [{ style: 'vivid' }, 'style'],
      [{ n: 3 }, 'n'],
      [{ stream: true }, 'stream'],
    ] as const) {
      const error = await apiErrorOf(client(key).images.generate({ model: 'mock-image-narrow', prompt: 'a cat', ...body } as never));
      expect(error.status).toBe(400);
      expect(error.param).toBe(param);
      expect(error.code).toBe('UNSUPPORTED_FEATURE');
    }
    const long = await apiErrorOf(client(key).images.generate({ model: 'mock-image-narrow', prompt: 'y'.repeat(101) }));
    expect([long.status, long.param, long.code]).toEqual([400, 'prompt', 'INVALID_REQUEST']);
    // What it declares works, and `style` works on the model that declares it.
    const ok = await client(key).images.generate({ model: 'mock-image-narrow', prompt: 'a cat', size: '512x512', quality: 'standard', n: 2, response_format: 'b64_json' });
    expect(ok.data).toHaveLength(2);
    const styled = await client(key).images.generate({ model: 'mock-image', prompt: 'a cat', size: '256x256', quality: 'hd', style: 'natural', response_format: 'b64_json' });
    expect(styled.data).toHaveLength(1);
    await flushAll(gateway);
    expect((await usageRowsOf(gateway, accountId)).map((row) => [row.model, row.units, row.cost])).toEqual([
      ['mock-image-narrow', 2, 40_000],
      ['mock-image', 1, 40_000],
    ]);
  });

  it('refuses a request the balance cannot cover with 402 before drawing anything', async () => {
    const { key, accountId } = await gateway.createAccountWithKey({ plan: 'pro', credits: 0.1 });
    const error = await apiErrorOf(client(key).images.generate({ model: 'mock-image', prompt: 'a castle', n: 3, size: '256x256' }));
    expect([error.status, error.code]).toEqual([402, 'INSUFFICIENT_CREDITS']);
    await flushAll(gateway);
    expect((await balancesOf(gateway, accountId)).current).toBe(100_000);
  });
});
