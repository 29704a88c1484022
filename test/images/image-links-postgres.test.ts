/**
 * Signed image links with two gateway instances on one PostgreSQL database:
 * a link handed out by one instance is served by the other (bytes and the
 * signing secret live in the database), a tampered one is refused by both,
 * a disabled account's links stop serving on both at once, and the sweep
 * deletes expired images from PostgreSQL.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

let first: TestGateway;
let second: TestGateway;

beforeAll(async () => {
  first = await startTestGateway({ postgres: true });
  second = await startTestGateway({ databaseUrl: first.databaseUrl });
});

afterAll(async () => {
  await second?.close();
  await first?.close();
});

describe('image links across instances on PostgreSQL', () => {
  it('serves a link of one instance from the other, and refuses a tampered one on both', async () => {
    expect(first.gateway.services.database.kind).toBe('postgres');
    const { key } = await first.createAccountWithKey({ plan: 'pro', credits: 10 });
    const client = new OpenAI({ baseURL: `${first.url}/v1`, apiKey: key, maxRetries: 0 });
    const [linked, inline] = await Promise.all([
      client.images.generate({ model: 'mock-image', prompt: 'two instances', size: '512x512' }),
      client.images.generate({ model: 'mock-image', prompt: 'two instances', size: '512x512', response_format: 'b64_json' }),
    ]);
    const url = new URL(linked.data![0]!.url!);
    const onSecond = await fetch(new URL(url.pathname + url.search, second.url));
    expect(onSecond.status).toBe(200);
    expect(onSecond.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await onSecond.arrayBuffer()).equals(Buffer.from(inline.data![0]!.b64_json!, 'base64'))).toBe(true);
    const tampered = `${url.pathname}?expires=${Number(url.searchParams.get('expires')) + 1}&signature=${url.searchParams.get('signature')}`;
    for (const instance of [first, second]) expect((await fetch(new URL(tampered, instance.url))).status).toBe(403);
  });

  it("stops serving a disabled account's links on both instances at once (the link reads the account with the image)", async () => {
    const { accountId } = await first.createAccountWithKey({ plan: 'pro', credits: 10 });
    const path = await first.gateway.services.generatedImages.save(accountId, Buffer.from('shared'), 'image/png');
    for (const instance of [first, second]) expect((await fetch(new URL(path, instance.url))).status).toBe(200);
    await first.disableAccount(accountId);
    for (const instance of [second, first]) expect((await fetch(new URL(path, instance.url))).status).toBe(404);
  });

  it('sweeps expired images from PostgreSQL (from any instance) and keeps live ones', async () => {
    const { accountId } = await first.createAccountWithKey({ plan: 'pro', credits: 10 });
    const expiredPath = await first.gateway.services.generatedImages.save(accountId, Buffer.from('old'), 'image/png', new Date(Date.now() - 3 * 3600 * 1000));
    const livePath = await first.gateway.services.generatedImages.save(accountId, Buffer.from('new'), 'image/png');
    const idOf = (path: string) => new URL(path, first.url).pathname.split('/').at(-1)!;
    expect(await second.gateway.services.generatedImages.sweep()).toBeGreaterThanOrEqual(1);
    const left = await first.gateway.services.db.selectFrom('generated_images').select('id').where('id', 'in', [idOf(expiredPath), idOf(livePath)]).execute();
    expect(left.map((row) => row.id)).toEqual([idOf(livePath)]);
    const live = await fetch(new URL(livePath, second.url));
    expect(Buffer.from(await live.arrayBuffer()).toString()).toBe('new');
  });
});
