/**
 * The `gemini` provider kind end to end: a gateway whose catalog points at a
 * local Gemini server (real HTTP, Google's wire format, its own OAuth token
 * endpoint for Vertex AI) and at an OpenAI-format server, called through the
 * official `openai` and `@anthropic-ai/sdk` clients. Chat completions,
 * messages and responses, JSON and stream, tools, JSON mode, thinking,
 * count_tokens, embeddings, usage billed exactly (cached tokens included),
 * failover to the OpenAI-format deployment on 429 and 5xx, 400 relayed, the
 * fidelity header and strict mode, and Vertex's token exchange and refresh.
 */
import { generateKeyPairSync } from 'node:crypto';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeCost } from '../../server/billing/money.js';
import { toMicroPrice } from '../../server/catalog/catalog.schema.js';
import type { CatalogFile } from '../../server/catalog/catalog.schema.js';
import { FAST_UPSTREAM, failureOf, recordAnswers, type AnswerRecorder } from '../support/e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { usageRowOf } from '../support/usage.js';
import { startGeminiUpstream, type GeminiUpstream, type GeminiUpstreamOptions } from '../upstreams/gemini-upstream.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import type { RecordedRequest, UpstreamServer } from '../upstreams/upstream-server.js';

const GEMINI_KEY = 'AIzaSyTest-gemini-key-0123456789abcdef';
const OPENAI_KEY = 'sk-upstream-openai-for-gemini-failover-0123';
const SERVICE_ACCOUNT_EMAIL = 'gateway@test-project.iam.gserviceaccount.com';
const PRICING = { input: 1.25, output: 10, cachedInput: 0.3125 };
const CACHED_TOKENS = 2;

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const UNKNOWN_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
const UNKNOWN_SERVICE_ACCOUNT_JSON = JSON.stringify({ type: 'service_account', private_key: UNKNOWN_KEY, client_email: SERVICE_ACCOUNT_EMAIL });
const SERVICE_ACCOUNT_JSON = JSON.stringify({
  type: 'service_account',
  project_id: 'test-project',
  private_key_id: 'key-id-0123456789abcdef0123456789',
  private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  client_email: SERVICE_ACCOUNT_EMAIL,
});

function catalogOf(gemini: GeminiUpstream, openai: UpstreamServer, leaky: GeminiUpstream): CatalogFile {
  const chatEndpoints = ['/v1/chat/completions', '/v1/messages', '/v1/responses', '/v1/messages/count_tokens'] as const;
  return {
    providers: [
      // No retries: one scripted fault is one failed attempt, then failover.
      { id: 'google', kind: 'gemini', baseUrl: gemini.geminiBaseUrl, apiKey: 'env:UMG_GEMINI_KEY', maxRetries: 0 },
      {
        id: 'vertex',
        kind: 'gemini',
        baseUrl: gemini.vertexBaseUrl,
        vertex: { project: 'test-project', location: 'us-central1', credentials: 'env:UMG_VERTEX_SA', tokenUrl: gemini.tokenUrl },
      },
      // Tokens that live 60 s: inside the 5-minute refresh margin, so each call gets a new one.
      {
        id: 'vertex-short',
        kind: 'gemini',
        baseUrl: gemini.vertexBaseUrl,
        vertex: { project: 'test-project', location: 'europe-west4', credentials: 'env:UMG_VERTEX_SA', tokenUrl: `${gemini.tokenUrl}?lifetime=60` },
      },
      { id: 'openai-backup', kind: 'openai', baseUrl: openai.url, apiKey: 'env:UMG_OPENAI_KEY' },
      // A service account the token endpoint does not know (its assertion's signature fails).
      {
        id: 'vertex-unknown-key',
        kind: 'gemini',
        baseUrl: gemini.vertexBaseUrl,
        vertex: { project: 'test-project', location: 'us-east1', credentials: 'env:UMG_VERTEX_UNKNOWN', tokenUrl: gemini.tokenUrl },
      },
      // A provider that echoes the credential it was sent.
      { id: 'leaky-google', kind: 'gemini', baseUrl: leaky.geminiBaseUrl, apiKey: 'env:UMG_GEMINI_KEY', maxRetries: 0 },
      {
        id: 'leaky-vertex',
        kind: 'gemini',
        baseUrl: leaky.vertexBaseUrl,
        maxRetries: 0,
        vertex: { project: 'test-project', location: 'us-central1', credentials: 'env:UMG_VERTEX_SA', tokenUrl: leaky.tokenUrl },
      },
    ],
    models: [
      {
        id: 'gemini-flash',
        ownedBy: 'google',
        provider: 'google',
        upstreamModel: 'gemini-2.5-flash',
        endpoints: [...chatEndpoints],
        pricing: PRICING,
        deployments: [{ provider: 'openai-backup', upstreamModel: 'gpt-4o-mini', priority: 1, weight: 1 }],
      },
      // The other way round: an OpenAI-format primary, the Gemini API its backup.
      {
        id: 'openai-to-gemini',
        ownedBy: 'google',
        provider: 'openai-backup',
        upstreamModel: 'gpt-4o-mini',
        endpoints: ['/v1/chat/completions'],
        pricing: PRICING,
        deployments: [{ provider: 'google', upstreamModel: 'gemini-2.5-flash', priority: 1, weight: 1 }],
      },
      { id: 'gemini-vertex', ownedBy: 'google', provider: 'vertex', upstreamModel: 'gemini-2.5-pro', endpoints: [...chatEndpoints], pricing: PRICING },
      { id: 'gemini-vertex-short', ownedBy: 'google', provider: 'vertex-short', upstreamModel: 'gemini-2.5-pro', endpoints: ['/v1/chat/completions'], pricing: PRICING },
      {
        id: 'vertex-refused',
        ownedBy: 'google',
        provider: 'vertex-unknown-key',
        upstreamModel: 'gemini-2.5-pro',
        endpoints: ['/v1/chat/completions'],
        pricing: PRICING,
        deployments: [{ provider: 'openai-backup', upstreamModel: 'gpt-4o-mini', priority: 1, weight: 1 }],
      },
      { id: 'leaky-gemini', ownedBy: 'google', provider: 'leaky-google', upstreamModel: 'gemini-2.5-flash', endpoints: ['/v1/chat/completions'], pricing: PRICING },
      { id: 'leaky-vertex', ownedBy: 'google', provider: 'leaky-vertex', upstreamModel: 'gemini-2.5-flash', endpoints: ['/v1/chat/completions'], pricing: PRICING },
      { id: 'gemini-embed', ownedBy: 'google', provider: 'google', upstreamModel: 'gemini-embedding-001', endpoints: ['/v1/embeddings'], pricing: { input: 0.15, output: 0 }, dimensions: 8, dimensionsAdjustable: true },
      { id: 'vertex-embed', ownedBy: 'google', provider: 'vertex', upstreamModel: 'text-embedding-005', endpoints: ['/v1/embeddings'], pricing: { input: 0.15, output: 0 }, dimensions: 8, dimensionsAdjustable: true },
    ],
  };
}

const geminiOptions: GeminiUpstreamOptions = {
  expectedApiKey: GEMINI_KEY,
  serviceAccount: { email: SERVICE_ACCOUNT_EMAIL, publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() },
  cachedTokens: CACHED_TOKENS,
};
let gemini: GeminiUpstream;
let leaky: GeminiUpstream;
let openaiUpstream: UpstreamServer;
let gateway: TestGateway;
let logLines: string[];
let openai: OpenAI;
let openaiAnswers: AnswerRecorder;
let anthropic: Anthropic;
let anthropicAnswers: AnswerRecorder;

beforeAll(async () => {
  gemini = await startGeminiUpstream(geminiOptions);
  openaiUpstream = await startOpenAIUpstream();
  // One piece per stream, so that the placeholder is not cut across frames.
  leaky = await startGeminiUpstream({ ...geminiOptions, expectedApiKey: undefined, echoCredential: true, streamChunkSize: 1000 });
  logLines = [];
  gateway = await startTestGateway({
    catalog: catalogOf(gemini, openaiUpstream, leaky),
    env: { UMG_GEMINI_KEY: GEMINI_KEY, UMG_OPENAI_KEY: OPENAI_KEY, UMG_VERTEX_SA: SERVICE_ACCOUNT_JSON, UMG_VERTEX_UNKNOWN: UNKNOWN_SERVICE_ACCOUNT_JSON, PROVIDER_COOLDOWN_FAILURES: '1000' },
    config: { upstream: FAST_UPSTREAM },
    logLines,
  });
  const { key } = await gateway.createAccountWithKey({ credits: 100 });
  openaiAnswers = recordAnswers('x-request-id');
  openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0, fetch: openaiAnswers.fetch });
  anthropicAnswers = recordAnswers('request-id');
  anthropic = new Anthropic({ baseURL: gateway.url, apiKey: key, maxRetries: 0, fetch: anthropicAnswers.fetch });
});

afterAll(async () => {
  await gateway?.close();
  await gemini?.close();
  await openaiUpstream?.close();
  await leaky?.close();
});

/** The requests a server received while `call` ran. */
async function during<T>(server: UpstreamServer, call: () => Promise<T>): Promise<{ result: T; requests: RecordedRequest[] }> {
  const before = server.requests.length;
  const result = await call();
  return { result, requests: server.requests.slice(before) };
}

/** The usage row of the latest answer, with its cost checked against the catalog price. */
async function expectBilled(recorder: AnswerRecorder, tokens: { input: number; output: number; cached: number }, provider = 'google'): Promise<void> {
  const row = await usageRowOf(gateway, recorder.lastRequestId());
  expect({ input: row.input_tokens, output: row.output_tokens, cached: row.cached_input_tokens, provider: row.provider }).toEqual({ ...tokens, provider });
  expect(Number(row.cost)).toBe(computeCost(toMicroPrice(PRICING), { inputTokens: tokens.input, outputTokens: tokens.output, cachedInputTokens: tokens.cached }));
}

describe('chat completions on the Gemini API', () => {
  it('answers JSON: system instruction, multi-turn contents, the key in x-goog-api-key, usage with cached tokens billed exactly', async () => {
    const { result, requests } = await during(gemini, () =>
      openai.chat.completions.create({
        model: 'gemini-flash',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hello' },
          { role: 'assistant', content: 'Hi!' },
          { role: 'user', content: 'What is two plus two?' },
        ],
        max_completion_tokens: 200,
        temperature: 0.2,
      }),
    );
    expect(result.choices[0]!.message.content).toBe('Echo: What is two plus two?');
    expect(result.choices[0]!.finish_reason).toBe('stop');
    expect(requests).toHaveLength(1);
    const upstream = requests[0]!;
    expect(upstream.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(upstream.headers['x-goog-api-key']).toBe(GEMINI_KEY);
    expect(upstream.body).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Hello' }] },
        { role: 'model', parts: [{ text: 'Hi!' }] },
        { role: 'user', parts: [{ text: 'What is two plus two?' }] },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      generationConfig: { maxOutputTokens: 200, temperature: 0.2 },
    });
    const usage = result.usage!;
    // The fake counts every string of the prompt, 4 characters a token.
    expect(usage.prompt_tokens).toBe(Math.ceil('Be brief.HelloHi!What is two plus two?'.length / 4));
    expect(usage.prompt_tokens_details?.cached_tokens).toBe(CACHED_TOKENS);
    expect(usage.completion_tokens).toBe(Math.ceil('Echo: What is two plus two?'.length / 4));
    await expectBilled(openaiAnswers, { input: usage.prompt_tokens, output: usage.completion_tokens, cached: CACHED_TOKENS });
    // By hand, per million tokens: 10 prompt tokens (38 characters) of which 2 cached, 7 output (27 characters):
    // 8 × 1.25 + 2 × 0.3125 + 7 × 10 = 10 + 0.625 + 70 = 80.625 µc, rounded up once (server/billing/money.ts) → 81.
    expect({ prompt: usage.prompt_tokens, output: usage.completion_tokens }).toEqual({ prompt: 10, output: 7 });
    expect(Number((await usageRowOf(gateway, openaiAnswers.lastRequestId())).cost)).toBe(81);
  });

  it('streams from streamGenerateContent?alt=sse, with the usage chunk and the same bill', async () => {
    const { result: chunks, requests } = await during(gemini, async () => {
      const stream = await openai.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'Stream this sentence, please.' }], stream: true, stream_options: { include_usage: true } });
      const collected = [];
      for await (const chunk of stream) collected.push(chunk);
      return collected;
    });
    expect(requests[0]!.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent');
    expect(requests[0]!.query.alt).toBe('sse');
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('Echo: Stream this sentence, please.');
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta.content).length).toBeGreaterThan(1);
    expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe('stop');
    const usage = chunks.at(-1)!.usage!;
    expect(usage.completion_tokens).toBe(Math.ceil(text.length / 4));
    await expectBilled(openaiAnswers, { input: usage.prompt_tokens, output: usage.completion_tokens, cached: CACHED_TOKENS });
  });

  it('calls tools (functionDeclarations, functionCall) and sends the result back as functionResponse with the function name', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } } },
    ];
    const first = await openai.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'Weather in Paris?' }], tools, tool_choice: 'required' });
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(first.choices[0]!.finish_reason).toBe('tool_calls');
    expect(call.type === 'function' && call.function.name).toBe('get_weather');
    expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ input: 'Weather in Paris?' });
    const sent = gemini.requests.at(-1)!.body as Record<string, unknown>;
    expect(sent.tools).toEqual([{ functionDeclarations: [{ name: 'get_weather', description: 'Weather of a city', parametersJsonSchema: tools[0]!.type === 'function' ? tools[0]!.function.parameters : undefined }] }]);
    expect(sent.toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY' } });

    const second = await openai.chat.completions.create({
      model: 'gemini-flash',
      tools,
      messages: [{ role: 'user', content: 'Weather in Paris?' }, first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: 'Sunny, 21 °C' }],
    });
    expect(second.choices[0]!.message.content).toBe('Echo: Sunny, 21 °C');
    const contents = (gemini.requests.at(-1)!.body as { contents: unknown[] }).contents;
    expect(contents).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { input: 'Weather in Paris?' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'Sunny, 21 °C' } } }] },
    ]);
  });

  it('streams a tool call', async () => {
    const stream = await openai.chat.completions.create({
      model: 'gemini-flash',
      messages: [{ role: 'user', content: 'Look it up' }],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }],
      tool_choice: { type: 'function', function: { name: 'lookup' } },
      stream: true,
    });
    let name = '';
    let args = '';
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta.tool_calls ?? []) {
        name += call.function?.name ?? '';
        args += call.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect({ name, args: JSON.parse(args), finish }).toEqual({ name: 'lookup', args: { input: 'Look it up' }, finish: 'tool_calls' });
    expect((gemini.requests.at(-1)!.body as Record<string, unknown>).toolConfig).toEqual({ functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] } });
  });

  it('asks for JSON with responseMimeType and responseJsonSchema, and answers JSON', async () => {
    const schema = { type: 'object', properties: { echo: { type: 'string' } }, required: ['echo'], additionalProperties: false };
    const result = await openai.chat.completions.create({
      model: 'gemini-flash',
      messages: [{ role: 'user', content: 'Give JSON' }],
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
    });
    expect(JSON.parse(result.choices[0]!.message.content!)).toEqual({ echo: 'Give JSON' });
    expect((gemini.requests.at(-1)!.body as { generationConfig: unknown }).generationConfig).toEqual({ responseMimeType: 'application/json', responseJsonSchema: schema });
  });

  it('sends images inline', async () => {
    const pixel = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
    await openai.chat.completions.create({
      model: 'gemini-flash',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${pixel}` } }] }],
    });
    expect((gemini.requests.at(-1)!.body as { contents: unknown[] }).contents).toEqual([
      { role: 'user', parts: [{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data: pixel } }] },
    ]);
  });
});

describe('failover and errors', () => {
  it('falls over to the OpenAI-format deployment on a 429 RESOURCE_EXHAUSTED, and bills the deployment that answered', async () => {
    gemini.script({ kind: 'status', status: 429 });
    const { result, requests } = await during(openaiUpstream, () => openai.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'Are you there?' }] }));
    expect(result.choices[0]!.message.content).toBe('Echo: Are you there?');
    expect(requests).toHaveLength(1);
    expect((requests[0]!.body as { model: string }).model).toBe('gpt-4o-mini');
    expect(gemini.pendingSteps).toBe(0);
    const row = await usageRowOf(gateway, openaiAnswers.lastRequestId());
    expect(row.provider).toBe('openai-backup');
    expect(row.input_tokens).toBe(result.usage!.prompt_tokens);
  });

  it('falls over on a 503 UNAVAILABLE before a messages stream starts', async () => {
    gemini.script({ kind: 'status', status: 503 });
    const { result, requests } = await during(openaiUpstream, () =>
      anthropic.messages.stream({ model: 'gemini-flash', max_tokens: 100, messages: [{ role: 'user', content: 'Still there?' }] }).finalMessage(),
    );
    expect(result.content).toEqual([expect.objectContaining({ type: 'text', text: 'Echo: Still there?' })]);
    expect(requests).toHaveLength(1);
  });

  it('serves from the Gemini deployment when the OpenAI-format primary keeps answering 429 (after its retries), billed as Gemini', async () => {
    const openaiBefore = openaiUpstream.requests.length;
    const limited = { kind: 'status', status: 429 } as const;
    openaiUpstream.script(...Array.from({ length: 1 + FAST_UPSTREAM.maxRetries }, () => limited));
    const { result, requests } = await during(gemini, () => openai.chat.completions.create({ model: 'openai-to-gemini', messages: [{ role: 'user', content: 'Who answers?' }] }));
    expect(result.choices[0]!.message.content).toBe('Echo: Who answers?');
    expect(openaiUpstream.requests.length - openaiBefore).toBe(1 + FAST_UPSTREAM.maxRetries);
    expect(openaiUpstream.pendingSteps).toBe(0);
    // Gemini answered: one generateContent call with the key, and its cached tokens (the OpenAI fake reports none).
    expect(requests.map((request) => request.path)).toEqual(['/v1beta/models/gemini-2.5-flash:generateContent']);
    expect(requests[0]!.headers['x-goog-api-key']).toBe(GEMINI_KEY);
    expect(result.usage?.prompt_tokens_details?.cached_tokens).toBe(CACHED_TOKENS);
    await expectBilled(openaiAnswers, { input: result.usage!.prompt_tokens, output: result.usage!.completion_tokens, cached: CACHED_TOKENS }, 'google');
  });

  it('relays a 400 INVALID_ARGUMENT as a 400 without falling over', async () => {
    gemini.script({ kind: 'status', status: 400, message: 'Invalid value at contents[0].parts[0]' });
    const { result: error, requests } = await during(openaiUpstream, () => failureOf(openai.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'x' }] })));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as Error).message).toContain('Invalid value at contents[0].parts[0]');
    expect(requests).toHaveLength(0);
  });

  it('ends a stream whose provider fails mid-way with an error event (no failover once text went out)', async () => {
    gemini.script({ kind: 'error-event', afterChunks: 2, message: 'Internal error encountered.' });
    const stream = await openai.chat.completions.create({ model: 'gemini-flash', messages: [{ role: 'user', content: 'A longer sentence to stream' }], stream: true });
    const error = await failureOf(async () => {
      for await (const _chunk of stream) void _chunk;
    });
    expect(String((error as Error).message)).toContain('Internal error encountered.');
  });
});

describe('messages and responses on Gemini', () => {
  it('answers messages with thinking, tools and the signature carried back', async () => {
    const tools: Anthropic.Tool[] = [{ name: 'search', description: 'Searches', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }];
    const first = await anthropic.messages.create({
      model: 'gemini-flash',
      max_tokens: 4000,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      tool_choice: { type: 'any' },
      tools,
      messages: [{ role: 'user', content: 'Find the docs' }],
    });
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content.map((block) => block.type)).toEqual(['thinking', 'thinking', 'tool_use']);
    const sent = gemini.requests.at(-1)!.body as { generationConfig: unknown };
    expect(sent.generationConfig).toEqual({ maxOutputTokens: 4000, thinkingConfig: { thinkingBudget: 2048, includeThoughts: true } });
    const toolUse = first.content[2] as Anthropic.ToolUseBlock;
    expect(first.usage.output_tokens).toBeGreaterThan(Math.ceil(`searchs${JSON.stringify(toolUse.input)}`.length / 4));

    await anthropic.messages.create({
      model: 'gemini-flash',
      max_tokens: 4000,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      tools,
      messages: [
        { role: 'user', content: 'Find the docs' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse.id, content: 'Found 3 pages' }] },
      ],
    });
    const replayed = (gemini.requests.at(-1)!.body as { contents: Array<{ role: string; parts: Array<Record<string, unknown>> }> }).contents[1]!;
    expect(replayed.role).toBe('model');
    // The thought text goes back as a thought; the signature on the function call it came with.
    expect(replayed.parts).toEqual([
      { text: 'Thinking about: Find the docs', thought: true },
      { functionCall: { name: 'search', args: toolUse.input }, thoughtSignature: expect.stringMatching(/^sig_\d+$/) },
    ]);
  });

  it('streams messages and bills what Gemini reported', async () => {
    const final = await anthropic.messages.stream({ model: 'gemini-flash', max_tokens: 100, system: 'You echo.', messages: [{ role: 'user', content: 'Echo me in pieces' }] }).finalMessage();
    expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: 'Echo: Echo me in pieces' })]);
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.cache_read_input_tokens).toBe(CACHED_TOKENS);
    await expectBilled(anthropicAnswers, { input: final.usage.input_tokens + CACHED_TOKENS, output: final.usage.output_tokens, cached: CACHED_TOKENS });
  });

  it('counts tokens with countTokens (system and tools inside generateContentRequest)', async () => {
    const { result, requests } = await during(gemini, () =>
      anthropic.messages.countTokens({ model: 'gemini-flash', system: 'Count me.', messages: [{ role: 'user', content: 'And me.' }] }),
    );
    expect(requests[0]!.path).toBe('/v1beta/models/gemini-2.5-flash:countTokens');
    const body = requests[0]!.body as { generateContentRequest: { model: string; systemInstruction: unknown } };
    expect(body.generateContentRequest.model).toBe('models/gemini-2.5-flash');
    expect(body.generateContentRequest.systemInstruction).toEqual({ parts: [{ text: 'Count me.' }] });
    expect(result.input_tokens).toBe(Math.ceil('Count me.And me.'.length / 4));
  });

  it('answers responses, JSON and stream', async () => {
    const response = await openai.responses.create({ model: 'gemini-flash', instructions: 'Be short.', input: 'Respond please' });
    expect(response.output_text).toBe('Echo: Respond please');
    expect((gemini.requests.at(-1)!.body as { systemInstruction: unknown }).systemInstruction).toEqual({ parts: [{ text: 'Be short.' }] });
    const stream = openai.responses.stream({ model: 'gemini-flash', input: 'Stream a response' });
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('Echo: Stream a response');
    await expectBilled(openaiAnswers, { input: final.usage!.input_tokens, output: final.usage!.output_tokens, cached: CACHED_TOKENS });
  });

  it('names what Gemini cannot carry in x-gateway-dropped-params, and strict mode refuses it before calling Gemini', async () => {
    const body = {
      model: 'gemini-flash',
      max_tokens: 100,
      system: [{ type: 'text' as const, text: 'Cached system', cache_control: { type: 'ephemeral' as const } }],
      messages: [{ role: 'user' as const, content: 'Hi' }],
    };
    await anthropic.messages.create(body);
    expect(anthropicAnswers.lastHeaders().get('x-gateway-dropped-params')).toContain('cache_control');
    const before = gemini.requests.length;
    const error = await failureOf(anthropic.messages.create(body, { headers: { 'x-gateway-strict': 'true' } }));
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as Error).message).toContain('cache_control');
    expect(gemini.requests.length).toBe(before);
  });
});

describe('embeddings', () => {
  it('embeds with batchEmbedContents on the Gemini API and predict on Vertex AI', async () => {
    const google = await openai.embeddings.create({ model: 'gemini-embed', input: ['first text', 'second'], dimensions: 4 });
    expect(google.data.map((item) => item.embedding.length)).toEqual([4, 4]);
    const sent = gemini.requests.at(-1)!;
    expect(sent.path).toBe('/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(sent.body).toEqual({
      requests: [
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'first text' }] }, outputDimensionality: 4 },
        { model: 'models/gemini-embedding-001', content: { parts: [{ text: 'second' }] }, outputDimensionality: 4 },
      ],
    });
    const vertex = await openai.embeddings.create({ model: 'vertex-embed', input: 'vertex text' });
    expect(vertex.data[0]!.embedding).toHaveLength(8);
    expect(gemini.requests.at(-1)!.path).toBe('/v1/projects/test-project/locations/us-central1/publishers/google/models/text-embedding-005:predict');
    // Vertex counts the tokens: that count is billed.
    expect(vertex.usage.prompt_tokens).toBe(Math.ceil('vertex text'.length / 4));
  });
});

describe('Vertex AI', () => {
  it('exchanges the service account for a token once, sends it as a bearer on the Vertex path, and keeps it out of logs', async () => {
    const issuedBefore = gemini.issuedTokens.length;
    const { requests } = await during(gemini, async () => {
      await openai.chat.completions.create({ model: 'gemini-vertex', messages: [{ role: 'user', content: 'On Vertex' }] });
      await anthropic.messages.create({ model: 'gemini-vertex', max_tokens: 50, messages: [{ role: 'user', content: 'Again' }] });
    });
    const calls = requests.filter((request) => request.path !== '/token');
    expect(calls.map((request) => request.path)).toEqual([
      '/v1/projects/test-project/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent',
      '/v1/projects/test-project/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent',
    ]);
    // Cached: at most one exchange for both calls (none when an earlier test already got a token).
    expect(gemini.issuedTokens.length - issuedBefore).toBeLessThanOrEqual(1);
    const token = gemini.issuedTokens.at(-1)!;
    expect(calls.every((request) => request.headers.authorization === `Bearer ${token}`)).toBe(true);
    expect(calls.every((request) => request.headers['x-goog-api-key'] === undefined)).toBe(true);
    const logs = logLines.join('\n');
    expect(logs).not.toContain(token);
    expect(logs).not.toContain(GEMINI_KEY);
  });

  it('falls over to the next deployment when the token exchange is refused, without calling Vertex', async () => {
    const { result, requests } = await during(gemini, () => openai.chat.completions.create({ model: 'vertex-refused', messages: [{ role: 'user', content: 'Token?' }] }));
    expect(result.choices[0]!.message.content).toBe('Echo: Token?');
    expect(requests.map((request) => request.path)).toContain('/token');
    expect(requests.some((request) => request.path.includes('/locations/us-east1/'))).toBe(false);
    expect((await usageRowOf(gateway, openaiAnswers.lastRequestId())).provider).toBe('openai-backup');
    expect(logLines.join('\n')).not.toContain(UNKNOWN_KEY.split('\n')[1]!);
  });

  it('fetches a new token before the old one expires', async () => {
    await openai.chat.completions.create({ model: 'gemini-vertex-short', messages: [{ role: 'user', content: 'one' }] });
    const first = gemini.issuedTokens.length;
    await openai.chat.completions.create({ model: 'gemini-vertex-short', messages: [{ role: 'user', content: 'two' }] });
    expect(gemini.issuedTokens.length).toBe(first + 1);
    const last = gemini.requests.filter((request) => request.path.endsWith(':generateContent')).at(-1)!;
    expect(last.path).toContain('/locations/europe-west4/');
    expect(last.headers.authorization).toBe(`Bearer ${gemini.issuedTokens.at(-1)}`);
  });
});

describe('a provider that echoes its credential', () => {
  it.each([
    ['leaky-gemini', 'the API key'],
    ['leaky-vertex', 'the access token'],
  ])('%s: %s is redacted from JSON answers, streams and error messages', async (model) => {
    const json = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Say {{credential}}' }] });
    expect(json.choices[0]!.message.content).toMatch(/^Echo: Say (Bearer )?\[redacted\]$/);
    const stream = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'Stream {{credential}}' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toMatch(/^Echo: Stream (Bearer )?\[redacted\]$/);
    leaky.script({ kind: 'status', status: 400, message: 'Rejected credential {{credential}}' });
    const error = await failureOf(openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'x' }] }));
    expect((error as Error).message).toContain('Rejected credential');
    const seen = `${json.choices[0]!.message.content} ${text} ${(error as Error).message}`;
    expect(seen).not.toContain(GEMINI_KEY);
    for (const token of leaky.issuedTokens) expect(seen).not.toContain(token);
    expect(leaky.requests.at(-1)!.headers[model === 'leaky-vertex' ? 'authorization' : 'x-goog-api-key']).toBeDefined();
  });
});
