/**
 * `POST /v1/images/edits` with the official `openai` SDK (`toFile`) on the
 * mock provider: one image, several (`image[]`), a mask; every file rule of
 * SPEC with its status (413 over a size, 415 for a file that is not a PNG,
 * 400 naming the field otherwise); the free plan refused from the key alone,
 * before a byte of the upload is read; streamed events; one usage row with a
 * charge per image; uploads removed when the request ends.
 */
import { request as httpRequest } from 'node:http';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodePng, readPngInfo } from '../../server/media/png.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { balancesOf, flushAll, usageRowsOf } from '../support/usage.js';
import { waitFor } from '../support/wait.js';
import { apiErrorOf, IMAGE_TEST_CATALOG, imageClient, makePng, pngOfPixels } from './image-e2e.js';

let gateway: TestGateway;
let key: string;
let accountId: string;

const BLUE: [number, number, number, number] = [40, 120, 200, 255];

beforeAll(async () => {
  gateway = await startTestGateway({ catalog: IMAGE_TEST_CATALOG });
  ({ key, accountId } = await gateway.createAccountWithKey({ plan: 'pro', credits: 100 }));
});

afterAll(async () => {
  await gateway?.close();
});

function client(apiKey = key): OpenAI {
  return imageClient(gateway, apiKey);
}

const png = (bytes: Buffer, name = 'image.png') => toFile(bytes, name, { type: 'image/png' });

/** A mask whose left half is fully transparent (edit there) and right half opaque (keep). */
function halfMask(side: number): Buffer {
  const rgba = new Uint8Array(side * side * 4);
  for (let y = 0; y < side; y++) for (let x = 0; x < side; x++) rgba.set(x < side / 2 ? [0, 0, 0, 0] : [0, 0, 0, 255], (y * side + x) * 4);
  return pngOfPixels(side, side, rgba);
}

function pixel(image: { width: number; rgba: Uint8Array }, x: number, y: number): number[] {
  const at = (y * image.width + x) * 4;
  return [...image.rgba.subarray(at, at + 4)];
}

async function uploadsSettled(): Promise<void> {
  await waitFor(() => gateway.gateway.services.uploads.count === 0 && gateway.gateway.services.uploads.heldBytes === 0, { message: 'the uploads to be removed' });
}

describe('POST /v1/images/edits on the mock', () => {
  it('edits one square PNG under its mask: the transparent half repainted, the opaque half kept', async () => {
    const before = (await usageRowsOf(gateway, accountId)).length;
    const answer = await client().images.edit({
      model: 'mock-image',
      prompt: 'a sailboat on the sea',
      image: await png(makePng(256, 256, { rgba: BLUE })),
      mask: await png(halfMask(256), 'mask.png'),
      size: '512x512',
      response_format: 'b64_json',
    });
    expect(answer.data).toHaveLength(1);
    expect(answer.data![0]!.revised_prompt).toBeUndefined();
    const image = decodePng(Buffer.from(answer.data![0]!.b64_json!, 'base64'));
    expect([image.width, image.height]).toEqual([512, 512]);
    for (const [x, y] of [[300, 10], [500, 250], [400, 500]] as const) expect(pixel(image, x, y)).toEqual(BLUE);
    const left: number[][] = [];
    for (let y = 0; y < 512; y += 32) for (let x = 0; x < 250; x += 32) left.push(pixel(image, x, y));
    expect(left.some((value) => value.join() !== BLUE.join())).toBe(true);
    await flushAll(gateway);
    const rows = (await usageRowsOf(gateway, accountId)).slice(before);
    expect(rows.map((row) => [row.endpoint, row.units, row.cost, row.status])).toEqual([['/v1/images/edits', 1, 40_000, 200]]);
    await uploadsSettled();
  });

  it('edits several images sent as image[] (any aspect, the first edited), n images, url links by default', async () => {
    const images = await Promise.all([png(makePng(300, 200, { rgba: BLUE }), 'a.png'), png(makePng(64, 64, { rgba: [200, 30, 30, 255] }), 'b.png'), png(makePng(128, 32), 'c.png')]);
    const answer = await client().images.edit({ model: 'mock-image', prompt: 'combine them', image: images, n: 2, size: '1024x1536' });
    expect(answer.data).toHaveLength(2);
    const bodies: Buffer[] = [];
    for (const datum of answer.data!) {
      const response = await fetch(datum.url!);
      expect(response.status).toBe(200);
      bodies.push(Buffer.from(await response.arrayBuffer()));
      expect(readPngInfo(bodies.at(-1)!)).toMatchObject({ width: 1024, height: 1536 });
    }
    expect(bodies[0]!.equals(bodies[1]!)).toBe(false);
    await uploadsSettled();
  });

  it('accepts an image of 4 MB or more in the multi-image form only (413 for the single-image form)', async () => {
    const large = makePng(1024, 1024, { noise: true });
    expect(large.length).toBeGreaterThanOrEqual(4 * 1024 * 1024);
    const single = await apiErrorOf(client().images.edit({ model: 'mock-image', prompt: 'x', image: await png(large), size: '256x256' }));
    expect([single.status, single.code, single.param]).toEqual([413, 'PAYLOAD_TOO_LARGE', 'image']);
    const several = await client().images.edit({ model: 'mock-image', prompt: 'x', image: [await png(large), await png(makePng(32, 32))], size: '256x256', response_format: 'b64_json' });
    expect(several.data).toHaveLength(1);
    await uploadsSettled();
  });

  it('streams image_edit.partial_image and image_edit.completed events through the SDK', async () => {
    const stream = await client().images.edit({ model: 'mock-image', prompt: 'make it night', image: await png(makePng(128, 128)), size: '256x256', stream: true, partial_images: 1 });
    const types: string[] = [];
    let final: string | undefined;
    for await (const event of stream) {
      types.push(event.type === 'image_edit.partial_image' ? `partial:${event.partial_image_index}` : event.type);
      if (event.type === 'image_edit.completed') final = event.b64_json;
      expect(readPngInfo(Buffer.from(event.b64_json, 'base64'))).toMatchObject({ width: 256, height: 256 });
    }
    expect(types).toEqual(['partial:0', 'image_edit.completed']);
    const plain = await client().images.edit({ model: 'mock-image', prompt: 'make it night', image: await png(makePng(128, 128)), size: '256x256', response_format: 'b64_json' });
    expect(final).toBe(plain.data![0]!.b64_json);
    await uploadsSettled();
  });

  it('refuses each file and field rule with its documented status, naming the field, and charges nothing', async () => {
    const { key: ruleKey, accountId: ruleAccount } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 });
    const square = makePng(64, 64);
    const cases: Array<[string, () => Promise<unknown>, number, string, string]> = [
      ['non-square single image', async () => ({ image: await png(makePng(64, 48)) }), 400, 'INVALID_REQUEST', 'image'],
      ['mask of other dimensions', async () => ({ image: await png(square), mask: await png(makePng(32, 32, { rgba: [0, 0, 0, 0] }), 'mask.png') }), 400, 'INVALID_REQUEST', 'mask'],
      ['mask without alpha', async () => ({ image: await png(square), mask: await png(makePng(64, 64, { opaqueRgb: true }), 'mask.png') }), 400, 'INVALID_REQUEST', 'mask'],
      ['17 images', async () => ({ image: await Promise.all(Array.from({ length: 17 }, (_, index) => png(square, `${index}.png`))) }), 400, 'INVALID_REQUEST', 'image[]'],
      ['a JPEG named .png', async () => ({ image: await toFile(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0, 1]), 'photo.png', { type: 'image/png' }) }), 415, 'UNSUPPORTED_MEDIA_TYPE', 'image'],
      ['a truncated PNG', async () => ({ image: await png(square.subarray(0, square.length - 20)) }), 400, 'INVALID_REQUEST', 'image'],
      ['an empty file', async () => ({ image: await png(Buffer.alloc(0)) }), 400, 'INVALID_REQUEST', 'image'],
      ['a text mask', async () => ({ image: await png(square), mask: await toFile(Buffer.from('transparent please'), 'mask.png') }), 415, 'UNSUPPORTED_MEDIA_TYPE', 'mask'],
      ['n = 11', async () => ({ image: await png(square), n: 11 }), 400, 'INVALID_REQUEST', 'n'],
      ['a size SPEC lacks', async () => ({ image: await png(square), size: '640x480' }), 400, 'INVALID_REQUEST', 'size'],
      ['no prompt', async () => ({ image: await png(square), prompt: '' }), 400, 'INVALID_REQUEST', 'prompt'],
      ['no image', async () => ({}), 400, 'INVALID_REQUEST', 'image'],
    ];
    for (const [name, fields, status, code, param] of cases) {
      const error = await apiErrorOf(client(ruleKey).images.edit({ model: 'mock-image', prompt: 'edit it', ...((await fields()) as object) } as never), name);
      expect([error.status, error.code, error.param], name).toEqual([status, code, param]);
    }
    // `image` and `image[]` count together (the SDK sends one spelling, so this one is a plain form).
    const form = new FormData();
    form.append('model', 'mock-image');
    form.append('prompt', 'edit it');
    form.append('image', new Blob([square], { type: 'image/png' }), 'first.png');
    for (let index = 0; index < 16; index++) form.append('image[]', new Blob([square], { type: 'image/png' }), `${index}.png`);
    const mixed = await fetch(new URL('/v1/images/edits', gateway.url), { method: 'POST', headers: { authorization: `Bearer ${ruleKey}` }, body: form });
    expect(mixed.status).toBe(400);
    expect(((await mixed.json()) as { error: { param: string } }).error.param).toBe('image');
    const narrow = await apiErrorOf(
      client(ruleKey).images.edit({ model: 'mock-image-narrow', prompt: 'edit it', image: await Promise.all([1, 2, 3].map((index) => png(square, `${index}.png`))), size: '256x256' }),
    );
    expect([narrow.status, narrow.code, narrow.param]).toEqual([400, 'UNSUPPORTED_FEATURE', 'image']);
    await flushAll(gateway);
    expect(await usageRowsOf(gateway, ruleAccount)).toHaveLength(0);
    expect(await balancesOf(gateway, ruleAccount)).toMatchObject({ current: 10_000_000, held: 0 });
    await uploadsSettled();
  });

  it('refuses a free account with 403 PLAN_RESTRICTED through the SDK, and stores nothing', async () => {
    const { key: freeKey, accountId: freeAccount } = await gateway.createAccountWithKey({ plan: 'free', credits: 10 });
    const error = await apiErrorOf(client(freeKey).images.edit({ model: 'mock-image', prompt: 'x', image: await png(makePng(64, 64)) }));
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(error.code).toBe('PLAN_RESTRICTED');
    await flushAll(gateway);
    expect(await usageRowsOf(gateway, freeAccount)).toHaveLength(0);
    expect(gateway.gateway.services.uploads.count).toBe(0);
  });

  it('documents the edit as multipart/form-data, and the other media routes, in /openapi.json', async () => {
    const document = (await (await fetch(new URL('/openapi.json', gateway.url))).json()) as { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> } }>> };
    const edit = document.paths['/v1/images/edits']!.post!.requestBody!.content;
    expect(Object.keys(edit)).toEqual(['multipart/form-data']);
    expect(Object.keys(edit['multipart/form-data']!.schema.properties!)).toEqual(expect.arrayContaining(['model', 'prompt', 'image', 'image[]', 'mask', 'n', 'size']));
    expect(Object.keys(document.paths['/v1/embeddings']!.post!.requestBody!.content)).toEqual(['application/json']);
    expect(document.paths['/v1/moderations']).toHaveProperty('post');
    expect(document.paths['/v1/images/generations']).toHaveProperty('post');
    expect(document.paths['/v1/images/files/{id}']).toHaveProperty('get');
  });

  it('answers a free account 403 before reading its upload: the refusal arrives while the body is still unsent', async () => {
    const { key: freeKey } = await gateway.createAccountWithKey({ plan: 'free', credits: 10 });
    const boundary = 'umg-test-boundary';
    const head = `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n`;
    const target = new URL('/v1/images/edits', gateway.url);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const request = httpRequest(target, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${freeKey}`,
          'content-type': `multipart/form-data; boundary=${boundary}`,
          // Announces 3 MB; only the part head and 1 KB are ever sent.
          'content-length': String(3 * 1024 * 1024),
        },
      });
      request.on('error', reject);
      request.on('response', (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => {
          resolve({ status: response.statusCode ?? 0, body });
          request.destroy();
        });
      });
      request.write(head);
      request.write(Buffer.alloc(1024, 7));
      // Left open: the gateway must answer without waiting for the rest.
    });
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'PLAN_RESTRICTED' } });
    expect(gateway.gateway.services.uploads.count).toBe(0);
    expect(gateway.gateway.services.uploads.heldBytes).toBe(0);
  });
});
