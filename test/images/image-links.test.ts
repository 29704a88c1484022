/**
 * Signed image links as a client fetches them: `Range` and `If-Range` per
 * RFC 9110 on `GET /v1/images/files/{id}`; links built on `PUBLIC_BASE_URL`
 * or the listen address whatever `Host` the request carried; a disabled
 * account's links answer 404 until it is enabled again.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { updateAccount } from '../../server/accounts/accounts.service.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

let gateway: TestGateway;
let behindProxy: TestGateway;

beforeAll(async () => {
  [gateway, behindProxy] = await Promise.all([startTestGateway(), startTestGateway({ env: { PUBLIC_BASE_URL: 'https://gw.example.test/umg/' } })]);
});

afterAll(async () => {
  await Promise.all([gateway?.close(), behindProxy?.close()]);
});

/** An image generation answered as a link, sent with a `Host` of the client's choosing (fetch would not let us pick it). */
function generateWithHost(target: TestGateway, key: string, host: string): Promise<{ status: number; url: string }> {
  const body = JSON.stringify({ model: 'mock-image', prompt: 'a lighthouse', size: '256x256' });
  const gatewayUrl = new URL(target.url);
  return new Promise((resolve, reject) => {
    const sent = request(
      { host: gatewayUrl.hostname, port: gatewayUrl.port, method: 'POST', path: '/v1/images/generations', headers: { host, authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (answer) => {
        const chunks: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => chunks.push(chunk));
        answer.on('end', () => {
          const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data?: Array<{ url: string }> };
          resolve({ status: answer.statusCode ?? 0, url: parsed.data?.[0]?.url ?? '' });
        });
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

describe('the origin of a signed link', () => {
  it('is the listen address without PUBLIC_BASE_URL, whatever Host the request carried', async () => {
    const { key } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 });
    for (const host of ['evil.example', 'evil.example:8443', '[::1]:1']) {
      const answer = await generateWithHost(gateway, key, host);
      expect(answer.status).toBe(200);
      const url = new URL(answer.url);
      expect(url.origin, host).toBe(new URL(gateway.url).origin);
      expect((await fetch(url)).status).toBe(200);
    }
  });

  it('is PUBLIC_BASE_URL when set, whatever Host the request carried', async () => {
    const { key } = await behindProxy.createAccountWithKey({ plan: 'pro', credits: 10 });
    const answer = await generateWithHost(behindProxy, key, 'evil.example');
    expect(answer.url).toMatch(/^https:\/\/gw\.example\.test\/umg\/v1\/images\/files\/img_[0-9a-f]{32}\?expires=\d+&signature=/);
    // Behind the (imagined) proxy, the path reaches this gateway.
    const url = new URL(answer.url);
    expect((await fetch(new URL(`${url.pathname.replace(/^\/umg/, '')}${url.search}`, behindProxy.url))).status).toBe(200);
  });
});

describe('the links of a disabled account', () => {
  it('answer 404 NOT_FOUND (as an image that is gone) while the account is disabled, and serve again once it is enabled', async () => {
    const { accountId } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 });
    const link = new URL(await gateway.gateway.services.generatedImages.save(accountId, Buffer.from('pixels'), 'image/png'), gateway.url);
    expect((await fetch(link)).status).toBe(200);
    await gateway.disableAccount(accountId);
    const refused = await fetch(link);
    expect(refused.status).toBe(404);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    // A range asks for nothing else.
    expect((await fetch(link, { headers: { range: 'bytes=0-1' } })).status).toBe(404);
    await updateAccount(gateway.gateway.services.db, accountId, { disabled: false });
    const served = await fetch(link);
    expect(served.status).toBe(200);
    expect(await served.text()).toBe('pixels');
  });
});

describe('Range on an image link (RFC 9110)', () => {
  const bytes = randomBytes(100);
  let link: URL;

  beforeAll(async () => {
    const { accountId } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 });
    link = new URL(await gateway.gateway.services.generatedImages.save(accountId, bytes, 'image/png'), gateway.url);
  });

  const get = (headers: Record<string, string> = {}) => fetch(link, { headers });

  async function expectWhole(answer: Response, what: string): Promise<void> {
    expect(answer.status, what).toBe(200);
    expect(answer.headers.get('content-range'), what).toBeNull();
    expect(Buffer.from(await answer.arrayBuffer()).equals(bytes), what).toBe(true);
  }

  it('answers the whole file with accept-ranges and a strong entity tag', async () => {
    const answer = await get();
    expect(answer.headers.get('accept-ranges')).toBe('bytes');
    expect(answer.headers.get('etag')).toMatch(/^"img_[0-9a-f]{32}"$/);
    await expectWhole(answer, 'no range');
  });

  it('serves one range as 206 with content-range and content-length', async () => {
    const answer = await get({ range: 'bytes=10-19' });
    expect(answer.status).toBe(206);
    expect(answer.headers.get('content-range')).toBe('bytes 10-19/100');
    expect(answer.headers.get('content-length')).toBe('10');
    expect(Buffer.from(await answer.arrayBuffer()).equals(bytes.subarray(10, 20))).toBe(true);
  });

  it('serves a suffix longer than the file as the whole file in a 206', async () => {
    const answer = await get({ range: 'bytes=-500' });
    expect(answer.status).toBe(206);
    expect(answer.headers.get('content-range')).toBe('bytes 0-99/100');
    expect(Buffer.from(await answer.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('ignores an invalid range (bytes=5-2), malformed forms, other units and ranges apart: 200, the whole file', async () => {
    for (const range of ['bytes=5-2', 'bytes=0-1,5-2', 'bytes=x-1', 'bytes=1-2-3', 'bytes', 'pages=1-2', 'bytes=0-1,50-60']) await expectWhole(await get({ range }), range);
  });

  it('joins overlapping ranges into one part', async () => {
    const answer = await get({ range: 'bytes=0-9, 5-14' });
    expect(answer.status).toBe(206);
    expect(answer.headers.get('content-range')).toBe('bytes 0-14/100');
    expect(Buffer.from(await answer.arrayBuffer()).equals(bytes.subarray(0, 15))).toBe(true);
  });

  it('answers 416 with content-range */size when no range lies in the file', async () => {
    for (const range of ['bytes=100-', 'bytes=-0', 'bytes=200-300']) {
      const answer = await get({ range });
      expect(answer.status, range).toBe(416);
      expect(answer.headers.get('content-range')).toBe('bytes */100');
      expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('RANGE_NOT_SATISFIABLE');
    }
  });

  it('obeys If-Range: the current tag serves the part, another tag or a date the whole file', async () => {
    const etag = (await get()).headers.get('etag')!;
    const current = await get({ range: 'bytes=0-9', 'if-range': etag });
    expect(current.status).toBe(206);
    expect(Buffer.from(await current.arrayBuffer()).equals(bytes.subarray(0, 10))).toBe(true);
    await expectWhole(await get({ range: 'bytes=0-9', 'if-range': '"img_other"' }), 'another tag');
    await expectWhole(await get({ range: 'bytes=0-9', 'if-range': new Date().toUTCString() }), 'a date');
  });
});
