/**
 * The `azure` provider kind end to end: a gateway whose catalog points at the
 * Azure OpenAI test server (real HTTP, Azure's paths, headers, error bodies
 * and content-filter annotations) in both URL styles — a resource endpoint
 * with an api-version and the `api-key`, the v1 API base with an Entra ID
 * token — called through the official `openai` and `@anthropic-ai/sdk`
 * clients: chat completions and messages, JSON and streams, tools, Responses,
 * embeddings, speech and images; the prompt and output filters; usage billed
 * exactly as Azure counted it; failover from Azure to another kind and to Azure.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeCost } from '../../server/billing/money.js';
import { toMicroPrice } from '../../server/catalog/catalog.schema.js';
import type { ModelEntry } from '../../server/catalog/catalog.schema.js';
import { errorText, failureOf, recordAnswers, startUpstreamWorld, type UpstreamWorld } from '../support/e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { flushAll, usageRowOf } from '../support/usage.js';
import {
  AZURE_BLOCKED_PROMPT,
  AZURE_FILTERED_OUTPUT,
  azureRateLimitStep,
  startAzureUpstream,
  toAzureErrorBody,
  type AzureUpstreamServer,
} from '../upstreams/azure-upstream.js';
import { estimateTokens, type RecordedRequest } from '../upstreams/upstream-server.js';
import { toneWav } from '../audio/audio-fixtures.js';

const AZURE_KEY = '6c1f0e9ab3d24c7e8f5a0b1c2d3e4f50azure';
const ENTRA_TOKEN = 'eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.entra-access-token-for-tests';
const OPENAI_KEY = 'sk-upstream-openai-azure-suite-0123456789';
const ANTHROPIC_KEY = 'sk-ant-upstream-azure-suite-0123456789';
const ENV = { UMG_AZURE_KEY: AZURE_KEY, UMG_AZURE_TOKEN: ENTRA_TOKEN, UMG_OPENAI_KEY: OPENAI_KEY, UMG_ANTHROPIC_KEY: ANTHROPIC_KEY };
const SECRETS = [AZURE_KEY, ENTRA_TOKEN, OPENAI_KEY, ANTHROPIC_KEY];

const API_VERSION = '2025-04-01-preview';
// A fractional input price, so that a hand-computed cost checks the gateway's round-up.
const PRICING = { input: 1.25, output: 2 };
const CHAT_ENDPOINTS: ModelEntry['endpoints'] = ['/v1/chat/completions', '/v1/messages', '/v1/responses'];
const PROMPT = 'Say hello from Azure';

const WEATHER_TOOL = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

function model(id: string, provider: string, upstreamModel: string, extra: Partial<ModelEntry> = {}): ModelEntry {
  return { id, ownedBy: 'e2e', provider, upstreamModel, endpoints: CHAT_ENDPOINTS, pricing: PRICING, ...extra };
}

let azure: AzureUpstreamServer;
let world: UpstreamWorld;
let gateway: TestGateway;
let key: string;
let openai: OpenAI;
let anthropic: Anthropic;
let lastRequestId: () => string;
let lastMessagesRequestId: () => string;
let lastMessagesHeaders: () => Headers;

beforeAll(async () => {
  azure = await startAzureUpstream({ expectedApiKey: AZURE_KEY, expectedEntraToken: ENTRA_TOKEN });
  world = await startUpstreamWorld({
    openai: { expectedApiKey: OPENAI_KEY },
    anthropic: { expectedApiKey: ANTHROPIC_KEY },
    env: ENV,
    catalog: (urls) => ({
      providers: [
        { id: 'azure-east', kind: 'azure', baseUrl: azure.endpoint, apiKey: 'env:UMG_AZURE_KEY', azure: { apiVersion: API_VERSION } },
        { id: 'azure-v1', kind: 'azure', baseUrl: azure.v1Base, azure: { entraToken: 'env:UMG_AZURE_TOKEN' } },
        // The same resource, without retries: one failure and the request moves to the next deployment.
        { id: 'azure-once', kind: 'azure', baseUrl: azure.endpoint, apiKey: 'env:UMG_AZURE_KEY', azure: { apiVersion: '2024-10-21' }, maxRetries: 0 },
        { id: 'openai-up', kind: 'openai', baseUrl: urls.openai, apiKey: 'env:UMG_OPENAI_KEY', maxRetries: 0 },
        { id: 'anthropic-up', kind: 'anthropic', baseUrl: urls.anthropic, apiKey: 'env:UMG_ANTHROPIC_KEY' },
      ],
      models: [
        model('azure-gpt', 'azure-east', 'gpt-4o-prod'),
        model('azure-v1-gpt', 'azure-v1', 'gpt-4o-prod'),
        model('azure-to-claude', 'azure-once', 'gpt-4o-prod', { deployments: [{ provider: 'anthropic-up', upstreamModel: 'claude-sonnet-4-5', priority: 1, weight: 1 }] }),
        model('openai-to-azure', 'openai-up', 'gpt-4o-mini', { deployments: [{ provider: 'azure-v1', upstreamModel: 'gpt-4o-prod', priority: 1, weight: 1 }] }),
        { id: 'azure-embed', ownedBy: 'e2e', provider: 'azure-east', upstreamModel: 'embedding-prod', endpoints: ['/v1/embeddings'], pricing: PRICING, dimensions: 8 },
        { id: 'azure-tts', ownedBy: 'e2e', provider: 'azure-v1', upstreamModel: 'tts-prod', endpoints: ['/v1/audio/speech'], pricing: { input: 0, output: 0, character: 0.00001 } },
        { id: 'azure-whisper', ownedBy: 'e2e', provider: 'azure-east', upstreamModel: 'whisper-prod', endpoints: ['/v1/audio/transcriptions'], pricing: { input: 0, output: 0, second: 0.0001 } },
        model('azure-gone', 'azure-east', 'deleted-deployment'),
        { id: 'azure-image', ownedBy: 'e2e', provider: 'azure-east', upstreamModel: 'image-prod', endpoints: ['/v1/images/generations'], pricing: { input: 0, output: 0, image: 0.04 } },
      ],
    }),
  });
  gateway = world.gateway;
  ({ key } = await gateway.createAccountWithKey({ credits: 100 }));
  const chatRecorder = recordAnswers('x-request-id');
  openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0, fetch: chatRecorder.fetch });
  lastRequestId = () => chatRecorder.lastRequestId();
  const messagesRecorder = recordAnswers('request-id');
  anthropic = new Anthropic({ baseURL: gateway.url, apiKey: key, maxRetries: 0, fetch: messagesRecorder.fetch });
  lastMessagesRequestId = () => messagesRecorder.lastRequestId();
  lastMessagesHeaders = () => messagesRecorder.lastHeaders();
});

afterAll(async () => {
  await world?.close();
  await azure?.close();
});

/** What Azure received during a call. */
async function azureRequestsDuring<T>(call: () => Promise<T>): Promise<{ result: T; requests: RecordedRequest[] }> {
  const before = azure.requests.length;
  const result = await call();
  return { result, requests: azure.requests.slice(before) };
}

/** The usage row of a request: Azure's token counts, and their exact cost at the model's price. */
async function expectBilled(requestId: string, expected: { model: string; provider: string; inputTokens: number; outputTokens: number }): Promise<void> {
  await flushAll(gateway);
  const row = await usageRowOf(gateway, requestId);
  expect(row).toMatchObject({ model: expected.model, provider: expected.provider, status: 200, input_tokens: expected.inputTokens, output_tokens: expected.outputTokens });
  expect(Number(row.cost)).toBe(computeCost(toMicroPrice(PRICING), { inputTokens: expected.inputTokens, outputTokens: expected.outputTokens }));
  expect(Number(row.cost)).toBeGreaterThan(0);
}

describe('chat completions on an Azure deployment (resource endpoint, api-key)', () => {
  it('answers JSON from the deployment URL with the api-version and the api-key, billing what Azure counted', async () => {
    const { result, requests } = await azureRequestsDuring(() => openai.chat.completions.create({ model: 'azure-gpt', messages: [{ role: 'user', content: PROMPT }] }));
    expect(result.choices[0]?.message.content).toBe(`Echo: ${PROMPT}`);
    expect(result.choices[0]?.finish_reason).toBe('stop');
    expect(requests).toHaveLength(1);
    const [sent] = requests;
    expect(sent).toMatchObject({ path: '/openai/deployments/gpt-4o-prod/chat/completions', query: { 'api-version': API_VERSION } });
    expect(sent!.headers['api-key']).toBe(AZURE_KEY);
    expect(sent!.headers.authorization).toBeUndefined();
    await expectBilled(lastRequestId(), { model: 'azure-gpt', provider: 'azure-east', inputTokens: result.usage!.prompt_tokens, outputTokens: result.usage!.completion_tokens });
    // By hand, per million tokens: 5 input (PROMPT, 20 characters) at 1.25, 7 output ('Echo: ' + PROMPT, 26 characters) at 2:
    // 5 × 1.25 + 7 × 2 = 6.25 + 14 = 20.25 µc, rounded up once (server/billing/money.ts) → 21.
    expect({ input: result.usage!.prompt_tokens, output: result.usage!.completion_tokens }).toEqual({ input: 5, output: 7 });
    expect(Number((await usageRowOf(gateway, lastRequestId())).cost)).toBe(21);
  });

  it('streams, skipping nothing of the text, with usage billed exactly', async () => {
    const stream = await openai.chat.completions.create({ model: 'azure-gpt', messages: [{ role: 'user', content: PROMPT }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(`Echo: ${PROMPT}`);
    expect(finish).toBe('stop');
    expect(usage?.prompt_tokens).toBeGreaterThan(0);
    await expectBilled(lastRequestId(), { model: 'azure-gpt', provider: 'azure-east', inputTokens: usage!.prompt_tokens, outputTokens: usage!.completion_tokens });
  });

  it('calls tools, JSON and streamed', async () => {
    const body = { model: 'azure-gpt', messages: [{ role: 'user' as const, content: 'Weather in Wien?' }], tools: [WEATHER_TOOL], tool_choice: 'required' as const };
    const answer = await openai.chat.completions.create(body);
    expect(answer.choices[0]?.finish_reason).toBe('tool_calls');
    expect(answer.choices[0]?.message.tool_calls?.[0]).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ input: 'Weather in Wien?' }) } });
    const streamed = await openai.chat.completions.stream(body).finalChatCompletion();
    expect(streamed.choices[0]?.message.tool_calls?.[0]?.function).toEqual({ name: 'get_weather', arguments: JSON.stringify({ input: 'Weather in Wien?' }) });
  });
});

describe('the v1 API base with an Entra ID token', () => {
  it('sends OpenAI paths with the deployment as the model and the token as the bearer, no api-key', async () => {
    const { result, requests } = await azureRequestsDuring(() => openai.chat.completions.create({ model: 'azure-v1-gpt', messages: [{ role: 'user', content: PROMPT }] }));
    expect(result.choices[0]?.message.content).toBe(`Echo: ${PROMPT}`);
    const [sent] = requests;
    expect(sent).toMatchObject({ path: '/openai/v1/chat/completions', query: {}, body: { model: 'gpt-4o-prod' } });
    expect(sent!.headers.authorization).toBe(`Bearer ${ENTRA_TOKEN}`);
    expect(sent!.headers['api-key']).toBeUndefined();
  });

  it('passes Responses through to Azure, JSON and streamed', async () => {
    const { result, requests } = await azureRequestsDuring(() => openai.responses.create({ model: 'azure-v1-gpt', input: PROMPT }));
    expect(result.output_text).toBe(`Echo: ${PROMPT}`);
    expect(requests[0]).toMatchObject({ path: '/openai/v1/responses', body: { model: 'gpt-4o-prod', input: PROMPT } });
    const stream = await openai.responses.create({ model: 'azure-gpt', input: PROMPT, stream: true });
    let completed: OpenAI.Responses.Response | undefined;
    for await (const event of stream) if (event.type === 'response.completed') completed = event.response;
    const texts = completed?.output.flatMap((item) => (item.type === 'message' ? item.content : [])).map((part) => (part.type === 'output_text' ? part.text : ''));
    expect(texts).toEqual([`Echo: ${PROMPT}`]);
    expect(azure.requests.at(-1)).toMatchObject({ path: '/openai/responses', query: { 'api-version': API_VERSION }, body: { model: 'gpt-4o-prod' } });
    await expectBilled(lastRequestId(), { model: 'azure-gpt', provider: 'azure-east', inputTokens: completed!.usage!.input_tokens, outputTokens: completed!.usage!.output_tokens });
  });
});

describe('messages over Azure (bridged)', () => {
  it('answers JSON and streams through the Anthropic client, billing what Azure counted', async () => {
    const { result, requests } = await azureRequestsDuring(() =>
      anthropic.messages.create({ model: 'azure-gpt', max_tokens: 200, system: 'Be brief.', messages: [{ role: 'user', content: PROMPT }] }),
    );
    expect(result.content).toEqual([expect.objectContaining({ type: 'text', text: `Echo: ${PROMPT}` })]);
    expect(result.stop_reason).toBe('end_turn');
    expect(requests[0]).toMatchObject({ path: '/openai/deployments/gpt-4o-prod/chat/completions', body: { messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: PROMPT }] } });
    await expectBilled(lastMessagesRequestId(), { model: 'azure-gpt', provider: 'azure-east', inputTokens: result.usage.input_tokens, outputTokens: result.usage.output_tokens });

    const final = await anthropic.messages.stream({ model: 'azure-v1-gpt', max_tokens: 200, messages: [{ role: 'user', content: PROMPT }] }).finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: `Echo: ${PROMPT}` });
    expect(final.usage.input_tokens).toBeGreaterThan(0);
    await expectBilled(lastMessagesRequestId(), { model: 'azure-v1-gpt', provider: 'azure-v1', inputTokens: final.usage.input_tokens, outputTokens: final.usage.output_tokens });
  });

  it('calls a tool', async () => {
    const tools = [{ name: 'get_weather', description: 'Weather in a city', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } }];
    const answer = await anthropic.messages.create({ model: 'azure-gpt', max_tokens: 200, tools, tool_choice: { type: 'tool', name: 'get_weather' }, messages: [{ role: 'user', content: 'Weather?' }] });
    expect(answer.stop_reason).toBe('tool_use');
    expect(answer.content.find((block) => block.type === 'tool_use')).toMatchObject({ name: 'get_weather', input: { input: 'Weather?' } });
    const streamed = await anthropic.messages.stream({ model: 'azure-gpt', max_tokens: 200, tools, tool_choice: { type: 'tool', name: 'get_weather' }, messages: [{ role: 'user', content: 'Weather?' }] }).finalMessage();
    expect(streamed.content.find((block) => block.type === 'tool_use')).toMatchObject({ name: 'get_weather', input: { input: 'Weather?' } });
  });
});

describe('fidelity and strict mode on the bridge to Azure', () => {
  it('names what the bridge dropped, and refuses it in strict mode', async () => {
    const body = { model: 'azure-gpt', max_tokens: 50, top_k: 5, messages: [{ role: 'user' as const, content: PROMPT }] };
    const answer = await anthropic.messages.create(body);
    expect(answer.content[0]).toMatchObject({ type: 'text', text: `Echo: ${PROMPT}` });
    expect(lastMessagesHeaders().get('x-gateway-dropped-params')).toBe('top_k');
    const { result: refused, requests } = await azureRequestsDuring(() => failureOf(anthropic.messages.create(body, { headers: { 'x-gateway-strict': 'true' } })));
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect(errorText(refused)).toContain('top_k');
    expect(requests).toEqual([]);
  });
});

describe("Azure's content filter", () => {
  it('refuses a filtered prompt with 400 CONTENT_FILTERED in both shapes, charging nothing', async () => {
    const chat = (await failureOf(openai.chat.completions.create({ model: 'azure-gpt', messages: [{ role: 'user', content: `Tell me ${AZURE_BLOCKED_PROMPT}` }] }))) as InstanceType<typeof OpenAI.APIError>;
    expect(chat).toBeInstanceOf(OpenAI.BadRequestError);
    expect(chat.code).toBe('CONTENT_FILTERED');
    expect(chat.param).toBe('prompt');
    expect(chat.message).toMatch(/^400 The provider's content filter refused the prompt \(violence: high, jailbreak\)\. The response was filtered/);
    await flushAll(gateway);
    const row = await usageRowOf(gateway, chat.requestID!);
    expect(row).toMatchObject({ status: 400, error_code: 'CONTENT_FILTERED' });
    expect(Number(row.cost)).toBe(0);

    const messages = await failureOf(anthropic.messages.create({ model: 'azure-gpt', max_tokens: 50, messages: [{ role: 'user', content: AZURE_BLOCKED_PROMPT }] }));
    expect(messages).toBeInstanceOf(Anthropic.BadRequestError);
    expect(errorText(messages)).toContain('content filter refused the prompt');
    // A policy verdict is not a provider failure: no retry, no other deployment.
    const { requests } = await azureRequestsDuring(() => failureOf(openai.chat.completions.create({ model: 'azure-to-claude', messages: [{ role: 'user', content: AZURE_BLOCKED_PROMPT }] })));
    expect(requests).toHaveLength(1);
    expect(world.anthropicUpstream.requests.filter((request) => JSON.stringify(request.body).includes(AZURE_BLOCKED_PROMPT))).toEqual([]);
  });

  it('ends a filtered completion with finish_reason content_filter (JSON, stream) and stop_reason refusal (messages)', async () => {
    const prompt = `Write ${AZURE_FILTERED_OUTPUT} now`;
    const answer = await openai.chat.completions.create({ model: 'azure-gpt', messages: [{ role: 'user', content: prompt }] });
    expect(answer.choices[0]).toMatchObject({ finish_reason: 'content_filter', message: { content: 'Echo: Write ' } });
    await expectBilled(lastRequestId(), { model: 'azure-gpt', provider: 'azure-east', inputTokens: answer.usage!.prompt_tokens, outputTokens: answer.usage!.completion_tokens });

    const stream = await openai.chat.completions.create({ model: 'azure-gpt', messages: [{ role: 'user', content: prompt }], stream: true });
    const finishes: Array<string | null | undefined> = [];
    for await (const chunk of stream) finishes.push(chunk.choices[0]?.finish_reason);
    expect(finishes.filter(Boolean)).toEqual(['content_filter']);

    const message = await anthropic.messages.create({ model: 'azure-gpt', max_tokens: 100, messages: [{ role: 'user', content: prompt }] });
    expect(message.stop_reason).toBe('refusal');
    const streamed = await anthropic.messages.stream({ model: 'azure-gpt', max_tokens: 100, messages: [{ role: 'user', content: prompt }] }).finalMessage();
    expect(streamed.stop_reason).toBe('refusal');
  });
});

describe('other operations of a deployment', () => {
  it('embeds at the deployment URL, billing the tokens Azure counted', async () => {
    const input = 'Azure embeds this sentence.';
    const { result, requests } = await azureRequestsDuring(() => openai.embeddings.create({ model: 'azure-embed', input, encoding_format: 'float' }));
    expect(result.data).toHaveLength(1);
    expect(result.data[0]?.embedding).toHaveLength(8);
    expect(result.usage.prompt_tokens).toBe(estimateTokens(input));
    expect(requests[0]).toMatchObject({ path: '/openai/deployments/embedding-prod/embeddings', query: { 'api-version': API_VERSION }, body: { model: 'embedding-prod', input } });
    expect(requests[0]!.headers['api-key']).toBe(AZURE_KEY);
    await flushAll(gateway);
    const row = await usageRowOf(gateway, lastRequestId());
    expect(row).toMatchObject({ endpoint: '/v1/embeddings', provider: 'azure-east', status: 200, input_tokens: estimateTokens(input) });
    expect(Number(row.cost)).toBe(computeCost(toMicroPrice(PRICING), { inputTokens: estimateTokens(input), outputTokens: 0 }));
  });

  it('synthesizes speech on the v1 base and generates an image at the deployment URL', async () => {
    const { result: speech, requests: speechRequests } = await azureRequestsDuring(async () => {
      const response = await openai.audio.speech.create({ model: 'azure-tts', voice: 'alloy', input: 'Hallo aus Azure', response_format: 'mp3' });
      return Buffer.from(await response.arrayBuffer());
    });
    expect(speech.length).toBeGreaterThan(0);
    expect(speechRequests[0]).toMatchObject({ path: '/openai/v1/audio/speech', body: { model: 'tts-prod', input: 'Hallo aus Azure' } });
    expect(speechRequests[0]!.headers.authorization).toBe(`Bearer ${ENTRA_TOKEN}`);

    const { result: image, requests: imageRequests } = await azureRequestsDuring(() => openai.images.generate({ model: 'azure-image', prompt: 'a lighthouse', size: '1024x1024', response_format: 'b64_json' }));
    expect(image.data?.[0]?.b64_json).toMatch(/^iVBOR/);
    expect(imageRequests[0]).toMatchObject({ path: '/openai/deployments/image-prod/images/generations', query: { 'api-version': API_VERSION } });
    const refused = (await failureOf(openai.images.generate({ model: 'azure-image', prompt: `a ${AZURE_BLOCKED_PROMPT}`, size: '1024x1024' }))) as InstanceType<typeof OpenAI.APIError>;
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect(refused.code).toBe('CONTENT_FILTERED');
  });
});

describe('transcription and Azure errors', () => {
  it('uploads a transcription to the deployment as multipart with the api-key', async () => {
    const audio = toneWav(1);
    const { result, requests } = await azureRequestsDuring(async () => openai.audio.transcriptions.create({ model: 'azure-whisper', file: await toFile(audio, 'clip.wav') }));
    expect(result.text).toBe(`Upstream transcribe of clip.wav. It had ${audio.length} bytes.`);
    expect(requests[0]).toMatchObject({ path: '/openai/deployments/whisper-prod/audio/transcriptions', query: { 'api-version': API_VERSION } });
    expect(requests[0]!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(requests[0]!.headers['api-key']).toBe(AZURE_KEY);
  });

  it("relays Azure's unknown deployment as a 404 with its message", async () => {
    const error = (await failureOf(openai.chat.completions.create({ model: 'azure-gone', messages: [{ role: 'user', content: PROMPT }] }))) as InstanceType<typeof OpenAI.APIError>;
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error.message).toContain('The API deployment for this resource does not exist');
  });

  it('the test server answers as Azure does to a missing api-version, an unknown one and a wrong key', async () => {
    const post = async (path: string, headers: Record<string, string>) => {
      const response = await fetch(`${azure.endpoint}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }) });
      return { status: response.status, body: (await response.json()) as unknown };
    };
    const chat = '/openai/deployments/gpt-4o-prod/chat/completions';
    expect(await post(chat, { 'api-key': AZURE_KEY })).toEqual({ status: 404, body: { error: { code: '404', message: 'Resource not found' } } });
    expect(await post(`${chat}?api-version=1999-01-01`, { 'api-key': AZURE_KEY })).toEqual({ status: 400, body: { error: { code: 'BadRequest', message: 'API version not supported' } } });
    expect(await post(`${chat}?api-version=${API_VERSION}`, { authorization: `Bearer ${AZURE_KEY}` })).toMatchObject({ status: 401, body: { error: { code: '401' } } });
    expect(await post(`${chat}?api-version=${API_VERSION}`, { 'api-key': AZURE_KEY })).toMatchObject({ status: 200, body: { prompt_filter_results: [{ prompt_index: 0 }] } });
  });
});

describe('failover across kinds', () => {
  it('moves a request Azure rate limits (429, retry-after) to the Anthropic deployment, billed there', async () => {
    azure.script(azureRateLimitStep(6));
    const { result: answer, requests } = await azureRequestsDuring(() => openai.chat.completions.create({ model: 'azure-to-claude', messages: [{ role: 'user', content: PROMPT }] }));
    expect(answer.choices[0]?.message.content).toBe(`Echo: ${PROMPT}`);
    expect(requests.map((request) => request.query['api-version'])).toEqual(['2024-10-21']);
    expect(azure.pendingSteps).toBe(0);
    await expectBilled(lastRequestId(), { model: 'azure-to-claude', provider: 'anthropic-up', inputTokens: answer.usage!.prompt_tokens, outputTokens: answer.usage!.completion_tokens });
  });

  it('moves a streamed messages request Azure fails (500) to the Anthropic deployment', async () => {
    azure.script({ kind: 'status', status: 500, body: toAzureErrorBody(500, { code: 'InternalServerError', message: 'The server had an error while processing your request.' }) });
    const final = await anthropic.messages.stream({ model: 'azure-to-claude', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] }).finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: `Echo: ${PROMPT}` });
    expect(azure.pendingSteps).toBe(0);
    await expectBilled(lastMessagesRequestId(), { model: 'azure-to-claude', provider: 'anthropic-up', inputTokens: final.usage.input_tokens, outputTokens: final.usage.output_tokens });
  });

  it('serves from Azure when the OpenAI primary fails', async () => {
    world.openaiUpstream.script({ kind: 'status', status: 503 });
    const { result, requests } = await azureRequestsDuring(() => openai.chat.completions.create({ model: 'openai-to-azure', messages: [{ role: 'user', content: PROMPT }] }));
    expect(result.choices[0]?.message.content).toBe(`Echo: ${PROMPT}`);
    expect(requests[0]).toMatchObject({ path: '/openai/v1/chat/completions', body: { model: 'gpt-4o-prod' } });
    await expectBilled(lastRequestId(), { model: 'openai-to-azure', provider: 'azure-v1', inputTokens: result.usage!.prompt_tokens, outputTokens: result.usage!.completion_tokens });
  });
});

describe('secrets', () => {
  it('never shows a client the key or the token Azure echoes in an error', async () => {
    for (const [modelId, secret] of [['azure-gpt', AZURE_KEY], ['azure-v1-gpt', ENTRA_TOKEN]] as const) {
      azure.script({ kind: 'status', status: 400, body: toAzureErrorBody(400, { code: 'BadRequest', message: `Rejected credential ${secret} for this deployment` }) });
      const error = await failureOf(openai.chat.completions.create({ model: modelId, messages: [{ role: 'user', content: PROMPT }] }));
      const text = errorText(error);
      expect(text).toContain('Rejected credential');
      for (const each of SECRETS) expect(text).not.toContain(each);
    }
  });

  it('never writes the key or the token to the log, whatever Azure echoes', async () => {
    const logLines: string[] = [];
    const logged = await startTestGateway({
      env: ENV,
      logLines,
      catalog: {
        providers: [
          { id: 'azure-east', kind: 'azure', baseUrl: azure.endpoint, apiKey: 'env:UMG_AZURE_KEY', azure: { apiVersion: API_VERSION }, maxRetries: 0 },
          { id: 'azure-v1', kind: 'azure', baseUrl: azure.v1Base, azure: { entraToken: 'env:UMG_AZURE_TOKEN' }, maxRetries: 0 },
        ],
        models: [model('by-key', 'azure-east', 'gpt-4o-prod'), model('by-token', 'azure-v1', 'gpt-4o-prod')],
      },
    });
    try {
      const { key: loggedKey } = await logged.createAccountWithKey();
      const client = new OpenAI({ baseURL: `${logged.url}/v1`, apiKey: loggedKey, maxRetries: 0 });
      for (const [modelId, secret] of [['by-key', AZURE_KEY], ['by-token', ENTRA_TOKEN]] as const) {
        expect((await client.chat.completions.create({ model: modelId, messages: [{ role: 'user', content: PROMPT }] })).choices[0]?.message.content).toBe(`Echo: ${PROMPT}`);
        azure.script({ kind: 'status', status: 500, body: toAzureErrorBody(500, { message: `Backend failed for ${secret}` }) });
        await failureOf(client.chat.completions.create({ model: modelId, messages: [{ role: 'user', content: PROMPT }] }));
      }
      await flushAll(logged);
      expect(logLines.join('\n')).toContain('Backend failed for [redacted]');
      for (const each of SECRETS) expect(logLines.join('\n')).not.toContain(each);
    } finally {
      await logged.close();
    }
  });
});
