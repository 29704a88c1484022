/**
 * The media operations on an OpenAI-format provider (the upstream test
 * server), through the official `openai` SDK: bodies passed through with
 * only the model swapped, answers relayed, image edits re-sent as multipart
 * with the files byte for byte (also on a retry and after a failover),
 * base64 images turned into signed links while a provider's own URL is
 * passed on, streamed image events relayed, provider 4xx relayed and 5xx
 * answered 502, and the charges in each operation's unit.
 */
import { createHash } from 'node:crypto';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CatalogFile, ModelEntry } from '../../server/catalog/catalog.schema.js';
import { FAST_UPSTREAM } from '../support/e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { balancesOf, flushAll, usageRowOf, usageRowsOf } from '../support/usage.js';
import { createOpenAIMediaRoutes, readRecordedForm, upstreamPng } from '../upstreams/openai-media-upstream.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { apiErrorOf, makePng } from '../images/image-e2e.js';

const SECRET = 'sk-upstream-media-secret-0123456789';

let primary: UpstreamServer;
let backup: UpstreamServer;
let gateway: TestGateway;
let key: string;
let accountId: string;
let client: OpenAI;

function model(id: string, upstreamModel: string, endpoints: ModelEntry['endpoints'], pricing: ModelEntry['pricing'], extra: Partial<ModelEntry> = {}): ModelEntry {
  return { id, ownedBy: 'openai', provider: 'primary', upstreamModel, endpoints, pricing, ...extra };
}

function catalog(primaryUrl: string, backupUrl: string): CatalogFile {
  const withBackup = { deployments: [{ provider: 'backup', priority: 1, weight: 1 }] };
  return {
    providers: [
      { id: 'primary', kind: 'openai', baseUrl: primaryUrl, apiKey: 'env:MEDIA_UPSTREAM_KEY' },
      { id: 'backup', kind: 'openai', baseUrl: backupUrl, apiKey: 'env:MEDIA_UPSTREAM_KEY' },
    ],
    models: [
      model('up-embedding', 'text-embedding-3-small', ['/v1/embeddings'], { input: 0.02, output: 0 }, { dimensions: 1536 }),
      model('up-embedding-large', 'text-embedding-3-large', ['/v1/embeddings'], { input: 0.13, output: 0 }, { dimensions: 3072, dimensionsAdjustable: true, ...withBackup }),
      model('up-moderation', 'omni-moderation-latest', ['/v1/moderations'], { input: 0, output: 0 }),
      model('up-image', 'gpt-image-1', ['/v1/images/generations', '/v1/images/edits'], { input: 0, output: 0, image: 0.05 }, {
        images: { qualities: ['low', 'medium', 'high', 'auto'], streaming: true },
        ...withBackup,
      }),
    ],
  };
}

beforeAll(async () => {
  primary = await startOpenAIUpstream({ routes: createOpenAIMediaRoutes('primary'), expectedApiKey: SECRET });
  backup = await startOpenAIUpstream({ routes: createOpenAIMediaRoutes('backup'), expectedApiKey: SECRET });
  gateway = await startTestGateway({ catalog: catalog(primary.url, backup.url), env: { MEDIA_UPSTREAM_KEY: SECRET }, config: { upstream: FAST_UPSTREAM } });
  ({ key, accountId } = await gateway.createAccountWithKey({ plan: 'pro', credits: 50 }));
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await primary?.close();
  await backup?.close();
});

beforeEach(() => {
  primary.reset();
  backup.reset();
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

async function fileBytes(form: FormData, field: string): Promise<Array<{ name: string; type: string; hash: string }>> {
  return Promise.all(
    form.getAll(field).map(async (value) => {
      const file = value as File;
      return { name: file.name, type: file.type, hash: sha256(new Uint8Array(await file.arrayBuffer())) };
    }),
  );
}

describe('embeddings on an OpenAI-format provider', () => {
  it('passes the body through with the upstream model and relays the answer; bills the provider count', async () => {
    const answer = await client.embeddings.create({ model: 'up-embedding', input: ['first text here', 'second'] }).withResponse();
    const request = primary.requests.at(-1)!;
    expect(request.path).toBe('/v1/embeddings');
    expect(request.headers.authorization).toBe(`Bearer ${SECRET}`);
    // The SDK asks base64 by default; it reaches the provider as asked.
    expect(request.body).toEqual({ model: 'text-embedding-3-small', input: ['first text here', 'second'], encoding_format: 'base64' });
    expect(answer.data.model).toBe('text-embedding-3-small-from-primary');
    expect(answer.data.data).toHaveLength(2);
    expect(answer.data.data[0]!.embedding).toHaveLength(8);
    const floats = await client.embeddings.create({ model: 'up-embedding', input: ['first text here', 'second'], encoding_format: 'float' });
    expect(floats.data[0]!.embedding).toEqual(answer.data.data[0]!.embedding);
    const row = await usageRowOf(gateway, answer.response.headers.get('x-request-id')!);
    expect([row.provider, row.input_tokens, row.status]).toEqual(['primary', answer.data.usage.prompt_tokens, 200]);
  });

  it('forwards dimensions where the model allows them, and refuses them elsewhere without calling the provider', async () => {
    const reduced = await client.embeddings.create({ model: 'up-embedding-large', input: 'x', dimensions: 16, encoding_format: 'float' });
    expect(reduced.data[0]!.embedding).toHaveLength(16);
    expect(primary.requests.at(-1)!.body).toMatchObject({ dimensions: 16 });
    const count = primary.requests.length;
    const error = await apiErrorOf(client.embeddings.create({ model: 'up-embedding', input: 'x', dimensions: 16 }));
    expect([error.status, error.param]).toEqual([400, 'dimensions']);
    expect(primary.requests).toHaveLength(count);
  });

  it('relays a provider 4xx with its status and message, answers a provider 5xx 502, and charges neither', async () => {
    const { key: errorKey, accountId: errorAccount } = await gateway.createAccountWithKey({ plan: 'pro', credits: 5 });
    const errors = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: errorKey, maxRetries: 0 });
    primary.script({ kind: 'status', status: 400, message: 'This model does not accept that input.', param: 'input', path: '/v1/embeddings' });
    const relayed = await apiErrorOf(errors.embeddings.create({ model: 'up-embedding', input: 'x' }));
    expect(relayed.status).toBe(400);
    expect(relayed.message).toMatch(/does not accept that input/);
    expect(relayed.param).toBe('input');
    primary.script(...Array.from({ length: 3 }, () => ({ kind: 'status' as const, status: 500, path: '/v1/embeddings' })));
    const failed = await apiErrorOf(errors.embeddings.create({ model: 'up-embedding', input: 'x' }));
    expect([failed.status, failed.code]).toEqual([502, 'UPSTREAM_ERROR']);
    expect(JSON.stringify(failed.error)).not.toContain(SECRET);
    await flushAll(gateway);
    expect((await usageRowsOf(gateway, errorAccount)).map((row) => [row.status, row.cost])).toEqual([
      [400, 0],
      [502, 0],
    ]);
    expect(await balancesOf(gateway, errorAccount)).toMatchObject({ current: 5_000_000, held: 0 });
  });

  it('falls over to the second deployment when the first keeps failing', async () => {
    primary.script(...Array.from({ length: 3 }, () => ({ kind: 'status' as const, status: 503, path: '/v1/embeddings' })));
    const answer = await client.embeddings.create({ model: 'up-embedding-large', input: 'fail over', encoding_format: 'float' }).withResponse();
    expect(answer.data.model).toBe('text-embedding-3-large-from-backup');
    expect(backup.requests).toHaveLength(1);
    const row = await usageRowOf(gateway, answer.response.headers.get('x-request-id')!);
    expect(row.provider).toBe('backup');
  });
});

describe('moderations on an OpenAI-format provider', () => {
  it('passes string and multimodal inputs through and relays the verdicts', async () => {
    const answer = await client.moderations.create({ model: 'up-moderation', input: ['I will kill the process', 'hello'] });
    expect(primary.requests.at(-1)!.body).toEqual({ model: 'omni-moderation-latest', input: ['I will kill the process', 'hello'] });
    expect(answer.results.map((result) => result.flagged)).toEqual([true, false]);
    expect(answer.id).toMatch(/^modr-primary-/);
    const items = [
      { type: 'text' as const, text: 'look at this' },
      { type: 'image_url' as const, image_url: { url: 'https://example.com/a.png' } },
    ];
    await client.moderations.create({ model: 'up-moderation', input: items });
    expect(primary.requests.at(-1)!.body).toEqual({ model: 'omni-moderation-latest', input: items });
  });
});

describe('image generation on an OpenAI-format provider', () => {
  it('turns base64 images into signed links to the gateway by default, passes a provider URL on, and b64_json as is', async () => {
    const { key: imageKey, accountId: imageAccount } = await gateway.createAccountWithKey({ plan: 'pro', credits: 5 });
    const images = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: imageKey, maxRetries: 0 });
    const linked = await images.images.generate({ model: 'up-image', prompt: 'a lantern', n: 2, quality: 'high' });
    expect(primary.requests.at(-1)!.body).toEqual({ model: 'gpt-image-1', prompt: 'a lantern', n: 2, quality: 'high' });
    for (const datum of linked.data!) {
      expect(datum.url!.startsWith(`${gateway.url}/v1/images/files/`)).toBe(true);
      const response = await fetch(datum.url!);
      expect(Buffer.from(await response.arrayBuffer()).equals(upstreamPng('primary'))).toBe(true);
    }
    const providerUrl = await images.images.generate({ model: 'up-image', prompt: 'a lantern', response_format: 'url' });
    expect(providerUrl.data![0]!.url).toMatch(/^https:\/\/images\.upstream\.test\/primary\//);
    const inline = await images.images.generate({ model: 'up-image', prompt: 'a lantern', response_format: 'b64_json' });
    expect(inline.data![0]!.b64_json).toBe(upstreamPng('primary').toString('base64'));
    await flushAll(gateway);
    expect((await usageRowsOf(gateway, imageAccount)).map((row) => [row.provider, row.units, row.cost])).toEqual([
      ['primary', 2, 100_000],
      ['primary', 1, 50_000],
      ['primary', 1, 50_000],
    ]);
  });

  it('relays streamed events through the SDK and bills each completed image', async () => {
    const stream = await client.images.generate({ model: 'up-image', prompt: 'a kite', n: 2, stream: true, partial_images: 1 }).withResponse();
    const types: string[] = [];
    for await (const event of stream.data) types.push(event.type);
    expect(types).toEqual(['image_generation.partial_image', 'image_generation.completed', 'image_generation.partial_image', 'image_generation.completed']);
    expect(primary.requests.at(-1)!.body).toMatchObject({ stream: true, partial_images: 1, model: 'gpt-image-1' });
    const row = await usageRowOf(gateway, stream.response.headers.get('x-request-id')!);
    expect([row.stream, row.units, row.cost, row.error_code]).toEqual([true, 2, 100_000, null]);
  });

  it("ends a stream with an in-format error event the SDK throws when the provider's stream fails", async () => {
    primary.script({
      kind: 'sse',
      path: '/v1/images/generations',
      frames: [
        `event: image_generation.partial_image\ndata: ${JSON.stringify({ type: 'image_generation.partial_image', partial_image_index: 0, b64_json: 'AAAA' })}\n\n`,
        `event: error\ndata: ${JSON.stringify({ type: 'error', error: { message: 'content policy violation', type: 'invalid_request_error' } })}\n\n`,
      ],
    });
    const stream = await client.images.generate({ model: 'up-image', prompt: 'x', stream: true }).withResponse();
    const seen: string[] = [];
    const error = await (async () => {
      for await (const event of stream.data) seen.push(event.type);
    })().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(seen).toEqual(['image_generation.partial_image']);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as Error).message).toMatch(/content policy violation/);
    const row = await usageRowOf(gateway, stream.response.headers.get('x-request-id')!);
    expect([row.units, row.cost, row.error_code]).toEqual([0, 0, 'UPSTREAM_ERROR']);
  });
});

describe('image edits on an OpenAI-format provider', () => {
  it('re-sends the multipart form with every file byte for byte, the upstream model and the client fields', async () => {
    const image = makePng(64, 64, { noise: true });
    const mask = makePng(64, 64, { rgba: [0, 0, 0, 0] });
    const answer = await client.images.edit({
      model: 'up-image',
      prompt: 'add a hat',
      image: await toFile(image, 'portrait.png', { type: 'image/png' }),
      mask: await toFile(mask, 'mask.png', { type: 'image/png' }),
      n: 2,
      size: '1024x1024',
      quality: 'high',
      input_fidelity: 'high',
      response_format: 'b64_json',
    });
    expect(answer.data).toHaveLength(2);
    const request = primary.requests.at(-1)!;
    expect(request.path).toBe('/v1/images/edits');
    expect(Number(request.headers['content-length'])).toBe(request.rawBytes.length);
    const form = await readRecordedForm(request);
    expect(Object.fromEntries([...form.entries()].filter(([, value]) => typeof value === 'string'))).toEqual({
      model: 'gpt-image-1',
      prompt: 'add a hat',
      n: '2',
      size: '1024x1024',
      quality: 'high',
      input_fidelity: 'high',
      response_format: 'b64_json',
    });
    expect(await fileBytes(form, 'image')).toEqual([{ name: 'portrait.png', type: 'image/png', hash: sha256(image) }]);
    expect(await fileBytes(form, 'mask')).toEqual([{ name: 'mask.png', type: 'image/png', hash: sha256(mask) }]);
  });

  it('keeps image[] files in order and intact across a retry and a failover to the second deployment', async () => {
    const files = [makePng(40, 30, { noise: true }), makePng(20, 20, { noise: true }), makePng(16, 48, { noise: true })];
    const upload = () => Promise.all(files.map((bytes, index) => toFile(bytes, `part-${index}.png`, { type: 'image/png' })));
    const expected = files.map((bytes, index) => ({ name: `part-${index}.png`, type: 'image/png', hash: sha256(bytes) }));

    primary.script({ kind: 'status', status: 500, path: '/v1/images/edits' });
    await client.images.edit({ model: 'up-image', prompt: 'retry me', image: await upload(), response_format: 'b64_json' });
    expect(primary.requests).toHaveLength(2);
    for (const request of primary.requests) expect(await fileBytes(await readRecordedForm(request), 'image[]')).toEqual(expected);

    primary.reset();
    primary.script(...Array.from({ length: 3 }, () => ({ kind: 'status' as const, status: 502, path: '/v1/images/edits' })));
    const answer = await client.images.edit({ model: 'up-image', prompt: 'fail over', image: await upload(), response_format: 'b64_json' }).withResponse();
    expect(answer.data.data![0]!.b64_json).toBe(upstreamPng('backup').toString('base64'));
    expect(backup.requests).toHaveLength(1);
    expect(await fileBytes(await readRecordedForm(backup.requests[0]!), 'image[]')).toEqual(expected);
    const row = await usageRowOf(gateway, answer.response.headers.get('x-request-id')!);
    expect([row.provider, row.units, row.endpoint]).toEqual(['backup', 1, '/v1/images/edits']);
  });

  it('relays streamed edit events and a provider 4xx', async () => {
    const stream = await client.images.edit({ model: 'up-image', prompt: 'stream it', image: await toFile(makePng(32, 32), 'a.png', { type: 'image/png' }), stream: true });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual(['image_edit.partial_image', 'image_edit.completed']);
    expect((await readRecordedForm(primary.requests.at(-1)!)).get('stream')).toBe('true');

    primary.script({ kind: 'status', status: 400, message: 'Invalid image: transparency is not supported.', param: 'image', path: '/v1/images/edits' });
    const error = await apiErrorOf(client.images.edit({ model: 'up-image', prompt: 'x', image: await toFile(makePng(32, 32), 'a.png', { type: 'image/png' }) }));
    expect([error.status, error.param]).toEqual([400, 'image']);
    expect(error.message).toMatch(/transparency is not supported/);
    void accountId;
  });
});
