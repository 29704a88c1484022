/**
 * The Bedrock upstream test server itself: it refuses what Bedrock would
 * refuse (no signature, another key, another region, a body that is not the
 * one signed) and answers a signed request in real eventstream frames.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BedrockEventStreamFramer } from '../../server/providers/bedrock/bedrock-stream.js';
import { signBedrockRequest } from '../../server/providers/bedrock/bedrock-signing.js';
import type { ProviderConnection } from '../../server/providers/types.js';
import { BEDROCK_TEST_CREDENTIALS, startBedrockUpstream } from './bedrock-upstream.js';
import type { UpstreamServer } from './upstream-server.js';

let server: UpstreamServer;

beforeAll(async () => {
  server = await startBedrockUpstream({ ...BEDROCK_TEST_CREDENTIALS, region: 'eu-west-3' });
});

afterAll(async () => {
  await server?.close();
});

function connection(overrides: Partial<NonNullable<ProviderConnection['aws']>> = {}): ProviderConnection {
  return { id: 'b', kind: 'bedrock', baseUrl: server.origin, aws: { region: 'eu-west-3', ...BEDROCK_TEST_CREDENTIALS, ...overrides } };
}

const BODY = JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'ping' }] }] });

async function post(operation: 'converse' | 'converse-stream', signedWith: ProviderConnection, sentBody = BODY): Promise<Response> {
  const url = `${server.origin}/model/amazon.nova-micro-v1%3A0/${operation}`;
  const { headers } = await signBedrockRequest(signedWith, url, BODY, 'application/json');
  const { host: _host, ...sent } = headers;
  return fetch(url, { method: 'POST', headers: sent, body: sentBody });
}

describe('the Bedrock upstream test server', () => {
  it('answers a signed Converse request', async () => {
    const response = await post('converse', connection());
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ output: { message: { content: [{ text: 'Echo: ping' }] } }, stopReason: 'end_turn' });
  });

  it('answers a signed ConverseStream request in eventstream frames', async () => {
    const response = await post('converse-stream', connection());
    expect(response.headers.get('content-type')).toBe('application/vnd.amazon.eventstream');
    const messages = new BedrockEventStreamFramer().push(new Uint8Array(await response.arrayBuffer()));
    expect(messages.map((message) => message.type)).toEqual(['messageStart', 'contentBlockDelta', 'contentBlockDelta', 'contentBlockDelta', 'contentBlockStop', 'messageStop', 'metadata']);
  });

  it('refuses what Bedrock refuses', async () => {
    const unsigned = await fetch(`${server.origin}/model/m/converse`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: BODY });
    expect([unsigned.status, unsigned.headers.get('x-amzn-errortype')]).toEqual([403, expect.stringMatching(/^MissingAuthenticationTokenException:/) as unknown]);

    const otherKey = await post('converse', connection({ accessKeyId: 'AKIAOTHERKEY00000000' }));
    expect(otherKey.headers.get('x-amzn-errortype')).toMatch(/^UnrecognizedClientException:/);

    const otherRegion = await post('converse', connection({ region: 'us-east-1' }));
    expect(otherRegion.headers.get('x-amzn-errortype')).toMatch(/^InvalidSignatureException:/);

    const wrongSecret = await post('converse', connection({ secretAccessKey: 'another-secret-key-0123456789' }));
    expect([wrongSecret.status, wrongSecret.headers.get('x-amzn-errortype')]).toEqual([403, expect.stringMatching(/^InvalidSignatureException:/) as unknown]);

    const tampered = await post('converse', connection(), BODY.replace('ping', 'pong'));
    expect(tampered.status).toBe(400);
    expect(await tampered.json()).toEqual({ message: expect.stringContaining('x-amz-content-sha256') as unknown });
  });
});
