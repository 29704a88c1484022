/**
 * `POST /v1/messages` end to end with the official `@anthropic-ai/sdk`, on
 * each provider kind: an Anthropic-format upstream (same-format pass-through),
 * an OpenAI-format upstream (bridge through the canonical types) and the
 * built-in mock. Plain answers, `messages.stream()` against the non-stream
 * answer, the raw event sequence, tool use over several turns (plain and
 * streamed), what each upstream received, and the usage row every answer
 * leaves behind.
 */
import type Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../support/gateway.js';
import { estimateTokens, type UpstreamServer } from '../upstreams/upstream-server.js';
import { usageRowOf } from '../support/usage.js';
import {
  ANTHROPIC_SECRET,
  KINDS,
  OPENAI_SECRET,
  createClient,
  expectBalanceSettled,
  startMessagesWorld,
  type Kind,
  type MessagesWorld,
  type RecordingClient,
} from './messages-e2e.js';

const PROMPT = 'hello world from the messages suite';
const SYSTEM = 'You are terse.';
const TOOL_ARGUMENTS = { city: 'Paris' };
const MOCK_CLOSING = 'This reply was generated offline by the mock provider.';

const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'Current weather in a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
};
const TIME_TOOL = {
  name: 'get_time',
  description: 'Local time in a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' }, format: { type: 'string', enum: ['12h', '24h'] } }, required: ['city'] },
};

let world: MessagesWorld;
let gateway: TestGateway;
let openaiUpstream: UpstreamServer;
let anthropicUpstream: UpstreamServer;
let accountId: string;
let recording: RecordingClient;
let client: Anthropic;

beforeAll(async () => {
  world = await startMessagesWorld({ openai: { toolArguments: TOOL_ARGUMENTS }, anthropic: { toolArguments: TOOL_ARGUMENTS } });
  ({ gateway, openaiUpstream, anthropicUpstream } = world);
  const account = await gateway.createAccountWithKey();
  accountId = account.accountId;
  recording = createClient(gateway, account.key);
  client = recording.client;
});

afterAll(async () => {
  await world?.close();
});



function textOf(message: Anthropic.Message): string {
  return message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
}

/** The answer each kind gives to a plain prompt. */
function expectAnswerText(kind: Kind, text: string, prompt: string): void {
  if (kind === 'mock') {
    expect(text).toContain(`Mock answer to: "${prompt}"`);
    expect(text.endsWith(MOCK_CLOSING)).toBe(true);
  } else {
    expect(text).toBe(`Echo: ${prompt}`);
  }
}

/** `input` satisfies the tool's schema: required keys present, declared types and enums respected. */
function expectValidInput(input: unknown, schema: { properties: Record<string, { type: string; enum?: string[] }>; required: string[] }): void {
  expect(input).toBeTypeOf('object');
  const record = input as Record<string, unknown>;
  for (const name of schema.required) expect(record, `required "${name}"`).toHaveProperty(name);
  for (const [name, value] of Object.entries(record)) {
    const property = schema.properties[name];
    if (!property) continue;
    expect(typeof value, name).toBe(property.type);
    if (property.enum) expect(property.enum).toContain(value);
  }
}

function toolUseOf(message: Anthropic.Message): Anthropic.ToolUseBlock {
  const block = message.content.find((item): item is Anthropic.ToolUseBlock => item.type === 'tool_use');
  if (!block) throw new Error(`no tool_use block in ${JSON.stringify(message.content)}`);
  return block;
}

async function expectCharged(requestId: string, stream: boolean): Promise<void> {
  const row = await usageRowOf(gateway, requestId);
  expect(row).toMatchObject({ request_id: requestId, account_id: accountId, endpoint: '/v1/messages', status: 200, stream, aborted: false, error_code: null });
  expect(row.input_tokens).toBeGreaterThan(0);
  expect(row.output_tokens).toBeGreaterThan(0);
  expect(Number(row.cost)).toBeGreaterThan(0);
}

describe.each(KINDS)('messages on the $kind provider', ({ kind, model, upstreamModel }) => {
  const params: Anthropic.MessageCreateParamsNonStreaming = {
    model,
    max_tokens: 256,
    system: SYSTEM,
    messages: [{ role: 'user', content: PROMPT }],
  };

  it('messages.create answers with text, end_turn and usage', async () => {
    const { result: message, requests } = await world.requestsDuring(kind, () => client.messages.create(params));
    expect(message.type).toBe('message');
    expect(message.role).toBe('assistant');
    expect(message.id).toMatch(/^msg_/);
    expect(message.content).toHaveLength(1);
    expect(message.content[0]!.type).toBe('text');
    expectAnswerText(kind, textOf(message), PROMPT);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.stop_sequence).toBeNull();
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    const requestId = recording.lastRequestId();
    expect(message._request_id).toBe(requestId);

    if (kind === 'anthropic') {
      // Pass-through: the client's body with only the model swapped, and the provider's own answer.
      expect(requests).toHaveLength(1);
      const upstream = requests[0]!;
      expect(upstream.path).toBe('/v1/messages');
      expect(upstream.body).toEqual({ ...(recording.sent.at(-1)!.body as object), model: upstreamModel });
      // The SDK's own anthropic-version (1.12 sends a 2026 date), forwarded as sent.
      const sentVersion = recording.sent.at(-1)!.headers.get('anthropic-version');
      expect(sentVersion).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      expect(upstream.headers['anthropic-version']).toBe(sentVersion);
      expect(upstream.headers['x-api-key']).toBe(ANTHROPIC_SECRET);
      expect(upstream.headers.authorization).toBeUndefined();
      expect(message.usage.input_tokens).toBe(estimateTokens(SYSTEM + PROMPT));
      expect(message.usage.output_tokens).toBe(estimateTokens(`Echo: ${PROMPT}`));
      expect(message.model).toBe(upstreamModel);
    } else if (kind === 'openai') {
      // Bridge: a chat completions body.
      expect(requests).toHaveLength(1);
      const upstream = requests[0]!;
      expect(upstream.path).toBe('/v1/chat/completions');
      expect(upstream.headers.authorization).toBe(`Bearer ${OPENAI_SECRET}`);
      const body = upstream.body as Record<string, unknown>;
      expect(body.model).toBe(upstreamModel);
      expect(body.messages).toEqual([
        { role: 'system', content: SYSTEM },
        { role: 'user', content: PROMPT },
      ]);
      expect(body.max_completion_tokens ?? body.max_tokens).toBe(256);
      expect(message.usage.output_tokens).toBe(estimateTokens(`Echo: ${PROMPT}`));
      expect(message.model).toBe(model);
    } else {
      expect(message.model).toBe(model);
    }
    const row = await usageRowOf(gateway, requestId);
    expect(row.input_tokens).toBe(message.usage.input_tokens);
    expect(row.output_tokens).toBe(message.usage.output_tokens);
    await expectCharged(requestId, false);
  });

  it('messages.stream() ends with the message the non-stream call gives', async () => {
    const plain = await client.messages.create(params);
    const stream = client.messages.stream(params);
    const texts: string[] = [];
    stream.on('text', (text) => texts.push(text));
    const final = await stream.finalMessage();
    expect(final.content).toEqual(plain.content);
    expect(final.stop_reason).toBe(plain.stop_reason);
    expect(final.stop_sequence).toBe(plain.stop_sequence);
    expect(final.usage.output_tokens).toBe(plain.usage.output_tokens);
    expect(final.usage.input_tokens).toBe(plain.usage.input_tokens);
    expect(texts.join('')).toBe(textOf(plain));
    expect(texts.length).toBeGreaterThan(1);
    await expectCharged(recording.lastRequestId(), true);
    if (kind === 'anthropic') {
      const upstream = anthropicUpstream.requests.at(-1)!;
      expect(upstream.body).toEqual({ ...(recording.sent.at(-1)!.body as object), model: upstreamModel });
      expect((upstream.body as { stream?: boolean }).stream).toBe(true);
    }
  });

  it('a stream read with `stream: true` has the Anthropic event sequence', async () => {
    const stream = await client.messages.create({ ...params, stream: true });
    const events: Anthropic.RawMessageStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const types = events.map((event) => event.type);

    expect(types[0]).toBe('message_start');
    expect(types.at(-2)).toBe('message_delta');
    expect(types.at(-1)).toBe('message_stop');
    const blocks = types.slice(1, -2);
    expect(blocks[0]).toBe('content_block_start');
    expect(blocks.at(-1)).toBe('content_block_stop');
    expect(blocks.slice(1, -1).every((type) => type === 'content_block_delta')).toBe(true);
    expect(blocks.length).toBeGreaterThan(3);

    const start = events[0] as Anthropic.RawMessageStartEvent;
    expect(start.message.id).toMatch(/^msg_/);
    expect(start.message.role).toBe('assistant');
    expect(start.message.content).toEqual([]);
    expect(start.message.usage.input_tokens).toBeGreaterThan(0);

    const text = events
      .filter((event): event is Anthropic.RawContentBlockDeltaEvent => event.type === 'content_block_delta')
      .map((event) => {
        expect(event.index).toBe(0);
        return event.delta.type === 'text_delta' ? event.delta.text : '';
      })
      .join('');
    expectAnswerText(kind, text, PROMPT);

    const delta = events.at(-2) as Anthropic.RawMessageDeltaEvent;
    expect(delta.delta.stop_reason).toBe('end_turn');
    expect(delta.usage.output_tokens).toBeGreaterThan(0);
    await expectCharged(recording.lastRequestId(), true);
  });

  it('ends on a stop sequence or on max_tokens with the matching stop_reason', async () => {
    const stop = kind === 'mock' ? 'This reply' : 'world';
    const stopped = await client.messages.create({ ...params, stop_sequences: ['never-in-the-answer', stop] });
    expect(textOf(stopped)).not.toContain(stop);
    expect(textOf(stopped).length).toBeGreaterThan(0);
    // Chat completions says `stop` for both a natural end and a stop sequence, without naming it,
    // so the bridge can only answer end_turn (PROTOCOLS.md §7).
    const expectedStop = kind === 'openai' ? { stop_reason: 'end_turn', stop_sequence: null } : { stop_reason: 'stop_sequence', stop_sequence: stop };
    expect(stopped).toMatchObject(expectedStop);
    if (kind === 'openai') expect((openaiUpstream.requests.at(-1)!.body as { stop?: unknown }).stop).toEqual(['never-in-the-answer', stop]);
    const streamed = await client.messages.stream({ ...params, stop_sequences: [stop] }).finalMessage();
    expect(streamed).toMatchObject(expectedStop);
    expect(streamed.content).toEqual(stopped.content);

    const cut = await client.messages.create({ ...params, max_tokens: 3 });
    expect(cut.stop_reason).toBe('max_tokens');
    expect(cut.usage.output_tokens).toBeLessThanOrEqual(3);
    const cutStream = await client.messages.stream({ ...params, max_tokens: 3 }).finalMessage();
    expect(cutStream.stop_reason).toBe('max_tokens');
    expect(cutStream.content).toEqual(cut.content);
  });

  it('uses tools over several turns, and answers the tool result in text', async () => {
    const tools = [WEATHER_TOOL, TIME_TOOL];
    const question = 'What is the weather in Paris?';
    const first = await client.messages.create({
      model,
      max_tokens: 512,
      tools,
      tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: question }],
    });
    expect(first.stop_reason).toBe('tool_use');
    const call = toolUseOf(first);
    expect(call.name).toBe('get_weather');
    expect(call.id).toMatch(/\S/);
    expectValidInput(call.input, WEATHER_TOOL.input_schema);
    if (kind !== 'mock') expect(call.input).toEqual(TOOL_ARGUMENTS);

    const history: Anthropic.MessageParam[] = [
      { role: 'user', content: question },
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Sunny and 21 degrees' }] },
    ];
    const { result: second, requests } = await world.requestsDuring(kind, () =>
      client.messages.create({ model, max_tokens: 512, tools, messages: history }),
    );
    expect(second.stop_reason).toBe('end_turn');
    expect(textOf(second)).toContain('Sunny and 21 degrees');
    if (kind === 'openai') {
      // The bridge turns tool_use into tool_calls and tool_result into a tool message.
      const body = requests[0]!.body as { messages: Record<string, unknown>[]; tools: unknown[] };
      expect(body.tools).toHaveLength(2);
      expect(body.messages).toEqual([
        { role: 'user', content: question },
        expect.objectContaining({
          role: 'assistant',
          tool_calls: [{ id: call.id, type: 'function', function: { name: 'get_weather', arguments: JSON.stringify(call.input) } }],
        }),
        { role: 'tool', tool_call_id: call.id, content: 'Sunny and 21 degrees' },
      ]);
    }

    // A third turn on the whole history, forcing the other tool by name.
    const third = await client.messages.create({
      model,
      max_tokens: 512,
      tools,
      tool_choice: { type: 'tool', name: 'get_time' },
      messages: [...history, { role: 'assistant', content: second.content }, { role: 'user', content: 'And what time is it there?' }],
    });
    expect(third.stop_reason).toBe('tool_use');
    const timeCall = toolUseOf(third);
    expect(timeCall.name).toBe('get_time');
    expect(timeCall.id).not.toBe(call.id);
    expectValidInput(timeCall.input, TIME_TOOL.input_schema);
  });

  it('streams tool use: input_json_delta pieces assemble into the input', async () => {
    const stream = client.messages.stream({
      model,
      max_tokens: 512,
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: 'Weather in Paris, please.' }],
    });
    const events: Anthropic.MessageStreamEvent[] = [];
    stream.on('streamEvent', (event) => events.push(event));
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    const call = toolUseOf(final);
    expect(call.name).toBe('get_weather');
    expectValidInput(call.input, WEATHER_TOOL.input_schema);
    if (kind !== 'mock') expect(call.input).toEqual(TOOL_ARGUMENTS);

    const toolIndex = final.content.indexOf(call);
    const start = events.find((event): event is Anthropic.RawContentBlockStartEvent => event.type === 'content_block_start' && event.index === toolIndex);
    expect(start?.content_block).toMatchObject({ type: 'tool_use', id: call.id, name: 'get_weather', input: {} });
    const pieces = events
      .filter((event): event is Anthropic.RawContentBlockDeltaEvent => event.type === 'content_block_delta' && event.index === toolIndex)
      .map((event) => (event.delta.type === 'input_json_delta' ? event.delta.partial_json : ''));
    expect(pieces.filter((piece) => piece !== '').length).toBeGreaterThan(1);
    expect(JSON.parse(pieces.join(''))).toEqual(call.input);

    // Then the result goes back and the stream answers in text.
    const answer = await client.messages
      .stream({
        model,
        max_tokens: 512,
        tools: [WEATHER_TOOL],
        messages: [
          { role: 'user', content: 'Weather in Paris, please.' },
          { role: 'assistant', content: final.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: [{ type: 'text', text: 'Rain, 12 degrees' }] }] },
        ],
      })
      .finalMessage();
    expect(answer.stop_reason).toBe('end_turn');
    expect(textOf(answer)).toContain('Rain, 12 degrees');
  });
});

describe('the mock provider', () => {
  it('calls a tool the user names when tool_choice is auto, then answers its result', async () => {
    const question = 'Please use get_weather for Paris.';
    const first = await client.messages.create({ model: 'mock-chat', max_tokens: 512, tools: [WEATHER_TOOL, TIME_TOOL], messages: [{ role: 'user', content: question }] });
    expect(first.stop_reason).toBe('tool_use');
    const call = toolUseOf(first);
    expect(call.name).toBe('get_weather');
    expectValidInput(call.input, WEATHER_TOOL.input_schema);
    const second = await client.messages.create({
      model: 'mock-chat',
      max_tokens: 512,
      tools: [WEATHER_TOOL, TIME_TOOL],
      messages: [
        { role: 'user', content: question },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'Cloudy', is_error: false }] },
      ],
    });
    expect(second.stop_reason).toBe('end_turn');
    expect(textOf(second)).toContain('The get_weather tool returned: "Cloudy"');
  });

  it('calls two mentioned tools in one turn, the same streamed, and takes both results back', async () => {
    const question = 'Use get_weather and get_time for Rome.';
    const request = { model: 'mock-chat', max_tokens: 512, tools: [WEATHER_TOOL, TIME_TOOL], messages: [{ role: 'user' as const, content: question }] };
    const plain = await client.messages.create(request);
    expect(plain.stop_reason).toBe('tool_use');
    const calls = plain.content.filter((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');
    expect(calls.map((call) => call.name)).toEqual(['get_weather', 'get_time']);
    expectValidInput(calls[0]!.input, WEATHER_TOOL.input_schema);
    expectValidInput(calls[1]!.input, TIME_TOOL.input_schema);
    const streamed = await client.messages.stream(request).finalMessage();
    expect(streamed.content.map((block) => (block.type === 'tool_use' ? [block.name, block.input] : block.type))).toEqual(
      plain.content.map((block) => (block.type === 'tool_use' ? [block.name, block.input] : block.type)),
    );
    const answer = await client.messages.create({
      ...request,
      messages: [
        ...request.messages,
        { role: 'assistant', content: plain.content },
        {
          role: 'user',
          content: calls.map((call, i) => ({ type: 'tool_result' as const, tool_use_id: call.id, content: i === 0 ? 'Sunny' : '14:05' })),
        },
      ],
    });
    expect(answer.stop_reason).toBe('end_turn');
    expect(textOf(answer)).toContain('The get_weather tool returned: "Sunny"');
    expect(textOf(answer)).toContain('The get_time tool returned: "14:05"');
  });
});

describe('the OpenAI-format bridge', () => {
  it('turns interleaved parallel tool calls into one tool_use block after the other', async () => {
    const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage: unknown = null): string =>
      `data: ${JSON.stringify({ id: 'chatcmpl-p', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: delta ? [{ index: 0, delta, logprobs: null, finish_reason: finish }] : [], usage })}\n\n`;
    const call = (index: number, fields: Record<string, unknown>): Record<string, unknown> => ({ tool_calls: [{ index, ...fields }] });
    openaiUpstream.script({
      kind: 'sse',
      frames: [
        chunk({ role: 'assistant', content: null }),
        chunk(call(0, { id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } })),
        chunk(call(1, { id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '' } })),
        chunk(call(0, { function: { arguments: '{"city":' } })),
        chunk(call(1, { function: { arguments: '{"city":"Rome"' } })),
        chunk(call(0, { function: { arguments: '"Paris"}' } })),
        chunk(call(1, { function: { arguments: '}' } })),
        chunk({}, 'tool_calls'),
        `data: ${JSON.stringify({ id: 'chatcmpl-p', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o-mini', choices: [], usage: { prompt_tokens: 30, completion_tokens: 12, total_tokens: 42 } })}\n\n`,
        'data: [DONE]\n\n',
      ],
    });
    const stream = client.messages.stream({ model: 'gpt-msg', max_tokens: 256, tools: [WEATHER_TOOL, TIME_TOOL], messages: [{ role: 'user', content: 'Weather in Paris, time in Rome.' }] });
    const events: Anthropic.MessageStreamEvent[] = [];
    stream.on('streamEvent', (event) => events.push(event));
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content).toEqual([
      { type: 'tool_use', id: 'call_a', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_b', name: 'get_time', input: { city: 'Rome' } },
    ]);
    expect(final.usage).toMatchObject({ input_tokens: 30, output_tokens: 12 });
    // Blocks never overlap: each one closes before the next opens.
    const boundaries = events
      .filter((event) => event.type === 'content_block_start' || event.type === 'content_block_stop')
      .map((event) => `${event.type}:${(event as Anthropic.RawContentBlockStopEvent).index}`);
    expect(boundaries).toEqual([
      'content_block_start:0',
      'content_block_stop:0',
      'content_block_start:1',
      'content_block_stop:1',
    ]);
  });
});

describe('pass-through to the Anthropic upstream', () => {
  it('forwards anthropic-beta, anthropic-version and ?beta=true of client.beta.messages.create', async () => {
    const before = anthropicUpstream.requests.length;
    // SDK 1.12 no longer appends `?beta=true` itself (older ones did); ask for it explicitly.
    const message = await client.beta.messages.create(
      {
        model: 'claude-msg',
        max_tokens: 64,
        betas: ['context-management-2025-06-27', 'interleaved-thinking-2025-05-14'],
        messages: [{ role: 'user', content: PROMPT }],
      },
      { query: { beta: 'true' } },
    );
    expect(message.content).toEqual([{ type: 'text', text: `Echo: ${PROMPT}` }]);
    const sent = recording.sent.at(-1)!;
    expect(new URL(sent.url).search).toBe('?beta=true');
    const upstream = anthropicUpstream.requests.slice(before);
    expect(upstream).toHaveLength(1);
    expect(upstream[0]!.path).toBe('/v1/messages');
    expect(upstream[0]!.query).toEqual({ beta: 'true' });
    expect(upstream[0]!.headers['anthropic-beta']).toBe('context-management-2025-06-27,interleaved-thinking-2025-05-14');
    expect(upstream[0]!.headers['anthropic-beta']).toBe(sent.headers.get('anthropic-beta'));
    expect(upstream[0]!.headers['anthropic-version']).toBe(sent.headers.get('anthropic-version'));
    expect(upstream[0]!.body).toEqual({ ...(sent.body as object), model: 'claude-sonnet-4-5' });
  });

  it('forwards the beta headers and query of a streamed beta request too', async () => {
    const before = anthropicUpstream.requests.length;
    const stream = client.beta.messages.stream(
      { model: 'claude-msg', max_tokens: 64, betas: ['fine-grained-tool-streaming-2025-05-14'], messages: [{ role: 'user', content: PROMPT }] },
      { query: { beta: 'true' } },
    );
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: `Echo: ${PROMPT}` }]);
    const upstream = anthropicUpstream.requests.slice(before);
    expect(upstream).toHaveLength(1);
    expect(upstream[0]!.query).toEqual({ beta: 'true' });
    expect(upstream[0]!.headers['anthropic-beta']).toBe('fine-grained-tool-streaming-2025-05-14');
    expect(upstream[0]!.body).toEqual({ ...(recording.sent.at(-1)!.body as object), model: 'claude-sonnet-4-5' });
  });

});

describe('authentication', () => {
  it('accepts the key as x-api-key as well as Authorization: Bearer', async () => {
    const account = await gateway.createAccountWithKey();
    const viaHeader = createClient(gateway, account.key, { auth: 'x-api-key' });
    const message = await viaHeader.client.messages.create({ model: 'mock-chat', max_tokens: 64, messages: [{ role: 'user', content: PROMPT }] });
    expect(viaHeader.sent.at(-1)!.headers.get('x-api-key')).toBe(account.key);
    expect(viaHeader.sent.at(-1)!.headers.get('authorization')).toBeNull();
    expect(message.stop_reason).toBe('end_turn');
    const viaBearer = createClient(gateway, account.key);
    await viaBearer.client.messages.create({ model: 'mock-chat', max_tokens: 64, messages: [{ role: 'user', content: PROMPT }] });
    expect(viaBearer.sent.at(-1)!.headers.get('authorization')).toBe(`Bearer ${account.key}`);
  });
});

describe('billing', () => {
  it('leaves no hold and charges exactly the usage rows', async () => {
    await expectBalanceSettled(gateway, accountId);
  });
});
