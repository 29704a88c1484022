/**
 * Inputs that used to end in a 500 (or worse, after billing), and the money
 * rules around `n`: each is now a clear 400 naming the field, or a served
 * answer; a provider's `allowedBetas` narrows the betas a tenant may switch on.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicUpstream } from '../upstreams/anthropic-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer, getJson, postJson } from '../support/http.js';

function errorOf(body: unknown): { code?: string; param?: string | null } {
  return ((body as { error?: { code?: string; param?: string | null } }).error ?? {}) as { code?: string; param?: string | null };
}

describe('bad input: a 400 naming the field, never a 500', () => {
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway();
    ({ key } = await gateway.createAccountWithKey());
  });
  afterAll(() => gateway?.close());

  const chat = (body: unknown) => postJson(`${gateway.url}/v1/chat/completions`, body, bearer(key));

  it('refuses max_tokens beyond any model (9007199254740991) with 400 naming it', async () => {
    const answer = await chat({ model: 'mock-chat', max_tokens: 9007199254740991, messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.status).toBe(400);
    expect(errorOf(answer.body)).toMatchObject({ code: 'INVALID_REQUEST', param: 'max_tokens' });
  });

  it('refuses n past 128 with 400 naming it', async () => {
    const answer = await chat({ model: 'mock-chat', n: 129, messages: [{ role: 'user', content: 'hi' }] });
    expect(answer.status).toBe(400);
    expect(errorOf(answer.body)).toMatchObject({ code: 'INVALID_REQUEST', param: 'n' });
  });

  it('refuses a body nested 4,000 levels deep with 400', async () => {
    let nested: unknown = 'leaf';
    for (let depth = 0; depth < 4000; depth++) nested = { a: nested };
    const answer = await chat({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }], metadata: nested });
    expect(answer.status).toBe(400);
    expect(errorOf(answer.body).code).toBe('INVALID_REQUEST');
  });

  it('refuses a usage query with a timestamp beyond year 9999 with 400 naming it', async () => {
    const answer = await getJson(`${gateway.url}/v1/usage?from=99999999999999999`, bearer(key));
    expect(answer.status).toBe(400);
    expect(errorOf(answer.body)).toMatchObject({ code: 'INVALID_REQUEST', param: 'from' });
    const page = await getJson(`${gateway.url}/v1/usage?page=100000000000000000000`, bearer(key));
    expect(page.status).toBe(400);
  });

  it('answers a field name outside Latin-1 in x-gateway-dropped-params, escaped', async () => {
    const answer = await postJson(
      `${gateway.url}/v1/messages`,
      { model: 'mock-chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }], 'ünïcødé_✓': true },
      { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    );
    expect(answer.status).toBe(200);
    const dropped = answer.headers.get('x-gateway-dropped-params') ?? '';
    expect(decodeURIComponent(dropped)).toContain('ünïcødé_✓');
  });

  it('stores and continues a Responses conversation holding \\u0000 and a lone surrogate', async () => {
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
    const first = await client.responses.create({ model: 'mock-chat', input: 'nul \u0000 and a lone \ud800 surrogate' });
    expect(first.id).toBeTruthy();
    const second = await client.responses.create({ model: 'mock-chat', input: 'and then?', previous_response_id: first.id });
    expect(second.id).toBeTruthy();
    const streamed = await client.responses.create({ model: 'mock-chat', input: 'stream \u0000 \udfff', stream: true });
    const types: string[] = [];
    for await (const event of streamed) types.push(event.type);
    expect(types.at(-1)).toBe('response.completed');
    expect(types).not.toContain('error');
  });
});

describe('money: n choices are held and charged', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(() => gateway?.close());

  it('refuses with 402 a request whose n choices the balance cannot cover, though one choice would fit', async () => {
    // mock-chat: 2 credits per million output tokens. 128 × 1,000 tokens = 0.256 credits; one choice 0.002.
    const { key } = await gateway.createAccountWithKey({ credits: 0.01 });
    const body = { model: 'mock-chat', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] };
    const many = await postJson(`${gateway.url}/v1/chat/completions`, { ...body, n: 128 }, bearer(key));
    expect(many.status).toBe(402);
    expect(errorOf(many.body).code).toBe('INSUFFICIENT_CREDITS');
    const one = await postJson(`${gateway.url}/v1/chat/completions`, body, bearer(key));
    expect(one.status).toBe(200);
  });
});

describe('forwarded betas, narrowed by allowedBetas (betas are forwarded by default; a catalog list narrows them)', () => {
  let upstream: UpstreamServer;
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    upstream = await startAnthropicUpstream();
    gateway = await startTestGateway({
      env: { UMG_BETAS_KEY: 'sk-ant-betas-0123456789' },
      catalog: {
        providers: [{ id: 'anthropic-up', kind: 'anthropic', baseUrl: upstream.url, apiKey: 'env:UMG_BETAS_KEY', allowedBetas: ['interleaved-thinking-2025-05-14'] }],
        models: [{ id: 'claude', ownedBy: 'e2e', provider: 'anthropic-up', upstreamModel: 'claude-sonnet-4-5', endpoints: ['/v1/messages'], pricing: { input: 1, output: 1 } }],
      },
    });
    ({ key } = await gateway.createAccountWithKey());
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('with allowedBetas: drops the betas it does not list, and query parameters the gateway does not forward', async () => {
    const answer = await postJson(
      `${gateway.url}/v1/messages?beta=true&debug=1`,
      { model: 'claude', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
      { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'context-1m-2025-08-07, interleaved-thinking-2025-05-14' },
    );
    expect(answer.status).toBe(200);
    const sent = upstream.requests.at(-1)!;
    expect(sent.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    expect(sent.query).toEqual({ beta: 'true' });
  });
});
