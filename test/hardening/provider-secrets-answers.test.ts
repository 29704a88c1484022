/**
 * Providers that echo the credential they were sent (the upstream test
 * servers with `echoCredential`) in the content of successful answers: on
 * every route that relays a provider's bytes — JSON passed through whole,
 * JSON rebuilt by a bridge, streams bridged or passed through, text
 * transcripts, binary audio — the client gets the answer with the secret
 * redacted, and never the secret.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogFile } from '../../server/catalog/catalog.schema.js';
import { toneWav } from '../audio/audio-fixtures.js';
import { FAST_UPSTREAM } from '../support/e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer } from '../support/http.js';
import { startAnthropicUpstream } from '../upstreams/anthropic-upstream.js';
import { OPENAI_AUDIO_ROUTES } from '../upstreams/openai-audio-upstream.js';
import { createOpenAIMediaRoutes } from '../upstreams/openai-media-upstream.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import { CREDENTIAL_PLACEHOLDER, type UpstreamAnswer, type UpstreamRouteHandler, type UpstreamServer } from '../upstreams/upstream-server.js';

const OPENAI_SECRET = 'sk-openai-echoed-answer-5f4e3d2c1b0a99';
const ANTHROPIC_SECRET = 'sk-ant-echoed-answer-0a1b2c3d4e5f66';
const LEAK = `key: ${CREDENTIAL_PLACEHOLDER}`;

let openai: UpstreamServer;
let anthropic: UpstreamServer;
let gateway: TestGateway;
let key: string;

/** A media route whose JSON answer also carries the placeholder in `field` (the server turns it into the key). */
function leaking(handler: UpstreamRouteHandler, field: string): UpstreamRouteHandler {
  return (request) => {
    const answer = handler(request);
    return answer.kind === 'json' && answer.status === 200 ? { ...answer, body: { ...(answer.body as object), [field]: LEAK } } : answer;
  };
}

const media = createOpenAIMediaRoutes('echo');
/** "Audio" with the key inside it. */
const leakingSpeech: UpstreamRouteHandler = (): UpstreamAnswer => ({
  kind: 'bytes',
  contentType: 'audio/mpeg',
  body: Buffer.concat([Buffer.alloc(3000, 0xfb), Buffer.from(LEAK), Buffer.alloc(3000, 0xfb)]),
});

function catalog(): CatalogFile {
  return {
    providers: [
      { id: 'openai-echo', kind: 'openai', baseUrl: openai.url, apiKey: 'env:ECHO_OPENAI_KEY' },
      { id: 'anthropic-echo', kind: 'anthropic', baseUrl: anthropic.url, apiKey: 'env:ECHO_ANTHROPIC_KEY' },
    ],
    models: [
      { id: 'gpt-echo', ownedBy: 'e2e', provider: 'openai-echo', upstreamModel: 'gpt-4o-mini', endpoints: ['/v1/chat/completions', '/v1/responses', '/v1/messages'], pricing: { input: 1, output: 1 } },
      { id: 'claude-echo', ownedBy: 'e2e', provider: 'anthropic-echo', upstreamModel: 'claude-sonnet-4-5', endpoints: ['/v1/messages', '/v1/chat/completions', '/v1/responses'], pricing: { input: 1, output: 1 } },
      { id: 'embed-echo', ownedBy: 'e2e', provider: 'openai-echo', upstreamModel: 'text-embedding-3-small', endpoints: ['/v1/embeddings'], pricing: { input: 0.02, output: 0 }, dimensions: 8 },
      { id: 'mod-echo', ownedBy: 'e2e', provider: 'openai-echo', upstreamModel: 'omni-moderation-latest', endpoints: ['/v1/moderations'], pricing: { input: 0, output: 0 } },
      { id: 'image-echo', ownedBy: 'e2e', provider: 'openai-echo', upstreamModel: 'gpt-image-1', endpoints: ['/v1/images/generations'], pricing: { input: 0, output: 0, image: 0.05 } },
      { id: 'whisper-echo', ownedBy: 'e2e', provider: 'openai-echo', upstreamModel: 'whisper-1', endpoints: ['/v1/audio/transcriptions'], pricing: { input: 0, output: 0, second: 0.0001 } },
      { id: 'tts-echo', ownedBy: 'e2e', provider: 'openai-echo', upstreamModel: 'tts-1', endpoints: ['/v1/audio/speech'], pricing: { input: 0, output: 0, character: 0.00002 } },
    ],
  };
}

beforeAll(async () => {
  [openai, anthropic] = await Promise.all([
    startOpenAIUpstream({
      echoCredential: true,
      // Whole deltas: the placeholder is never cut across frames, so the stream carries the key as such.
      streamChunkSize: 1000,
      routes: {
        ...OPENAI_AUDIO_ROUTES,
        'POST /v1/embeddings': leaking(media['POST /v1/embeddings']!, 'model'),
        'POST /v1/moderations': leaking(media['POST /v1/moderations']!, 'id'),
        'POST /v1/images/generations': leaking(media['POST /v1/images/generations']!, 'revised_prompt'),
        'POST /v1/audio/speech': leakingSpeech,
      },
    }),
    startAnthropicUpstream({ echoCredential: true, streamChunkSize: 1000 }),
  ]);
  gateway = await startTestGateway({
    catalog: catalog(),
    env: { ECHO_OPENAI_KEY: OPENAI_SECRET, ECHO_ANTHROPIC_KEY: ANTHROPIC_SECRET },
    config: { upstream: { ...FAST_UPSTREAM, maxRetries: 0 } },
  });
  ({ key } = await gateway.createAccountWithKey({ plan: 'pro', credits: 50 }));
});

afterAll(async () => {
  await gateway?.close();
  await openai?.close();
  await anthropic?.close();
});

async function post(path: string, body: unknown, headers: Record<string, string> = bearer(key)): Promise<{ status: number; text: string }> {
  const answer = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: answer.status, text: await answer.text() };
}

/** The client got an answer carrying the redacted echo, and no secret. */
function expectRedacted(answer: { status: number; text: string }, upstream: UpstreamServer): void {
  expect(answer.status).toBe(200);
  // The provider really did echo it: the gateway is what stood in the way.
  expect(upstream.requests.at(-1)).toBeDefined();
  expect(answer.text).toContain('[redacted]');
  expect(answer.text).not.toContain(OPENAI_SECRET);
  expect(answer.text).not.toContain(ANTHROPIC_SECRET);
}

const ANTHROPIC_HEADERS = () => ({ 'x-api-key': key, 'anthropic-version': '2023-06-01' });

describe('a provider echoing its key in a JSON answer', () => {
  it('chat completions passed through (OpenAI-format provider): the raw JSON is redacted', async () => {
    const answer = await post('/v1/chat/completions', { model: 'gpt-echo', messages: [{ role: 'user', content: LEAK }] });
    expectRedacted(answer, openai);
    expect(JSON.parse(answer.text).choices[0].message.content).toBe('Echo: key: Bearer [redacted]');
  });

  it('chat completions through the official SDK: the content is redacted', async () => {
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'gpt-echo', messages: [{ role: 'user', content: LEAK }] });
    expect(completion.choices[0]!.message.content).toBe('Echo: key: Bearer [redacted]');
  });

  it('messages bridged to an OpenAI-format provider', async () => {
    const answer = await post('/v1/messages', { model: 'gpt-echo', max_tokens: 64, messages: [{ role: 'user', content: LEAK }] }, ANTHROPIC_HEADERS());
    expectRedacted(answer, openai);
    expect(JSON.parse(answer.text).content[0].text).toBe('Echo: key: Bearer [redacted]');
  });

  it('messages passed through to an Anthropic provider, through the official SDK', async () => {
    const client = new Anthropic({ baseURL: gateway.url, apiKey: key, maxRetries: 0 });
    const message = await client.messages.create({ model: 'claude-echo', max_tokens: 64, messages: [{ role: 'user', content: LEAK }] });
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'Echo: key: [redacted]' });
  });

  it('chat completions bridged to an Anthropic provider', async () => {
    const answer = await post('/v1/chat/completions', { model: 'claude-echo', messages: [{ role: 'user', content: LEAK }] });
    expectRedacted(answer, anthropic);
  });

  it('responses passed through (OpenAI-format provider) and bridged (Anthropic)', async () => {
    expectRedacted(await post('/v1/responses', { model: 'gpt-echo', input: LEAK }), openai);
    expectRedacted(await post('/v1/responses', { model: 'claude-echo', input: LEAK }), anthropic);
  });

  it('embeddings passed through', async () => {
    const answer = await post('/v1/embeddings', { model: 'embed-echo', input: 'hello' });
    expectRedacted(answer, openai);
    expect(JSON.parse(answer.text).model).toBe('key: Bearer [redacted]');
  });

  it('moderations passed through', async () => {
    expectRedacted(await post('/v1/moderations', { model: 'mod-echo', input: 'hello' }), openai);
  });

  it('image generation (a field of the provider answer kept in ours)', async () => {
    const answer = await post('/v1/images/generations', { model: 'image-echo', prompt: 'a cat', response_format: 'b64_json' });
    expectRedacted(answer, openai);
  });

  it('transcriptions: verbose JSON passed through and a text transcript', async () => {
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
    // The upstream names the file in its transcript: a file named after the placeholder brings the key back.
    const file = () => toFile(toneWav(1), `${LEAK}.wav`, { type: 'audio/wav' });
    const verbose = await client.audio.transcriptions.create({ model: 'whisper-echo', file: await file(), response_format: 'verbose_json' });
    expect(JSON.stringify(verbose)).toContain('[redacted]');
    expect(JSON.stringify(verbose)).not.toContain(OPENAI_SECRET);
    const text = await client.audio.transcriptions.create({ model: 'whisper-echo', file: await file(), response_format: 'text' });
    expect(text).toContain('[redacted]');
    expect(text).not.toContain(OPENAI_SECRET);
  });
});

describe('a provider echoing its key in a stream or in bytes', () => {
  it('a bridged stream (messages client, OpenAI-format provider): the delta is redacted', async () => {
    const answer = await post('/v1/messages', { model: 'gpt-echo', max_tokens: 64, stream: true, messages: [{ role: 'user', content: LEAK }] }, ANTHROPIC_HEADERS());
    expectRedacted(answer, openai);
    expect(answer.text).toContain('message_stop');
  });

  it('a passed-through Anthropic stream', async () => {
    const answer = await post('/v1/messages', { model: 'claude-echo', max_tokens: 64, stream: true, messages: [{ role: 'user', content: LEAK }] }, ANTHROPIC_HEADERS());
    expectRedacted(answer, anthropic);
  });

  it('speech audio: the key is masked byte for byte, the length kept', async () => {
    const answer = await fetch(`${gateway.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(key) },
      body: JSON.stringify({ model: 'tts-echo', input: 'hello', voice: 'alloy' }),
    });
    expect(answer.status).toBe(200);
    const bytes = Buffer.from(await answer.arrayBuffer());
    const expected = `key: Bearer ${'*'.repeat(OPENAI_SECRET.length)}`;
    expect(bytes.length).toBe(6000 + expected.length);
    expect(bytes.subarray(3000, 3000 + expected.length).toString('latin1')).toBe(expected);
    expect(bytes.includes(OPENAI_SECRET)).toBe(false);
  });
});
