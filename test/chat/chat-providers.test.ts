/**
 * `POST /v1/chat/completions` end to end with the official `openai` client, on
 * each provider kind: an OpenAI-format upstream (same-format pass-through), an
 * Anthropic-format upstream (bridge through the canonical types) and the
 * built-in mock. Completions, streams with and without usage, tool calls
 * (plain and through the SDK's stream helper), JSON mode, what each upstream
 * received, and the usage row and balance every request leaves behind.
 */
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUpstreamWorld, type UpstreamWorld } from '../support/e2e.js';
import type { TestGateway } from '../support/gateway.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import {
  ANTHROPIC_SECRET,
  OPENAI_SECRET,
  SECRET_ENV,
  anthropicProvider,
  chatModel,
  collectStream,
  createClient,
  expectBalanceSettled,
  expectUsageRow,
  openAIProvider,
  postRawStream,
  ssePayloads,
  type BaseBody,
  type NonStreamBody,
  type RecordingClient,
  type StreamBody,
} from './chat-e2e.js';

const PROMPT = 'hello world from the end to end suite';
const SYSTEM = 'You are terse.';
const TOOL_ARGUMENTS = { city: 'Paris' };

const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  },
};
const TIME_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_time',
    description: 'Local time in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

let world: UpstreamWorld;
let gateway: TestGateway;
let openaiUpstream: UpstreamServer;
let anthropicUpstream: UpstreamServer;
let accountId: string;
let keyId: string;
let key: string;
let recording: RecordingClient;
let client: OpenAI;
/** Every request of this file that reached the generation pipeline (one usage row each). */
const generated: string[] = [];

beforeAll(async () => {
  world = await startUpstreamWorld({
    openai: { expectedApiKey: OPENAI_SECRET, toolArguments: TOOL_ARGUMENTS },
    anthropic: { expectedApiKey: ANTHROPIC_SECRET, toolArguments: TOOL_ARGUMENTS },
    env: SECRET_ENV,
    catalog: (urls) => ({
      providers: [openAIProvider('openai-up', urls.openai), anthropicProvider('anthropic-up', urls.anthropic), { id: 'mock', kind: 'mock' }],
      models: [
        chatModel('gpt-e2e', 'openai-up', 'gpt-4o-mini'),
        chatModel('claude-e2e', 'anthropic-up', 'claude-sonnet-4-5'),
        chatModel('mock-chat', 'mock', 'mock-chat'),
      ],
    }),
  });
  ({ gateway, openaiUpstream, anthropicUpstream } = world);
  ({ accountId, keyId, key } = await gateway.createAccountWithKey());
  recording = createClient(gateway, key);
  client = recording.client;
});

afterAll(async () => {
  await world?.close();
});

interface Kind {
  name: 'openai' | 'anthropic' | 'mock';
  model: string;
  upstream: () => UpstreamServer | undefined;
  /** The answer's text is known in advance (the upstream test servers echo the prompt). */
  expectedText: string | undefined;
}

const KINDS: Kind[] = [
  { name: 'openai', model: 'gpt-e2e', upstream: () => openaiUpstream, expectedText: `Echo: ${PROMPT}` },
  { name: 'anthropic', model: 'claude-e2e', upstream: () => anthropicUpstream, expectedText: `Echo: ${PROMPT}` },
  { name: 'mock', model: 'mock-chat', upstream: () => undefined, expectedText: undefined },
];

function basicBody(model: string): BaseBody {
  return {
    model,
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: PROMPT },
    ],
  };
}

/** The request id of the latest answer, remembered as one that must have a usage row. */
function generatedId(): string {
  const id = recording.lastRequestId();
  generated.push(id);
  return id;
}

describe.each(KINDS)('chat completions on the $name provider kind', (kind) => {
  const row = (requestId: string, fields: { stream: boolean; inputTokens?: number; outputTokens?: number }) =>
    expectUsageRow(gateway, requestId, { accountId, keyId, model: kind.model, status: 200, errorCode: null, ...fields });

  /** The non-streamed answer to basicBody, the reference for the streamed ones. */
  let reference: OpenAI.ChatCompletion;

  it('create() answers content, usage and finish_reason stop, and writes one usage row with that usage', async () => {
    const { data: completion, request_id: answerRequestId } = await client.chat.completions.create(basicBody(kind.model)).withResponse();
    const requestId = generatedId();
    expect(answerRequestId).toBe(requestId);
    reference = completion;
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices).toHaveLength(1);
    const [choice] = completion.choices;
    expect(choice.index).toBe(0);
    expect(choice.finish_reason).toBe('stop');
    expect(choice.message.role).toBe('assistant');
    expect(typeof choice.message.content).toBe('string');
    expect(choice.message.content!.length).toBeGreaterThan(0);
    if (kind.expectedText !== undefined) expect(choice.message.content).toBe(kind.expectedText);
    if (kind.name !== 'openai') {
      // The gateway wrote this answer itself (the pass-through keeps the provider's id and model).
      expect(completion.id).toMatch(/^chatcmpl-/);
      expect(completion.model).toBe(kind.model);
    }
    const usage = completion.usage!;
    expect(usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage.completion_tokens).toBeGreaterThan(0);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
    await row(requestId, { stream: false, inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens });
  });

  it('create({stream:true}) without include_usage: chunks assemble the same text, no usage chunk, a clean end', async () => {
    const { data: stream, request_id: answerRequestId } = await client.chat.completions
      .create({ ...basicBody(kind.model), stream: true })
      .withResponse();
    const requestId = generatedId();
    expect(answerRequestId).toBe(requestId);
    const { chunks, text, error } = await collectStream(stream);
    expect(error).toBeUndefined();
    expect(text).toBe(reference.choices[0].message.content);
    expect(chunks.length).toBeGreaterThan(2);
    for (const chunk of chunks) {
      expect(chunk.object).toBe('chat.completion.chunk');
      expect(chunk.usage ?? null).toBeNull();
      expect(chunk.id).toBe(chunks[0].id);
    }
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    const finishReasons = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason)).filter((reason) => reason !== null);
    expect(finishReasons).toEqual(['stop']);
    // The gateway still learned the usage (it asks the upstream for it): the row bills the real totals.
    await row(requestId, { stream: true, inputTokens: reference.usage!.prompt_tokens, outputTokens: reference.usage!.completion_tokens });
  });

  it('create({stream:true, stream_options:{include_usage:true}}): one final usage chunk with the totals', async () => {
    const { data: stream, request_id: answerRequestId } = await client.chat.completions
      .create({ ...basicBody(kind.model), stream: true, stream_options: { include_usage: true } })
      .withResponse();
    const requestId = generatedId();
    expect(answerRequestId).toBe(requestId);
    const { chunks, text, error } = await collectStream(stream);
    expect(error).toBeUndefined();
    expect(text).toBe(reference.choices[0].message.content);
    const withUsage = chunks.filter((chunk) => chunk.usage);
    expect(withUsage).toHaveLength(1);
    const last = chunks.at(-1)!;
    expect(last.usage).toBeTruthy();
    expect(last.choices).toEqual([]);
    const usage = last.usage!;
    expect(usage.prompt_tokens).toBe(reference.usage!.prompt_tokens);
    expect(usage.completion_tokens).toBe(reference.usage!.completion_tokens);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
    await row(requestId, { stream: true, inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens });
  });

  it('streams data-only frames that end with data: [DONE]', async () => {
    const answer = await postRawStream(gateway, key, { ...basicBody(kind.model), stream_options: { include_usage: true } });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/event-stream/);
    generated.push(answer.headers.get('x-request-id')!);
    expect(answer.text).not.toMatch(/^event:/m);
    expect(answer.text.endsWith('data: [DONE]\n\n')).toBe(true);
    const payloads = ssePayloads(answer.text);
    expect(payloads.filter((payload) => payload === '[DONE]')).toHaveLength(1);
    const usageChunk = payloads.at(-2) as OpenAI.ChatCompletionChunk;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage?.completion_tokens).toBe(reference.usage!.completion_tokens);
  });

  it("tool_choice 'required' answers a tool call with JSON arguments and finish_reason tool_calls", async () => {
    const { data: completion, request_id: answerRequestId } = await client.chat.completions
      .create({ ...basicBody(kind.model), tools: [WEATHER_TOOL], tool_choice: 'required' })
      .withResponse();
    const requestId = generatedId();
    expect(answerRequestId).toBe(requestId);
    const [choice] = completion.choices;
    expect(choice.finish_reason).toBe('tool_calls');
    const calls = choice.message.tool_calls ?? [];
    expect(calls).toHaveLength(1);
    const call = calls[0];
    expect(call.type).toBe('function');
    if (call.type !== 'function') return;
    expect(call.id).toMatch(/\S/);
    expect(call.function.name).toBe('get_weather');
    const args = JSON.parse(call.function.arguments) as Record<string, unknown>;
    expect(typeof args.city).toBe('string');
    if (kind.name !== 'mock') expect(args).toEqual(TOOL_ARGUMENTS);
    await row(requestId, { stream: false, inputTokens: completion.usage!.prompt_tokens, outputTokens: completion.usage!.completion_tokens });
  });

  it('a named function in tool_choice is the one called', async () => {
    const completion = await client.chat.completions.create({
      ...basicBody(kind.model),
      tools: [WEATHER_TOOL, TIME_TOOL],
      tool_choice: { type: 'function', function: { name: 'get_time' } },
    });
    generatedId();
    const call = completion.choices[0].message.tool_calls?.[0];
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    expect(call?.type === 'function' && call.function.name).toBe('get_time');
    if (call?.type === 'function') expect(JSON.parse(call.function.arguments)).toBeTypeOf('object');
  });

  it('streams tool calls as fragments the SDK assembles (create({stream:true}))', async () => {
    const body: StreamBody = { ...basicBody(kind.model), tools: [WEATHER_TOOL], tool_choice: 'required', stream: true, stream_options: { include_usage: true } };
    const { chunks, error } = await collectStream(await client.chat.completions.create(body));
    const requestId = generatedId();
    expect(error).toBeUndefined();
    const fragments = chunks.flatMap((chunk) => chunk.choices.flatMap((choice) => choice.delta.tool_calls ?? []));
    expect(fragments.length).toBeGreaterThan(1);
    // The first fragment carries id, type and name with empty arguments; later ones only argument pieces.
    expect(fragments[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'get_weather' } });
    expect(fragments[0].id).toMatch(/\S/);
    expect(fragments.every((fragment) => fragment.index === 0)).toBe(true);
    const args = fragments.map((fragment) => fragment.function?.arguments ?? '').join('');
    expect(JSON.parse(args)).toBeTypeOf('object');
    const finish = chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason)).filter(Boolean);
    expect(finish).toEqual(['tool_calls']);
    const usage = chunks.at(-1)!.usage!;
    await row(requestId, { stream: true, inputTokens: usage.prompt_tokens, outputTokens: usage.completion_tokens });
  });

  it("the SDK's chat.completions.stream() helper accepts the stream: finalChatCompletion() has the tool call", async () => {
    const runner = client.chat.completions.stream({ ...basicBody(kind.model), tools: [WEATHER_TOOL], tool_choice: { type: 'function', function: { name: 'get_weather' } } });
    const argumentDeltas: string[] = [];
    runner.on('tool_calls.function.arguments.delta', (event) => argumentDeltas.push(event.arguments_delta));
    const final = await runner.finalChatCompletion();
    generatedId();
    const [choice] = final.choices;
    expect(choice.finish_reason).toBe('tool_calls');
    const call = choice.message.tool_calls?.[0];
    expect(call?.type).toBe('function');
    if (call?.type !== 'function') return;
    expect(call.function.name).toBe('get_weather');
    expect(argumentDeltas.join('')).toBe(call.function.arguments);
    const args = JSON.parse(call.function.arguments) as Record<string, unknown>;
    expect(typeof args.city).toBe('string');
  });

  it("the stream() helper's finalContent() is the text answer", async () => {
    const runner = client.chat.completions.stream(basicBody(kind.model));
    const content = await runner.finalContent();
    generatedId();
    expect(content).toBe(reference.choices[0].message.content);
  });

  it("response_format {type:'json_object'} is carried to the provider", async () => {
    const completion = await client.chat.completions.create({ ...basicBody(kind.model), response_format: { type: 'json_object' } });
    generatedId();
    const content = completion.choices[0].message.content ?? '';
    if (kind.name === 'mock') {
      // The mock answers JSON mode with a JSON object.
      expect(JSON.parse(content)).toBeTypeOf('object');
      expect(Array.isArray(JSON.parse(content))).toBe(false);
    } else if (kind.name === 'openai') {
      expect((openaiUpstream.requests.at(-1)!.body as Record<string, unknown>).response_format).toEqual({ type: 'json_object' });
    } else {
      // Anthropic has no JSON mode: an instruction at the end of the system prompt stands in for it.
      const system = (anthropicUpstream.requests.at(-1)!.body as { system: unknown }).system;
      expect(JSON.stringify(system)).toMatch(/JSON/);
      expect(JSON.stringify(system)).toContain(SYSTEM);
    }
  });
});

describe('what the upstreams received', () => {
  const clientBody = {
    model: 'gpt-e2e',
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris?' }] },
    ],
    temperature: 0.5,
    max_completion_tokens: 64,
    tools: [WEATHER_TOOL],
    tool_choice: 'auto',
    parallel_tool_calls: false,
    metadata: { trace: 'e2e' },
    // Fields the gateway does not model still reach a same-format provider.
    x_vendor_option: { nested: [1, 2, 3] },
  };

  it('the OpenAI upstream got exactly the client body with only the model swapped, and its own key', async () => {
    openaiUpstream.reset();
    await client.chat.completions.create(clientBody as unknown as NonStreamBody);
    generatedId();
    expect(openaiUpstream.requests).toHaveLength(1);
    const [request] = openaiUpstream.requests;
    expect(request.path).toBe('/v1/chat/completions');
    expect(JSON.parse(request.rawBody)).toStrictEqual({ ...clientBody, model: 'gpt-4o-mini' });
    expect(request.headers.authorization).toBe(`Bearer ${OPENAI_SECRET}`);
    expect(JSON.stringify(request.headers)).not.toContain(key);
  });

  it('on a stream, the OpenAI upstream got the same body plus stream_options.include_usage', async () => {
    for (const streamOptions of [undefined, { include_usage: false }, { include_usage: true }]) {
      openaiUpstream.reset();
      const body = { ...clientBody, stream: true, ...(streamOptions ? { stream_options: streamOptions } : {}) };
      const { error } = await collectStream(await client.chat.completions.create(body as unknown as StreamBody));
      generatedId();
      expect(error).toBeUndefined();
      expect(openaiUpstream.requests).toHaveLength(1);
      expect(JSON.parse(openaiUpstream.requests[0].rawBody)).toStrictEqual({
        ...body,
        model: 'gpt-4o-mini',
        stream_options: { include_usage: true },
      });
    }
  });

  it('the Anthropic upstream got a Messages body: system, max_tokens, messages, tools with input_schema, tool_choice', async () => {
    anthropicUpstream.reset();
    const body = {
      model: 'claude-e2e',
      messages: [
        { role: 'system', content: SYSTEM },
        { role: 'user', content: 'What is the weather in Paris?' },
      ],
      temperature: 0.5,
      max_completion_tokens: 64,
      stop: ['\n\nHuman:'],
      tools: [WEATHER_TOOL],
      tool_choice: 'required',
    };
    for (const stream of [false, true]) {
      anthropicUpstream.reset();
      if (stream) await collectStream(await client.chat.completions.create({ ...body, stream } as unknown as StreamBody));
      else await client.chat.completions.create(body as unknown as NonStreamBody);
      generatedId();
      expect(anthropicUpstream.requests).toHaveLength(1);
      const [request] = anthropicUpstream.requests;
      expect(request.path).toBe('/v1/messages');
      expect(request.body).toStrictEqual({
        model: 'claude-sonnet-4-5',
        max_tokens: 64,
        system: SYSTEM,
        messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
        temperature: 0.5,
        stop_sequences: ['\n\nHuman:'],
        tools: [{ name: 'get_weather', description: 'Current weather in a city', input_schema: WEATHER_TOOL.function.parameters }],
        tool_choice: { type: 'any' },
        ...(stream ? { stream: true } : {}),
      });
      expect(request.headers['x-api-key']).toBe(ANTHROPIC_SECRET);
      expect(request.headers['anthropic-version']).toBe('2023-06-01');
      expect(JSON.stringify(request.headers)).not.toContain(key);
    }
  });

  it('a bridged request without max_completion_tokens still sends Anthropic its required max_tokens', async () => {
    anthropicUpstream.reset();
    await client.chat.completions.create(basicBody('claude-e2e'));
    generatedId();
    const sent = anthropicUpstream.requests[0].body as { max_tokens: unknown; system: unknown };
    expect(sent.max_tokens).toBeTypeOf('number');
    expect(sent.max_tokens as number).toBeGreaterThan(0);
    expect(sent.system).toBe(SYSTEM);
  });
});

describe('billing of this file', () => {
  it('wrote exactly one usage row per request, and the balance is the initial credits less their costs', async () => {
    const rows = await expectBalanceSettled(gateway, accountId);
    const ids = await gateway.gateway.services.db.selectFrom('usage').select('request_id').where('account_id', '=', accountId).execute();
    expect(ids.map((item) => item.request_id).sort()).toEqual([...generated].sort());
    expect(rows).toBe(generated.length);
  });
});
