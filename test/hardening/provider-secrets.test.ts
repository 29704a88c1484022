/**
 * A provider that echoes its own API key (in an error body, inside a frame of
 * a passed-through stream, in an error-shaped frame its format does not
 * have): the key never reaches a client and never a log line, at any level.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer } from '../support/http.js';

const SECRET = 'sk-provider-echoed-9f8e7d6c5b4a39281706';

let upstream: UpstreamServer;
let gateway: TestGateway;
let key: string;
const logLines: string[] = [];

beforeAll(async () => {
  upstream = await startOpenAIUpstream();
  gateway = await startTestGateway({
    env: { UMG_SECRET_KEY: SECRET },
    logLines,
    config: { upstream: { connectTimeoutMs: 2_000, firstByteTimeoutMs: 5_000, idleTimeoutMs: 5_000, maxRetries: 0, retryBaseDelayMs: 1 } },
    catalog: {
      providers: [{ id: 'echoing', kind: 'openai', baseUrl: upstream.url, apiKey: 'env:UMG_SECRET_KEY' }],
      models: [
        { id: 'gpt-echo', ownedBy: 'e2e', provider: 'echoing', upstreamModel: 'gpt-4o-mini', endpoints: ['/v1/chat/completions', '/v1/responses'], pricing: { input: 1, output: 1 } },
      ],
    },
  });
  ({ key } = await gateway.createAccountWithKey());
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

async function rawStream(path: string, body: unknown): Promise<string> {
  const answer = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { ...bearer(key), 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return answer.text();
}

function chunk(content: string): string {
  return `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
}

describe('a provider echoing its key', () => {
  it('in an error body: the client and the logs see it redacted (a 5xx is logged with its cause)', async () => {
    upstream.script({ kind: 'status', status: 500, message: `internal failure for key ${SECRET}` });
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
    const error = await client.chat.completions.create({ model: 'gpt-echo', messages: [{ role: 'user', content: 'hi' }] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(JSON.stringify(error)).not.toContain(SECRET);
    expect(String((error as Error).message)).not.toContain(SECRET);
  });

  it('inside a frame of a passed-through chat stream: re-framed with it redacted', async () => {
    upstream.script({ kind: 'sse', frames: [chunk('Hello '), chunk(`your key is ${SECRET}`), 'data: [DONE]\n\n'] });
    const text = await rawStream('/v1/chat/completions', { model: 'gpt-echo', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(text).toContain('Hello ');
    expect(text).toContain('[redacted]');
    expect(text).not.toContain(SECRET);
  });

  it('in a data-only error frame of a Responses stream (not its format): replaced by the gateway error', async () => {
    upstream.script({
      kind: 'sse',
      frames: [
        `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response: { id: 'resp_1', object: 'response', status: 'in_progress', output: [] } })}\n\n`,
        `data: ${JSON.stringify({ error: { message: `bad key ${SECRET}`, type: 'server_error' } })}\n\n`,
      ],
    });
    const text = await rawStream('/v1/responses', { model: 'gpt-echo', stream: true, input: 'hi' });
    expect(text).not.toContain(SECRET);
    expect(text).toContain('event: error');
  });

  it('in a response.failed frame inside a chat stream: replaced by the gateway error', async () => {
    upstream.script({
      kind: 'sse',
      frames: [chunk('Hi'), `event: response.failed\ndata: ${JSON.stringify({ type: 'response.failed', response: { error: { message: SECRET } } })}\n\n`],
    });
    const text = await rawStream('/v1/chat/completions', { model: 'gpt-echo', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(text).not.toContain(SECRET);
    expect(text).toContain('"error"');
    expect(text).not.toContain('[DONE]');
  });

  it('never in any log line', () => {
    expect(logLines.length).toBeGreaterThan(0);
    for (const line of logLines) expect(line).not.toContain(SECRET);
  });
});
