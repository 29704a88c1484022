/**
 * A streamed chat completion on Vertex AI (the `gemini` kind with a service
 * account) end to end, through the official `openai` client against a
 * gateway whose catalog points at the local Gemini server: the service
 * account is exchanged for a token at the server's own OAuth endpoint, the
 * request goes to `:streamGenerateContent?alt=sse` on the Vertex path with
 * that token as the bearer, the text arrives in several deltas, and the usage
 * Vertex reported (cached tokens included) is billed exactly.
 * (JSON chat, embeddings and the token's refresh are in gemini-sdk.test.ts.)
 */
import { generateKeyPairSync } from 'node:crypto';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeCost } from '../../server/billing/money.js';
import { toMicroPrice } from '../../server/catalog/catalog.schema.js';
import { FAST_UPSTREAM } from '../support/e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { usageRowOf } from '../support/usage.js';
import { startGeminiUpstream, type GeminiUpstream } from '../upstreams/gemini-upstream.js';
import { estimateTokens } from '../upstreams/upstream-server.js';

const SERVICE_ACCOUNT_EMAIL = 'streamer@test-project.iam.gserviceaccount.com';
const PRICING = { input: 1.25, output: 10, cachedInput: 0.3125 };
const CACHED_TOKENS = 2;
const VERTEX_MODEL_PATH = '/v1/projects/test-project/locations/us-central1/publishers/google/models/gemini-2.5-pro';

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const SERVICE_ACCOUNT_JSON = JSON.stringify({
  type: 'service_account',
  project_id: 'test-project',
  private_key_id: 'key-id-stream-0123456789abcdef',
  private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  client_email: SERVICE_ACCOUNT_EMAIL,
});

let gemini: GeminiUpstream;
let gateway: TestGateway;
let logLines: string[];
let openai: OpenAI;

beforeAll(async () => {
  gemini = await startGeminiUpstream({
    serviceAccount: { email: SERVICE_ACCOUNT_EMAIL, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() },
    cachedTokens: CACHED_TOKENS,
  });
  logLines = [];
  gateway = await startTestGateway({
    catalog: {
      providers: [
        {
          id: 'vertex',
          kind: 'gemini',
          baseUrl: gemini.vertexBaseUrl,
          vertex: { project: 'test-project', location: 'us-central1', credentials: 'env:UMG_VERTEX_SA', tokenUrl: gemini.tokenUrl },
        },
      ],
      models: [{ id: 'gemini-vertex', ownedBy: 'google', provider: 'vertex', upstreamModel: 'gemini-2.5-pro', endpoints: ['/v1/chat/completions'], pricing: PRICING }],
    },
    env: { UMG_VERTEX_SA: SERVICE_ACCOUNT_JSON },
    config: { upstream: FAST_UPSTREAM },
    logLines,
  });
  const { key } = await gateway.createAccountWithKey({ credits: 100 });
  openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await gemini?.close();
});

describe('streamed chat completions on Vertex AI', () => {
  it('streams from :streamGenerateContent?alt=sse on the Vertex path with the exchanged token, billing what Vertex counted', async () => {
    const prompt = 'Stream this from Vertex, please.';
    const before = gemini.requests.length;
    const { data: stream, response } = await openai.chat.completions
      .create({ model: 'gemini-vertex', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: prompt }], stream: true, stream_options: { include_usage: true } })
      .withResponse();
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    const deltas = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').filter(Boolean);
    expect(deltas.join('')).toBe(`Echo: ${prompt}`);
    expect(deltas.length).toBeGreaterThan(1);
    expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe('stop');

    // One exchange of the service account at the token endpoint, then one streamed call bearing its token.
    const requests = gemini.requests.slice(before);
    expect(requests.map((request) => request.path)).toEqual(['/token', `${VERTEX_MODEL_PATH}:streamGenerateContent`]);
    expect(gemini.issuedTokens).toHaveLength(1);
    const [, call] = requests;
    expect(call!.query).toEqual({ alt: 'sse' });
    expect(call!.headers.authorization).toBe(`Bearer ${gemini.issuedTokens[0]}`);
    expect(call!.headers['x-goog-api-key']).toBeUndefined();
    expect(call!.body).toMatchObject({ contents: [{ role: 'user', parts: [{ text: prompt }] }], systemInstruction: { parts: [{ text: 'Be brief.' }] } });

    const usage = chunks.at(-1)!.usage!;
    expect(usage.prompt_tokens).toBe(estimateTokens(`Be brief.${prompt}`));
    expect(usage.completion_tokens).toBe(estimateTokens(`Echo: ${prompt}`));
    expect(usage.prompt_tokens_details?.cached_tokens).toBe(CACHED_TOKENS);
    const row = await usageRowOf(gateway, response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ model: 'gemini-vertex', provider: 'vertex', status: 200, stream: true, error_code: null });
    expect({ input: row.input_tokens, output: row.output_tokens, cached: row.cached_input_tokens }).toEqual({ input: usage.prompt_tokens, output: usage.completion_tokens, cached: CACHED_TOKENS });
    expect(Number(row.cost)).toBe(computeCost(toMicroPrice(PRICING), { inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens, cachedInputTokens: CACHED_TOKENS }));
    // By hand, per million tokens: 11 prompt tokens (41 characters) of which 2 cached, 10 output (38 characters):
    // 9 × 1.25 + 2 × 0.3125 + 10 × 10 = 11.25 + 0.625 + 100 = 111.875 µc, rounded up once (server/billing/money.ts) → 112.
    expect({ prompt: usage.prompt_tokens, output: usage.completion_tokens }).toEqual({ prompt: 11, output: 10 });
    expect(Number(row.cost)).toBe(112);
    expect(logLines.join('\n')).not.toContain(gemini.issuedTokens[0]!);
  });
});
