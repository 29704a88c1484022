/**
 * Signed image links as a client fetches them: `Range` and `If-Range` per
 * RFC 9110 on `GET /v1/images/files/{id}`.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
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
