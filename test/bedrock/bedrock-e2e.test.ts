/**
 * The `bedrock` provider kind end to end: a running gateway whose catalog
 * points at a local fake of Bedrock (real HTTP, every request's Signature V4
 * checked, streams in real eventstream frames), through the official
 * `openai` and `@anthropic-ai/sdk` clients. Chat completions, messages and
 * responses, JSON and stream, tools, usage billed exactly (cache reads and
 * writes included), the fidelity headers and strict mode, Bedrock's error
 * types, and failover from Bedrock to a deployment of another kind.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeCost } from '../../server/billing/money.js';
import { toMicroPrice } from '../../server/catalog/catalog.schema.js';
import type { CatalogFile, ModelEntry, ProviderEntry } from '../../server/catalog/catalog.schema.js';
import { FAST_UPSTREAM, errorText, failureOf, recordAnswers, type AnswerRecorder } from '../support/e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { usageRowOf } from '../support/usage.js';
import { BEDROCK_TEST_CREDENTIALS, bedrockErrorStep, bedrockExceptionFrame, startBedrockUpstream } from '../upstreams/bedrock-upstream.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import { CREDENTIAL_PLACEHOLDER, type RecordedRequest, type UpstreamServer } from '../upstreams/upstream-server.js';

const OPENAI_SECRET = 'sk-upstream-openai-bedrock-e2e-SECRET';
const ENV: Record<string, string> = {
  UMG_BEDROCK_KEY_ID: BEDROCK_TEST_CREDENTIALS.accessKeyId,
  UMG_BEDROCK_SECRET: BEDROCK_TEST_CREDENTIALS.secretAccessKey,
  UMG_BEDROCK_TOKEN: BEDROCK_TEST_CREDENTIALS.sessionToken,
  UMG_BEDROCK_WRONG_SECRET: 'not-the-secret-the-fake-knows-0123456789',
  UMG_E2E_OPENAI_KEY: OPENAI_SECRET,
};
const CLAUDE_ON_BEDROCK = 'anthropic.claude-sonnet-4-5-20250929-v1:0';
const PRICING = { input: 3, output: 15, cachedInput: 0.3 };
// 27 cache reads at 0.3 leave a fraction of a micro-credit (8.1): the hand-computed cost below checks the round-up.
const CACHE = { read: 27, write: 10 };
const TOOL_ARGUMENTS = { city: 'Paris' };
const PROMPT = 'hello from the bedrock suite';
const ENDPOINTS: ModelEntry['endpoints'] = ['/v1/chat/completions', '/v1/messages', '/v1/messages/count_tokens', '/v1/responses'];

const WEATHER_FUNCTION = {
  type: 'function' as const,
  function: { name: 'get_weather', description: 'Current weather in a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};
const WEATHER_TOOL: Anthropic.Tool = { name: 'get_weather', description: 'Current weather in a city', input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } };

function bedrockProvider(id: string, baseUrl: string, secret = 'env:UMG_BEDROCK_SECRET'): ProviderEntry {
  return {
    id,
    kind: 'bedrock',
    baseUrl,
    aws: { region: 'us-east-1', accessKeyId: 'env:UMG_BEDROCK_KEY_ID', secretAccessKey: secret, sessionToken: 'env:UMG_BEDROCK_TOKEN' },
  };
}

function model(id: string, provider: string, extra: Partial<ModelEntry> = {}): ModelEntry {
  return { id, ownedBy: 'e2e', provider, upstreamModel: CLAUDE_ON_BEDROCK, endpoints: ENDPOINTS, pricing: PRICING, ...extra };
}

/** A model whose primary is Bedrock, falling over to the OpenAI-format upstream. */
function failoverModel(id: string): ModelEntry {
  return model(id, 'bedrock-east', { deployments: [{ provider: 'openai-up', upstreamModel: 'gpt-4o-mini', priority: 1, weight: 1 }] });
}

function catalog(bedrockUrl: string, leakyUrl: string, openaiUrl: string): CatalogFile {
  return {
    providers: [
      bedrockProvider('bedrock-east', bedrockUrl),
      bedrockProvider('bedrock-wrong-key', bedrockUrl, 'env:UMG_BEDROCK_WRONG_SECRET'),
      bedrockProvider('bedrock-leaky', leakyUrl),
      { id: 'bedrock-paris', kind: 'bedrock', aws: { region: 'eu-west-3', accessKeyId: 'env:UMG_BEDROCK_KEY_ID', secretAccessKey: 'env:UMG_BEDROCK_SECRET', sessionToken: 'env:UMG_BEDROCK_TOKEN' } },
      { id: 'openai-up', kind: 'openai', baseUrl: openaiUrl, apiKey: 'env:UMG_E2E_OPENAI_KEY' },
    ],
    models: [
      model('claude-bedrock-leaky', 'bedrock-leaky'),
      model('claude-bedrock-paris', 'bedrock-paris'),
      model('claude-bedrock', 'bedrock-east'),
      model('claude-bedrock-strict', 'bedrock-east', { strict: true }),
      model('claude-bedrock-wrong-key', 'bedrock-wrong-key'),
      failoverModel('claude-bedrock-failover-chat'),
      failoverModel('claude-bedrock-failover-messages'),
      failoverModel('claude-bedrock-failover-stream'),
      // The other way round: an OpenAI-format primary, Bedrock its backup.
      { ...model('openai-to-bedrock', 'openai-up'), upstreamModel: 'gpt-4o-mini', deployments: [{ provider: 'bedrock-east', upstreamModel: CLAUDE_ON_BEDROCK, priority: 1, weight: 1 }] },
    ],
  };
}

let bedrock: UpstreamServer;
/** A Bedrock that echoes the request's `authorization` (signature and key id) into its answers. */
let leaky: UpstreamServer;
let openaiUpstream: UpstreamServer;
let gateway: TestGateway;
let openai: OpenAI;
let anthropic: Anthropic;
let openaiAnswers: AnswerRecorder;
let anthropicAnswers: AnswerRecorder;

beforeAll(async () => {
  bedrock = await startBedrockUpstream({ ...BEDROCK_TEST_CREDENTIALS, toolArguments: TOOL_ARGUMENTS, cacheUsage: CACHE });
  leaky = await startBedrockUpstream({ ...BEDROCK_TEST_CREDENTIALS, echoCredential: true });
  openaiUpstream = await startOpenAIUpstream({ expectedApiKey: OPENAI_SECRET, toolArguments: TOOL_ARGUMENTS });
  gateway = await startTestGateway({ env: ENV, config: { upstream: FAST_UPSTREAM }, catalog: catalog(bedrock.origin, leaky.origin, openaiUpstream.url) });
  const { key } = await gateway.createAccountWithKey();
  openaiAnswers = recordAnswers('x-request-id');
  anthropicAnswers = recordAnswers('request-id');
  openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0, fetch: openaiAnswers.fetch });
  anthropic = new Anthropic({ baseURL: gateway.url, apiKey: key, maxRetries: 0, fetch: anthropicAnswers.fetch });
});

afterAll(async () => {
  await gateway?.close();
  await bedrock?.close();
  await leaky?.close();
  await openaiUpstream?.close();
});

/** The requests `bedrock` received while `call` ran. */
async function bedrockRequestsDuring<T>(call: () => Promise<T>): Promise<{ result: T; requests: RecordedRequest[] }> {
  const before = bedrock.requests.length;
  const result = await call();
  return { result, requests: bedrock.requests.slice(before) };
}

/** The fake's uncached input count for a Converse body it received (its estimate: a token per 4 characters of the string values). */
function uncachedInputOf(request: RecordedRequest): number {
  const body = request.body as Record<string, unknown>;
  const strings = (value: unknown): string =>
    typeof value === 'string'
      ? value
      : Array.isArray(value)
        ? value.map(strings).join('')
        : typeof value === 'object' && value !== null
          ? Object.entries(value)
              .filter(([name]) => name !== 'role' && name !== 'type')
              .map(([, item]) => strings(item))
              .join('')
          : '';
  return Math.ceil(strings([body.system ?? [], body.messages, body.toolConfig ?? {}]).length / 4);
}

/** The usage row of a request holds the provider's counts and costs exactly what they cost at the model's prices. */
async function expectBilledExactly(requestId: string, expected: { provider: string; inputTokens: number; outputTokens: number; cachedInputTokens: number }): Promise<void> {
  const row = await usageRowOf(gateway, requestId);
  expect({ provider: row.provider, input: row.input_tokens, output: row.output_tokens, cached: row.cached_input_tokens, status: row.status }).toEqual({
    provider: expected.provider,
    input: expected.inputTokens,
    output: expected.outputTokens,
    cached: expected.cachedInputTokens,
    status: 200,
  });
  expect(Number(row.cost)).toBe(computeCost(toMicroPrice(PRICING), expected));
}

describe('chat completions on Bedrock (openai SDK)', () => {
  it('answers JSON from Converse, signed, with the system prompt and usage billed exactly', async () => {
    const { result, requests } = await bedrockRequestsDuring(() =>
      openai.chat.completions.create({
        model: 'claude-bedrock',
        max_tokens: 200,
        stop: ['NEVER'],
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: PROMPT },
        ],
      }),
    );
    expect(result.choices[0]!.message.content).toBe(`Echo: ${PROMPT}`);
    expect(result.choices[0]!.finish_reason).toBe('stop');
    expect(requests).toHaveLength(1);
    const upstream = requests[0]!;
    expect(upstream.path).toBe('/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse');
    expect(upstream.headers['x-amz-security-token']).toBe(BEDROCK_TEST_CREDENTIALS.sessionToken);
    expect(upstream.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAFAKEBEDROCK00001\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
    expect(upstream.body).toEqual({
      messages: [{ role: 'user', content: [{ text: PROMPT }] }],
      system: [{ text: 'You are terse.' }],
      inferenceConfig: { maxTokens: 200, stopSequences: ['NEVER'] },
      additionalModelResponseFieldPaths: ['/stop_sequence'],
    });
    const uncached = uncachedInputOf(upstream);
    const output = Math.ceil(`Echo: ${PROMPT}`.length / 4);
    expect(result.usage).toMatchObject({ prompt_tokens: uncached + CACHE.read + CACHE.write, completion_tokens: output });
    expect(result.usage?.prompt_tokens_details?.cached_tokens).toBe(CACHE.read);
    await expectBilledExactly(openaiAnswers.lastRequestId(), { provider: 'bedrock-east', inputTokens: uncached + CACHE.read + CACHE.write, outputTokens: output, cachedInputTokens: CACHE.read });
    // By hand, per million tokens: 11 uncached ('You are terse.' + PROMPT = 42 characters) and 10 cache writes at 3,
    // 27 cache reads at 0.3, 9 output ('Echo: ' + PROMPT = 34 characters) at 15:
    // 21 × 3 + 27 × 0.3 + 9 × 15 = 63 + 8.1 + 135 = 206.1 µc, rounded up once (server/billing/money.ts) → 207.
    expect({ uncached, output }).toEqual({ uncached: 11, output: 9 });
    expect(Number((await usageRowOf(gateway, openaiAnswers.lastRequestId())).cost)).toBe(207);
  });

  it('streams a tool call out of eventstream frames, with the usage chunk', async () => {
    const { result: chunks, requests } = await bedrockRequestsDuring(async () => {
      const stream = await openai.chat.completions.create({
        model: 'claude-bedrock',
        stream: true,
        stream_options: { include_usage: true },
        tools: [WEATHER_FUNCTION],
        tool_choice: 'required',
        messages: [{ role: 'user', content: 'Weather in Paris?' }],
      });
      const collected: OpenAI.ChatCompletionChunk[] = [];
      for await (const chunk of stream) collected.push(chunk);
      return collected;
    });
    expect(requests[0]!.path).toBe('/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream');
    expect((requests[0]!.body as { toolConfig: unknown }).toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'get_weather', description: 'Current weather in a city', inputSchema: { json: WEATHER_FUNCTION.function.parameters } } }],
      toolChoice: { any: {} },
    });
    const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toMatchObject({ id: 'tooluse_2', function: { name: 'get_weather' } });
    expect(JSON.parse(calls.map((call) => call.function?.arguments ?? '').join(''))).toEqual(TOOL_ARGUMENTS);
    expect(chunks.find((chunk) => chunk.choices[0]?.finish_reason)?.choices[0]?.finish_reason).toBe('tool_calls');
    const usage = chunks.at(-1)!.usage!;
    const output = Math.ceil(`get_weather${JSON.stringify(TOOL_ARGUMENTS)}`.length / 4);
    expect(usage.completion_tokens).toBe(output);
    await expectBilledExactly(openaiAnswers.lastRequestId(), {
      provider: 'bedrock-east',
      inputTokens: uncachedInputOf(requests[0]!) + CACHE.read + CACHE.write,
      outputTokens: output,
      cachedInputTokens: CACHE.read,
    });
  });

  it('carries a tool result back as toolResult, and names what Converse cannot carry', async () => {
    const { result, requests } = await bedrockRequestsDuring(() =>
      openai.chat.completions.create({
        model: 'claude-bedrock',
        seed: 7,
        tools: [WEATHER_FUNCTION],
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
          { role: 'tool', tool_call_id: 'call_1', content: '18C and sunny' },
        ],
      }),
    );
    expect(result.choices[0]!.message.content).toBe('Echo: 18C and sunny');
    expect((requests[0]!.body as { messages: unknown[] }).messages).toEqual([
      { role: 'user', content: [{ text: 'Weather in Paris?' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'call_1', name: 'get_weather', input: { city: 'Paris' } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'call_1', content: [{ text: '18C and sunny' }] } }] },
    ]);
    expect(openaiAnswers.lastHeaders().get('x-gateway-dropped-params')).toBe('seed');
  });

  it('refuses in strict mode what the bridge would drop, before calling Bedrock', async () => {
    const before = bedrock.requests.length;
    const error = await failureOf(openai.chat.completions.create({ model: 'claude-bedrock-strict', seed: 7, messages: [{ role: 'user', content: PROMPT }] }));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).code).toBe('UNSUPPORTED_FEATURE');
    expect(errorText(error)).toContain('seed');
    expect(bedrock.requests.length).toBe(before);
  });
});

describe('messages on Bedrock (@anthropic-ai/sdk)', () => {
  it('answers a forced tool call as a tool_use block, with cache usage', async () => {
    const message = await anthropic.messages.create({
      model: 'claude-bedrock',
      max_tokens: 256,
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'tool', name: 'get_weather' },
      messages: [{ role: 'user', content: 'Weather in Paris?' }],
    });
    expect(message.stop_reason).toBe('tool_use');
    expect(message.content).toEqual([{ type: 'tool_use', id: expect.stringMatching(/^tooluse_/) as unknown, name: 'get_weather', input: TOOL_ARGUMENTS }]);
    expect(message.usage.cache_read_input_tokens).toBe(CACHE.read);
    expect(message.usage.cache_creation_input_tokens).toBe(CACHE.write);
    const upstream = bedrock.requests.at(-1)!;
    expect((upstream.body as { toolConfig: { toolChoice: unknown } }).toolConfig.toolChoice).toEqual({ tool: { name: 'get_weather' } });
    const uncached = uncachedInputOf(upstream);
    expect(message.usage.input_tokens).toBe(uncached);
    await expectBilledExactly(anthropicAnswers.lastRequestId(), {
      provider: 'bedrock-east',
      inputTokens: uncached + CACHE.read + CACHE.write,
      outputTokens: message.usage.output_tokens,
      cachedInputTokens: CACHE.read,
    });
  });

  it('streams text with a system prompt and stop sequences', async () => {
    const final = await anthropic.messages
      .stream({ model: 'claude-bedrock', max_tokens: 256, system: 'Be brief.', stop_sequences: ['suite'], messages: [{ role: 'user', content: PROMPT }] })
      .finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'Echo: hello from the bedrock ' }]);
    expect(final.stop_reason).toBe('stop_sequence');
    // Converse names the reason; Claude's own response field, asked for by path, names the sequence.
    expect(final.stop_sequence).toBe('suite');
    expect(final.usage.output_tokens).toBe(Math.ceil('Echo: hello from the bedrock '.length / 4));
    const upstream = bedrock.requests.at(-1)!;
    expect(upstream.body).toMatchObject({
      system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 256, stopSequences: ['suite'] },
      additionalModelResponseFieldPaths: ['/stop_sequence'],
    });
  });

  it('counts tokens locally, without calling Bedrock', async () => {
    const before = bedrock.requests.length;
    const counted = await anthropic.messages.countTokens({ model: 'claude-bedrock', system: 'Be brief.', messages: [{ role: 'user', content: PROMPT }] });
    expect(counted.input_tokens).toBeGreaterThan(0);
    expect(bedrock.requests.length).toBe(before);
  });

  it('sends images as bytes', async () => {
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
    const message = await anthropic.messages.create({
      model: 'claude-bedrock',
      max_tokens: 64,
      messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }, { type: 'text', text: 'What is this?' }] }],
    });
    expect(message.content).toEqual([{ type: 'text', text: 'Echo: What is this?' }]);
    expect((bedrock.requests.at(-1)!.body as { messages: unknown }).messages).toEqual([
      { role: 'user', content: [{ image: { format: 'png', source: { bytes: png } } }, { text: 'What is this?' }] },
    ]);
  });
});

describe('responses on Bedrock (openai SDK)', () => {
  it('answers a response from Converse', async () => {
    const response = await openai.responses.create({ model: 'claude-bedrock', instructions: 'Be brief.', input: PROMPT });
    expect(response.output_text).toBe(`Echo: ${PROMPT}`);
    expect(response.usage?.input_tokens_details.cached_tokens).toBe(CACHE.read);
    expect(bedrock.requests.at(-1)!.body).toMatchObject({ system: [{ text: 'Be brief.' }], messages: [{ role: 'user', content: [{ text: PROMPT }] }] });
  });
});

describe("Bedrock's errors", () => {
  it('relays a ValidationException as a 400', async () => {
    bedrock.script(bedrockErrorStep(400, 'ValidationException', 'The provided model identifier is invalid.'));
    const error = await failureOf(openai.chat.completions.create({ model: 'claude-bedrock', messages: [{ role: 'user', content: PROMPT }] }));
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(errorText(error)).toContain('The provided model identifier is invalid.');
  });

  it('answers a 502 when Bedrock refuses the signature, and names no secret', async () => {
    const before = bedrock.requests.length;
    const error = await failureOf(anthropic.messages.create({ model: 'claude-bedrock-wrong-key', max_tokens: 32, messages: [{ role: 'user', content: PROMPT }] }));
    expect(bedrock.requests.length).toBe(before + 1);
    expect((error as { status?: number }).status).toBe(502);
    const text = errorText(error);
    expect(text).toContain('credentials');
    for (const secret of [BEDROCK_TEST_CREDENTIALS.secretAccessKey, BEDROCK_TEST_CREDENTIALS.sessionToken, ENV.UMG_BEDROCK_WRONG_SECRET!]) expect(text).not.toContain(secret);
  });

  it('ends a stream with an error event when Bedrock sends an exception after the answer started', async () => {
    bedrock.script({ kind: 'error-event', afterChunks: 3, errorType: 'modelStreamErrorException', message: 'The model stopped.' });
    const error = await failureOf(anthropic.messages.stream({ model: 'claude-bedrock', max_tokens: 64, messages: [{ role: 'user', content: PROMPT }] }).finalMessage());
    expect(errorText(error)).toContain('The model stopped.');
  });

  it('refuses a stream cut short as incomplete', async () => {
    bedrock.script({ kind: 'reset-during-stream', afterChunks: 2 });
    const error = await failureOf(async () => {
      const stream = await openai.chat.completions.create({ model: 'claude-bedrock', stream: true, messages: [{ role: 'user', content: PROMPT }] });
      for await (const chunk of stream) void chunk;
    });
    expect(errorText(error).toLowerCase()).toMatch(/provider|stream/);
  });
});

describe('secrets', () => {
  it("keeps the request's signature and the key id out of an answer that echoes them", async () => {
    const completion = await openai.chat.completions.create({ model: 'claude-bedrock-leaky', messages: [{ role: 'user', content: `my header: ${CREDENTIAL_PLACEHOLDER}` }] });
    const text = completion.choices[0]!.message.content!;
    const sent = leaky.requests.at(-1)!.headers.authorization!;
    const signature = /Signature=([0-9a-f]{64})/.exec(sent)![1]!;
    expect(text).toContain('AWS4-HMAC-SHA256 Credential=[redacted]/');
    expect(text).toContain('Signature=[redacted]');
    expect(text).not.toContain(signature);
    expect(text).not.toContain(BEDROCK_TEST_CREDENTIALS.accessKeyId);
  });
});

describe('the catalog', () => {
  it("reaches a provider without baseUrl at its region's endpoint, and holds its credentials as secrets", () => {
    const paris = gateway.gateway.services.catalog.get('claude-bedrock-paris')!;
    expect(paris.deployments[0]!.provider.baseUrl).toBe('https://bedrock-runtime.eu-west-3.amazonaws.com');
    expect(paris.secrets).toEqual(expect.arrayContaining([BEDROCK_TEST_CREDENTIALS.accessKeyId, BEDROCK_TEST_CREDENTIALS.secretAccessKey, BEDROCK_TEST_CREDENTIALS.sessionToken]));
  });
});

describe('failover from Bedrock to another kind', () => {
  it('falls over to the OpenAI-format deployment when Bedrock keeps throttling (after its retries)', async () => {
    const bedrockBefore = bedrock.requests.length;
    const openaiBefore = openaiUpstream.requests.length;
    const throttled = bedrockErrorStep(429, 'ThrottlingException', 'Too many requests, please wait before trying again.');
    bedrock.script(throttled, throttled, throttled);
    const completion = await openai.chat.completions.create({ model: 'claude-bedrock-failover-chat', messages: [{ role: 'user', content: PROMPT }] });
    expect(completion.choices[0]!.message.content).toBe(`Echo: ${PROMPT}`);
    // One call and the transport's two retries, each signed and checked, then the other kind.
    expect(bedrock.requests.length - bedrockBefore).toBe(1 + FAST_UPSTREAM.maxRetries);
    expect(openaiUpstream.requests.slice(openaiBefore).map((request) => request.path)).toEqual(['/v1/chat/completions']);
    const row = await usageRowOf(gateway, openaiAnswers.lastRequestId());
    expect(row.provider).toBe('openai-up');
  });

  it('falls over on a 503 for messages', async () => {
    const unavailable = bedrockErrorStep(503, 'ServiceUnavailableException', 'Service is unavailable.');
    bedrock.script(unavailable, unavailable, unavailable);
    const message = await anthropic.messages.create({ model: 'claude-bedrock-failover-messages', max_tokens: 64, messages: [{ role: 'user', content: PROMPT }] });
    expect(message.content).toEqual([{ type: 'text', text: `Echo: ${PROMPT}` }]);
    expect((await usageRowOf(gateway, anthropicAnswers.lastRequestId())).provider).toBe('openai-up');
  });

  it('falls over when the stream opens with a throttling exception', async () => {
    bedrock.script({ kind: 'sse', frames: [bedrockExceptionFrame('throttlingException', 'Too many tokens, please wait.')], headers: { 'content-type': 'application/vnd.amazon.eventstream' } });
    const final = await anthropic.messages.stream({ model: 'claude-bedrock-failover-stream', max_tokens: 64, messages: [{ role: 'user', content: PROMPT }] }).finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: `Echo: ${PROMPT}` }]);
    expect((await usageRowOf(gateway, anthropicAnswers.lastRequestId())).provider).toBe('openai-up');
  });
});

describe('failover from another kind to Bedrock', () => {
  it('serves from the Bedrock deployment when the OpenAI primary keeps answering 503 (after its retries), billed as Bedrock', async () => {
    const openaiBefore = openaiUpstream.requests.length;
    const unavailable = { kind: 'status', status: 503 } as const;
    openaiUpstream.script(...Array.from({ length: 1 + FAST_UPSTREAM.maxRetries }, () => unavailable));
    const { result, requests } = await bedrockRequestsDuring(() => openai.chat.completions.create({ model: 'openai-to-bedrock', messages: [{ role: 'user', content: PROMPT }] }));
    expect(result.choices[0]!.message.content).toBe(`Echo: ${PROMPT}`);
    expect(openaiUpstream.requests.length - openaiBefore).toBe(1 + FAST_UPSTREAM.maxRetries);
    expect(openaiUpstream.pendingSteps).toBe(0);
    // Bedrock answered: one signed Converse call, and its cache reads (the OpenAI fake reports none).
    expect(requests.map((request) => request.path)).toEqual(['/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse']);
    expect(requests[0]!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAFAKEBEDROCK00001\//);
    expect(result.usage?.prompt_tokens_details?.cached_tokens).toBe(CACHE.read);
    await expectBilledExactly(openaiAnswers.lastRequestId(), {
      provider: 'bedrock-east',
      inputTokens: uncachedInputOf(requests[0]!) + CACHE.read + CACHE.write,
      outputTokens: Math.ceil(`Echo: ${PROMPT}`.length / 4),
      cachedInputTokens: CACHE.read,
    });
  });
});

describe("Claude Code's request shape on a model whose primary is Bedrock", () => {
  const lastUserText = 'Please continue with the refactoring we discussed.';
  const tool = (name: string, properties: Record<string, unknown>, required: string[]): Anthropic.Tool => ({
    name,
    description: `The ${name} tool of a coding agent.`,
    input_schema: { type: 'object', properties, required, additionalProperties: false },
  });
  const customTools: Anthropic.Tool[] = [
    tool('Read', { file_path: { type: 'string' }, offset: { type: 'number' }, limit: { type: 'number' } }, ['file_path']),
    tool('Edit', { file_path: { type: 'string' }, old_string: { type: 'string' }, new_string: { type: 'string' }, replace_all: { type: 'boolean' } }, ['file_path', 'old_string', 'new_string']),
    tool('Bash', { command: { type: 'string' }, timeout: { type: 'number' } }, ['command']),
    tool('Grep', { pattern: { type: 'string' }, path: { type: 'string' }, '-i': { type: 'boolean' } }, ['pattern']),
    { ...tool('TodoWrite', { todos: { type: 'array', items: { type: 'object', properties: { content: { type: 'string' }, status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] } } } } }, ['todos']), cache_control: { type: 'ephemeral' } },
  ];
  const body = (stream: boolean): Record<string, unknown> => ({
    model: 'claude-bedrock',
    max_tokens: 32000,
    stream,
    thinking: { type: 'enabled', budget_tokens: 2048 },
    system: [
      { type: 'text', text: 'You are an interactive CLI tool that helps users with software engineering tasks.' },
      { type: 'text', text: `# Conventions\n${'Run the tests before you finish. '.repeat(30)}`, cache_control: { type: 'ephemeral' } },
    ],
    tools: [...customTools, { type: 'web_search_20250305', name: 'web_search', max_uses: 5 }],
    metadata: { user_id: 'user_0123456789abcdef_account__session_42' },
    context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Here is the design document.' },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Invalidate the cache on every write.' }, title: 'design.txt' },
          { type: 'text', text: 'Refactor the cache module accordingly.', cache_control: { type: 'ephemeral' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'I should read the module first.', signature: 'EqQBCkYIBxgCKkD-signature' },
          { type: 'tool_use', id: 'toolu_01ReadCache', name: 'Read', input: { file_path: 'src/cache.ts' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01ReadCache', content: 'export const cache = new Map();' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'I read the cache module.' }] },
      { role: 'user', content: [{ type: 'text', text: lastUserText, cache_control: { type: 'ephemeral', ttl: '5m' } }] },
    ],
  });

  function expectConverseBody(upstream: RecordedRequest): void {
    const sent = upstream.body as {
      system: unknown[];
      messages: Array<{ role: string; content: Array<Record<string, unknown>> }>;
      toolConfig: { tools: Array<{ toolSpec: { name: string } }> };
      additionalModelRequestFields: unknown;
      inferenceConfig: unknown;
    };
    expect(sent.toolConfig.tools.map((spec) => spec.toolSpec.name)).toEqual(customTools.map((custom) => custom.name));
    expect(sent.system).toEqual([
      { text: 'You are an interactive CLI tool that helps users with software engineering tasks.' },
      { text: expect.stringContaining('# Conventions') as unknown },
      { cachePoint: { type: 'default' } },
    ]);
    expect(sent.additionalModelRequestFields).toEqual({ thinking: { type: 'enabled', budget_tokens: 2048 } });
    expect(sent.inferenceConfig).toEqual({ maxTokens: 32000 });
    expect(sent.messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(sent.messages[1]!.content).toEqual([
      { reasoningContent: { reasoningText: { text: 'I should read the module first.', signature: 'EqQBCkYIBxgCKkD-signature' } } },
      { toolUse: { toolUseId: 'toolu_01ReadCache', name: 'Read', input: { file_path: 'src/cache.ts' } } },
    ]);
    expect(sent.messages[2]!.content).toEqual([{ toolResult: { toolUseId: 'toolu_01ReadCache', content: [{ text: 'export const cache = new Map();' }] } }]);
    expect(sent.messages[4]!.content).toEqual([{ text: lastUserText }, { cachePoint: { type: 'default' } }]);
  }

  function dropped(headers: Headers): string[] {
    return (headers.get('x-gateway-dropped-params') ?? '').split(',').map((entry) => entry.trim());
  }

  it('is answered by messages.create, naming what Converse cannot carry', async () => {
    const { result, requests } = await bedrockRequestsDuring(() => anthropic.messages.create(body(false) as unknown as Anthropic.MessageCreateParamsNonStreaming, { timeout: 60_000 }));
    expect(result.content).toEqual([{ type: 'text', text: `Echo: ${lastUserText}` }]);
    expect(result.stop_reason).toBe('end_turn');
    expect(requests).toHaveLength(1);
    expectConverseBody(requests[0]!);
    expect(dropped(anthropicAnswers.lastHeaders())).toEqual(expect.arrayContaining(['tools.web_search', 'messages:document', 'context_management']));
    const row = await usageRowOf(gateway, anthropicAnswers.lastRequestId());
    expect(row.provider).toBe('bedrock-east');
    expect(row.input_tokens).toBe(uncachedInputOf(requests[0]!) + CACHE.read + CACHE.write);
  });

  it('is answered as a stream', async () => {
    const { result: final, requests } = await bedrockRequestsDuring(() =>
      anthropic.messages.stream(body(true) as unknown as Anthropic.MessageStreamParams).finalMessage(),
    );
    expect(final.content).toEqual([{ type: 'text', text: `Echo: ${lastUserText}` }]);
    expect(final.usage.cache_read_input_tokens).toBe(CACHE.read);
    expect(requests[0]!.path).toMatch(/\/converse-stream$/);
    expectConverseBody(requests[0]!);
  });

  it('is refused in strict mode, before Bedrock is called', async () => {
    const before = bedrock.requests.length;
    const error = await failureOf(anthropic.messages.create(body(false) as unknown as Anthropic.MessageCreateParamsNonStreaming, { timeout: 60_000, headers: { 'x-gateway-strict': 'true' } }));
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect(errorText(error)).toContain('UNSUPPORTED_FEATURE');
    expect(bedrock.requests.length).toBe(before);
  });
});

describe("Codex's request shape (responses) on a model whose primary is Bedrock", () => {
  const shellTool = {
    type: 'function' as const,
    name: 'shell',
    description: 'Runs a shell command and returns its output.',
    strict: false,
    parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } }, workdir: { type: 'string' } }, required: ['command'] },
  };
  const body = {
    model: 'claude-bedrock',
    instructions: 'You are a coding agent running in a terminal.',
    input: [
      { type: 'message' as const, role: 'user' as const, content: [{ type: 'input_text' as const, text: 'List the files.' }] },
      { type: 'function_call' as const, call_id: 'call_ls_1', name: 'shell', arguments: '{"command":["ls"]}' },
      { type: 'function_call_output' as const, call_id: 'call_ls_1', output: 'README.md\nsrc' },
      { type: 'message' as const, role: 'user' as const, content: [{ type: 'input_text' as const, text: 'Now summarise them.' }] },
    ],
    tools: [shellTool],
    tool_choice: 'auto' as const,
    parallel_tool_calls: false,
    reasoning: { effort: 'medium' as const },
    store: false,
    include: ['reasoning.encrypted_content' as const],
    prompt_cache_key: 'session-1234',
  };

  it('is streamed from ConverseStream, the tool loop carried as toolUse and toolResult', async () => {
    const { result: events, requests } = await bedrockRequestsDuring(async () => {
      const stream = await openai.responses.create({ ...body, stream: true });
      const collected: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const event of stream) collected.push(event);
      return collected;
    });
    const completed = events.find((event) => event.type === 'response.completed');
    const output = completed?.type === 'response.completed' ? completed.response.output : [];
    const text = output.flatMap((item) => (item.type === 'message' ? item.content : [])).map((part) => (part.type === 'output_text' ? part.text : '')).join('');
    // The fake echoes the last user turn: the tool result, then the text.
    expect(text).toBe('Echo: README.md\nsrc Now summarise them.');
    expect(events.filter((event) => event.type === 'response.output_text.delta').length).toBeGreaterThan(1);
    const sent = requests[0]!.body as { system: unknown; messages: unknown; additionalModelRequestFields: unknown };
    expect(requests[0]!.path).toMatch(/\/converse-stream$/);
    expect(sent.system).toEqual([{ text: 'You are a coding agent running in a terminal.' }]);
    expect(sent.messages).toEqual([
      { role: 'user', content: [{ text: 'List the files.' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'call_ls_1', name: 'shell', input: { command: ['ls'] } } }] },
      { role: 'user', content: [{ toolResult: { toolUseId: 'call_ls_1', content: [{ text: 'README.md\nsrc' }] } }, { text: 'Now summarise them.' }] },
    ]);
    // Claude refuses thinking in a tool loop whose call came without reasoning: the effort is left out, and said so.
    expect(sent.additionalModelRequestFields).toBeUndefined();
    const headers = openaiAnswers.lastHeaders();
    expect(headers.get('x-gateway-dropped-params')).toContain('parallel_tool_calls');
    expect(headers.get('x-gateway-dropped-params')).toContain('reasoning.effort');
    const row = await usageRowOf(gateway, openaiAnswers.lastRequestId());
    expect(row.provider).toBe('bedrock-east');
    expect(row.cached_input_tokens).toBe(CACHE.read);
  });
});
