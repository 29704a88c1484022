import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

let gateway: TestGateway;
let key: string;

beforeAll(async () => {
  gateway = await startTestGateway();
  ({ key } = await gateway.createAccountWithKey());
});

afterAll(async () => {
  await gateway?.close();
});

describe('store on a bridge', () => {
  it('is the gateway’s own field: not reported as dropped, so strict mode accepts store:false', async () => {
    const answer = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-gateway-strict': 'true' },
      body: JSON.stringify({ model: 'mock-chat', input: 'hello', store: false }),
    });
    expect(answer.status, await answer.clone().text()).toBe(200);
    expect(answer.headers.get('x-gateway-dropped-params')).toBeNull();
    const body = (await answer.json()) as { id: string };
    // …and it is honoured: the answer cannot be continued.
    const next = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mock-chat', input: 'again', previous_response_id: body.id }),
    });
    expect(next.status).toBe(400);
    expect(((await next.json()) as { error: { param: string } }).error.param).toBe('previous_response_id');
  });

  it('still reports fields the mock cannot use, and strict mode refuses them', async () => {
    const answer = await fetch(`${gateway.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-gateway-strict': 'true' },
      body: JSON.stringify({ model: 'mock-chat', input: 'hello', tools: [{ type: 'web_search' }] }),
    });
    expect(answer.status).toBe(400);
    expect(((await answer.json()) as { error: { code: string } }).error.code).toBe('UNSUPPORTED_FEATURE');
  });
});
