/**
 * The upstream test servers, exercised over real HTTP with plain fetch: default
 * framing, every script step, request recording and abort detection, plus a
 * check that the official SDKs accept the default answers.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SseParser, type SseEvent } from '../../server/sse/sse-parser.js';
import { startAnthropicUpstream } from './anthropic-upstream.js';
import { startOpenAIUpstream } from './openai-upstream.js';
import { estimateTokens, type ScriptStep, type UpstreamServer } from './upstream-server.js';

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

const OPENAI_KEY = 'sk-test-openai';
const ANTHROPIC_KEY = 'sk-ant-test';

interface SseResult {
  raw: string;
  events: SseEvent[];
  /** The error reading the body ended with, if any. */
  error: unknown;
}

/** Reads a whole SSE body through the project's parser, keeping what arrived before a failure. */
async function readSse(response: Response): Promise<SseResult> {
  const parser = new SseParser();
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  let raw = '';
  let error: unknown;
  const reader = response.body!.getReader();
  try {
    while (true) {
      const { done, value } = await reader.read();
      if (done) break;
      raw += decoder.decode(value, { stream: true });
      events.push(...parser.push(value));
    }
    events.push(...parser.end());
  } catch (caught) {
    error = caught;
  }
  return { raw, events, error };
}

/** Reads frames until `count` events arrived, returning the reader so the caller can continue or abort. */
async function readEvents(response: Response, count: number): Promise<{ events: SseEvent[]; reader: ReadableStreamDefaultReader<Uint8Array> }> {
  const parser = new SseParser();
  const events: SseEvent[] = [];
  const reader = response.body!.getReader();
  while (events.length < count) {
    const { done, value } = await reader.read();
    if (done) break;
    events.push(...parser.push(value));
  }
  return { events, reader };
}

/** Loosely typed JSON, so tests can walk into answers without casts. */
type Loose = { [key: string]: Loose };

async function readJson(response: Response): Promise<Loose> {
  return (await response.json()) as Loose;
}

function json(event: SseEvent): Record<string, unknown> {
  return JSON.parse(event.data) as Record<string, unknown>;
}

interface Target {
  name: string;
  start: () => Promise<UpstreamServer>;
  path: string;
  headers: Record<string, string>;
  body: (stream: boolean) => Record<string, unknown>;
  /** True when the stream carries its provider's normal ending. */
  isComplete: (events: SseEvent[]) => boolean;
  /** The message of a non-2xx body in the provider's error shape. */
  errorMessage: (body: unknown) => string;
  /** The message of an in-band error event, or undefined for any other event. */
  inBandError: (event: SseEvent) => string | undefined;
}

const openAITarget: Target = {
  name: 'openai',
  start: () => startOpenAIUpstream({ expectedApiKey: OPENAI_KEY }),
  path: '/chat/completions',
  headers: { authorization: `Bearer ${OPENAI_KEY}`, 'content-type': 'application/json' },
  body: (stream) => ({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hello world' }], stream }),
  isComplete: (events) => events.at(-1)?.data === '[DONE]',
  errorMessage: (body) => (body as { error: { message: string } }).error.message,
  inBandError: (event) => {
    if (event.data === '[DONE]') return undefined;
    const data = json(event) as { error?: { message: string } };
    return data.error?.message;
  },
};

const anthropicTarget: Target = {
  name: 'anthropic',
  start: () => startAnthropicUpstream({ expectedApiKey: ANTHROPIC_KEY }),
  path: '/messages',
  headers: { 'x-api-key': ANTHROPIC_KEY, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
  body: (stream) => ({ model: 'claude-sonnet-4-5', max_tokens: 256, messages: [{ role: 'user', content: 'hello world' }], stream }),
  isComplete: (events) => events.at(-1)?.event === 'message_stop',
  errorMessage: (body) => (body as { type: string; error: { message: string } }).error.message,
  inBandError: (event) => (event.event === 'error' ? (json(event) as { error: { message: string } }).error.message : undefined),
};

function post(server: UpstreamServer, target: Target, stream: boolean, init: { signal?: AbortSignal; path?: string } = {}): Promise<Response> {
  return fetch(`${server.url}${init.path ?? target.path}`, {
    method: 'POST',
    headers: target.headers,
    body: JSON.stringify(target.body(stream)),
    signal: init.signal,
  });
}

// ---------------------------------------------------------------------------
// OpenAI defaults
// ---------------------------------------------------------------------------

describe('OpenAI upstream defaults', () => {
  let server: UpstreamServer;
  beforeAll(async () => {
    server = await startOpenAIUpstream({ expectedApiKey: OPENAI_KEY });
  });
  afterEach(() => server.reset());
  afterAll(() => server.close());

  const chat = (body: Record<string, unknown>): Promise<Response> =>
    fetch(`${server.url}/chat/completions`, { method: 'POST', headers: openAITarget.headers, body: JSON.stringify(body) });

  it('answers a chat completion with an echo and estimated usage', async () => {
    const messages = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: [{ type: 'text', text: 'hello' }, { type: 'text', text: 'there' }] },
    ];
    const response = await chat({ model: 'gpt-4o', messages });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(response.headers.get('x-request-id')).toBe('req_1');
    // String values of the messages, `role` and `type` skipped.
    const prompt = estimateTokens('Be brief.hellothere');
    expect(await readJson(response)).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'gpt-4o',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Echo: hello there', refusal: null }, logprobs: null, finish_reason: 'stop' }],
      usage: {
        prompt_tokens: prompt,
        completion_tokens: estimateTokens('Echo: hello there'),
        total_tokens: prompt + estimateTokens('Echo: hello there'),
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    });
  });

  it('streams exactly the chat frames of PROTOCOLS.md §2 with include_usage', async () => {
    const response = await chat({
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'stream me' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const { raw, events, error } = await readSse(response);
    expect(error).toBeUndefined();
    // Data-only frames, each terminated by a blank line.
    expect(raw).not.toMatch(/^event:/m);
    expect(raw.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(events.every((event) => event.event === undefined)).toBe(true);

    const chunks = events.slice(0, -1).map(json);
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.created === 1_700_000_000 && chunk.model === 'gpt-4o-mini')).toBe(true);
    expect(chunks[0].choices).toEqual([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }]);
    const contentChunks = chunks.slice(1, -2);
    expect(contentChunks.length).toBeGreaterThan(1);
    const text = contentChunks.map((chunk) => (chunk.choices as [{ delta: { content: string } }])[0].delta.content).join('');
    expect(text).toBe('Echo: stream me');
    expect(chunks.at(-2)!.choices).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]);
    // Every chunk carries usage:null except the final choices:[] one.
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
    const usageChunk = chunks.at(-1)!;
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toMatchObject({ completion_tokens: estimateTokens(text) });
  });

  it('omits usage from chunks without include_usage', async () => {
    const { events } = await readSse(await chat({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], stream: true }));
    const chunks = events.slice(0, -1).map(json);
    expect(chunks.every((chunk) => !('usage' in chunk))).toBe(true);
    expect((chunks.at(-1)!.choices as [{ finish_reason: string }])[0].finish_reason).toBe('stop');
  });

  it('answers with a tool call when tool_choice is required, streaming the arguments in pieces', async () => {
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object' } } }];
    const messages = [{ role: 'user', content: 'Paris' }];
    const plain = await readJson(await chat({ model: 'gpt-4o', messages, tools, tool_choice: 'required' }));
    expect(plain.choices[0]).toEqual({
      index: 0,
      logprobs: null,
      finish_reason: 'tool_calls',
      message: {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"input":"Paris"}' } }],
      },
    });

    const { events } = await readSse(await chat({ model: 'gpt-4o', messages, tools, tool_choice: 'required', stream: true }));
    const deltas = events.slice(0, -1).map((event) => (json(event).choices as [{ delta: { tool_calls?: unknown[] }; finish_reason: string | null }])[0]);
    const toolDeltas = deltas.filter((choice) => choice.delta.tool_calls).map((choice) => choice.delta.tool_calls![0] as Record<string, unknown>);
    expect(toolDeltas[0]).toEqual({ index: 0, id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(toolDeltas.length).toBeGreaterThan(3);
    const args = toolDeltas.map((delta) => (delta.function as { arguments: string }).arguments).join('');
    expect(JSON.parse(args)).toEqual({ input: 'Paris' });
    expect(deltas.at(-1)!.finish_reason).toBe('tool_calls');
  });

  it('calls the function named by tool_choice and answers text with auto', async () => {
    const tools = [
      { type: 'function', function: { name: 'first' } },
      { type: 'function', function: { name: 'second' } },
    ];
    const named = await readJson(
      await chat({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], tools, tool_choice: { type: 'function', function: { name: 'second' } } })
    );
    expect(named.choices[0].message.tool_calls[0].function.name).toBe('second');
    const auto = await readJson(await chat({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], tools, tool_choice: 'auto' }));
    expect(auto.choices[0].message.content).toBe('Echo: x');
  });

  it('echoes a tool result, honours stop and truncates to max_completion_tokens', async () => {
    const afterTool = await readJson(
      await chat({ model: 'gpt-4o', messages: [{ role: 'user', content: 'q' }, { role: 'tool', tool_call_id: 'call_1', content: '22C' }] })
    );
    expect(afterTool.choices[0].message.content).toBe('Echo: 22C');
    const stopped = await readJson(await chat({ model: 'gpt-4o', messages: [{ role: 'user', content: 'one STOP two' }], stop: ['STOP'] }));
    expect(stopped.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'Echo: one ' } });
    const truncated = await readJson(
      await chat({ model: 'gpt-4o', messages: [{ role: 'user', content: 'a rather long sentence' }], max_completion_tokens: 2 })
    );
    expect(truncated.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'Echo: a ' } });
    expect(truncated.usage.completion_tokens).toBe(2);
  });

  it('answers the Responses API as JSON and as named-event SSE', async () => {
    const responses = (body: Record<string, unknown>): Promise<Response> =>
      fetch(`${server.url}/responses`, { method: 'POST', headers: openAITarget.headers, body: JSON.stringify(body) });
    const plain = await readJson(await responses({ model: 'gpt-4o', input: 'hi there', instructions: 'Be kind.' }));
    expect(plain).toMatchObject({
      id: 'resp_1',
      object: 'response',
      status: 'completed',
      model: 'gpt-4o',
      instructions: 'Be kind.',
      output: [{ type: 'message', id: 'msg_1', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'Echo: hi there' }] }],
      usage: { input_tokens: estimateTokens('Be kind.hi there'), output_tokens: estimateTokens('Echo: hi there') },
    });

    const { raw, events } = await readSse(await responses({ model: 'gpt-4o', input: [{ role: 'user', content: 'streamed' }], stream: true }));
    expect(raw).not.toContain('[DONE]');
    const payloads = events.map(json);
    events.forEach((event, index) => {
      expect(payloads[index].type).toBe(event.event);
      expect(payloads[index].sequence_number).toBe(index);
    });
    const names = events.map((event) => event.event);
    expect(names.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(names.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    const text = payloads.filter((payload) => payload.type === 'response.output_text.delta').map((payload) => payload.delta).join('');
    expect(text).toBe('Echo: streamed');
    expect((payloads.at(-1)!.response as { status: string }).status).toBe('completed');

    const call = await readSse(
      await responses({ model: 'gpt-4o', input: 'Rome', tools: [{ type: 'function', name: 'lookup' }], tool_choice: 'required', stream: true }),
    );
    const callPayloads = call.events.map(json);
    expect(callPayloads[2]).toMatchObject({ type: 'response.output_item.added', item: { type: 'function_call', name: 'lookup', arguments: '' } });
    const args = callPayloads.filter((payload) => payload.type === 'response.function_call_arguments.delta').map((payload) => payload.delta).join('');
    expect(JSON.parse(args)).toEqual({ input: 'Rome' });
    expect(callPayloads.at(-1)).toMatchObject({ type: 'response.completed', response: { output: [{ type: 'function_call', call_id: 'call_3' }] } });
  });

  it('lists models and answers 401, 400 and 404 in the OpenAI error shape', async () => {
    const models = await fetch(`${server.url}/models`, { headers: openAITarget.headers });
    expect(await readJson(models)).toMatchObject({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }, { id: 'gpt-4o' }] });

    const unauthorized = await fetch(`${server.url}/models`, { headers: { authorization: 'Bearer wrong' } });
    expect(unauthorized.status).toBe(401);
    const unauthorizedBody = await readJson(unauthorized);
    expect(unauthorizedBody.error).toMatchObject({ type: 'invalid_request_error', code: 'invalid_api_key', param: null });
    expect(JSON.stringify(unauthorizedBody)).not.toContain('wrong');

    const invalid = await chat({ messages: [{ role: 'user', content: 'x' }] });
    expect(invalid.status).toBe(400);
    expect((await readJson(invalid)).error).toEqual({ message: 'you must provide a model parameter', type: 'invalid_request_error', param: 'model', code: null });

    const missing = await fetch(`${server.url}/nothing-here`, { headers: openAITarget.headers });
    expect(missing.status).toBe(404);
    expect((await readJson(missing)).error.type).toBe('invalid_request_error');
  });
});

// ---------------------------------------------------------------------------
// Anthropic defaults
// ---------------------------------------------------------------------------

describe('Anthropic upstream defaults', () => {
  let server: UpstreamServer;
  beforeAll(async () => {
    server = await startAnthropicUpstream({ expectedApiKey: ANTHROPIC_KEY });
  });
  afterEach(() => server.reset());
  afterAll(() => server.close());

  const messages = (body: Record<string, unknown>, path = '/messages'): Promise<Response> =>
    fetch(`${server.url}${path}`, { method: 'POST', headers: anthropicTarget.headers, body: JSON.stringify(body) });

  it('answers a message with an echo and usage', async () => {
    const response = await messages({ model: 'claude-sonnet-4-5', max_tokens: 100, system: 'Sys.', messages: [{ role: 'user', content: 'hello' }] });
    expect(response.status).toBe(200);
    expect(response.headers.get('request-id')).toBe('req_1');
    expect(await readJson(response)).toEqual({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [{ type: 'text', text: 'Echo: hello' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: estimateTokens('Sys.hello'),
        output_tokens: estimateTokens('Echo: hello'),
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    });
  });

  it('streams named events in the order of PROTOCOLS.md §3', async () => {
    const body = { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: [{ type: 'text', text: 'stream me' }] }], stream: true };
    const response = await messages(body);
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const { raw, events, error } = await readSse(response);
    expect(error).toBeUndefined();
    expect(raw).not.toContain('[DONE]');
    // Every frame is `event:` + `data:` with data.type equal to the event name.
    expect(raw.split('\n\n').filter(Boolean).every((frame) => /^event: [a-z_]+\ndata: \{.*\}$/.test(frame))).toBe(true);
    const payloads = events.map(json);
    events.forEach((event, index) => expect(payloads[index].type).toBe(event.event));
    const names = events.map((event) => event.event);
    expect(names.slice(0, 3)).toEqual(['message_start', 'content_block_start', 'ping']);
    expect(names.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(payloads[0].message).toMatchObject({ id: 'msg_1', content: [], stop_reason: null, usage: { input_tokens: estimateTokens('stream me'), output_tokens: 1 } });
    const text = payloads.filter((payload) => payload.type === 'content_block_delta').map((payload) => (payload.delta as { text: string }).text).join('');
    expect(text).toBe('Echo: stream me');
    expect(payloads.at(-2)).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: estimateTokens(text) },
    });
  });

  it('answers tool_use for tool_choice any and tool, streaming input_json_delta pieces', async () => {
    const tools = [{ name: 'get_weather', input_schema: { type: 'object' } }, { name: 'get_time', input_schema: { type: 'object' } }];
    const base = { model: 'claude-sonnet-4-5', max_tokens: 100, messages: [{ role: 'user', content: 'Paris' }], tools };
    const forced = await readJson(await messages({ ...base, tool_choice: { type: 'tool', name: 'get_time' } }));
    expect(forced).toMatchObject({ stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_time', input: { input: 'Paris' } }] });
    const auto = await readJson(await messages({ ...base, tool_choice: { type: 'auto' } }));
    expect(auto.content).toEqual([{ type: 'text', text: 'Echo: Paris' }]);

    const { events } = await readSse(await messages({ ...base, tool_choice: { type: 'any' }, stream: true }));
    const payloads = events.map(json);
    expect(payloads[1]).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'tool_use', id: 'toolu_3', name: 'get_weather', input: {} } });
    const pieces = payloads.filter((payload) => payload.type === 'content_block_delta').map((payload) => (payload.delta as { partial_json: string }).partial_json);
    expect(pieces[0]).toBe('');
    expect(pieces.length).toBeGreaterThan(3);
    expect(JSON.parse(pieces.join(''))).toEqual({ input: 'Paris' });
    expect(payloads.at(-2)).toMatchObject({ delta: { stop_reason: 'tool_use' } });
  });

  it('echoes tool results, honours stop_sequences and max_tokens', async () => {
    const afterTool = await readJson(
      await messages({
        model: 'm',
        max_tokens: 100,
        messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '22C' }] }] }],
      })
    );
    expect(afterTool.content[0].text).toBe('Echo: 22C');
    const stopped = await readJson(await messages({ model: 'm', max_tokens: 100, stop_sequences: ['END'], messages: [{ role: 'user', content: 'a END b' }] }));
    expect(stopped).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'END', content: [{ text: 'Echo: a ' }] });
    const truncated = await readJson(await messages({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'long text' }] }));
    expect(truncated).toMatchObject({ stop_reason: 'max_tokens', content: [{ text: 'Echo' }], usage: { output_tokens: 1 } });
  });

  it('counts tokens like message_start does', async () => {
    const body = { model: 'claude-sonnet-4-5', system: 'Sys.', messages: [{ role: 'user', content: 'count me' }] };
    const counted = await messages(body, '/messages/count_tokens');
    expect(await readJson(counted)).toEqual({ input_tokens: estimateTokens('Sys.count me') });
    const { events } = await readSse(await messages({ ...body, max_tokens: 10, stream: true }));
    expect((json(events[0]).message as { usage: { input_tokens: number } }).usage.input_tokens).toBe(estimateTokens('Sys.count me'));
  });

  it('requires x-api-key and anthropic-version, answering in the Anthropic error shape', async () => {
    const body = JSON.stringify({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] });
    const wrongKey = await fetch(`${server.url}/messages`, { method: 'POST', headers: { ...anthropicTarget.headers, 'x-api-key': 'nope' }, body });
    expect(wrongKey.status).toBe(401);
    expect(await readJson(wrongKey)).toEqual({ type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' }, request_id: 'req_1' });
    const { 'anthropic-version': _omitted, 'x-api-key': _key, ...withoutVersion } = anthropicTarget.headers;
    // The installed SDK sends its apiKey as a bearer token, so that is accepted too.
    const bearer = await fetch(`${server.url}/messages`, { method: 'POST', headers: { ...withoutVersion, 'anthropic-version': '2023-06-01', authorization: `Bearer ${ANTHROPIC_KEY}` }, body });
    expect(bearer.status).toBe(200);
    await bearer.arrayBuffer();
    const strict = await startAnthropicUpstream({ expectedApiKey: ANTHROPIC_KEY, acceptBearerAuth: false });
    const strictAnswer = await fetch(`${strict.url}/messages`, { method: 'POST', headers: { ...withoutVersion, 'anthropic-version': '2023-06-01', authorization: `Bearer ${ANTHROPIC_KEY}` }, body });
    expect(strictAnswer.status).toBe(401);
    await strictAnswer.arrayBuffer();
    await strict.close();
    const noVersion = await fetch(`${server.url}/messages`, { method: 'POST', headers: { ...withoutVersion, 'x-api-key': ANTHROPIC_KEY }, body });
    expect(noVersion.status).toBe(400);
    expect((await readJson(noVersion)).error.type).toBe('invalid_request_error');
    const noMaxTokens = await messages({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(noMaxTokens.status).toBe(400);
    expect((await readJson(noMaxTokens)).error.message).toBe('max_tokens: Field required');
    const models = await readJson(await fetch(`${server.url}/models`, { headers: anthropicTarget.headers }));
    expect(models).toMatchObject({ data: [{ type: 'model', id: 'claude-sonnet-4-5' }, { id: 'claude-haiku-4-5' }], has_more: false });
  });
});

// ---------------------------------------------------------------------------
// Script steps, recording and aborts, on both servers
// ---------------------------------------------------------------------------

describe.each([openAITarget, anthropicTarget])('$name upstream script steps', (target) => {
  let server: UpstreamServer;
  beforeAll(async () => {
    server = await target.start();
  });
  afterEach(() => server.reset());
  afterAll(() => server.close());

  it('records method, path, query, lower-cased headers and both bodies', async () => {
    await fetch(`${server.url}${target.path}?beta=true`, {
      method: 'POST',
      headers: { ...target.headers, 'X-Custom-Header': 'Yes' },
      body: JSON.stringify(target.body(false)),
    });
    expect(server.requests).toHaveLength(1);
    const [recorded] = server.requests;
    expect(recorded).toMatchObject({ sequence: 1, method: 'POST', path: `/v1${target.path}`, query: { beta: 'true' }, body: target.body(false), step: undefined });
    expect(recorded.rawBody).toBe(JSON.stringify(target.body(false)));
    expect(recorded.headers['x-custom-header']).toBe('Yes');
    expect(recorded.headers['content-type']).toBe('application/json');
    expect(server.aborted).toEqual([]);
  });

  it('delay: answers normally afterwards', async () => {
    const step: ScriptStep = { kind: 'delay', ms: 20 };
    server.script(step);
    const response = await post(server, target, false);
    expect(response.status).toBe(200);
    await readJson(response);
    expect(server.requests[0].step).toEqual(step);
    expect(server.pendingSteps).toBe(0);
  });

  it('status: 429 with retry-after in the provider error shape, then the default again', async () => {
    server.script({ kind: 'status', status: 429, headers: { 'Retry-After': '1' }, message: 'Slow down.' });
    const limited = await post(server, target, false);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    const body = await readJson(limited);
    expect(target.errorMessage(body)).toBe('Slow down.');
    if (target.name === 'anthropic') expect(body.error.type).toBe('rate_limit_error');
    else expect(body.error).toMatchObject({ type: 'requests', code: 'rate_limit_exceeded' });
    const next = await post(server, target, false);
    expect(next.status).toBe(200);
    await next.arrayBuffer();
  });

  it('status: 400 with message and param, 500 default body, and a verbatim custom body', async () => {
    server.script(
      { kind: 'status', status: 400, message: 'Bad temperature.', param: 'temperature' },
      { kind: 'status', status: 500 },
      { kind: 'status', status: 503, body: 'upstream down', headers: { 'content-type': 'text/plain' } },
    );
    const bad = await readJson(await post(server, target, false));
    expect(target.errorMessage(bad)).toBe('Bad temperature.');
    if (target.name === 'openai') expect(bad.error).toEqual({ message: 'Bad temperature.', type: 'invalid_request_error', param: 'temperature', code: null });
    else expect(bad).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    const failed = await post(server, target, false);
    expect(failed.status).toBe(500);
    expect(target.errorMessage(await readJson(failed))).toContain('500');
    const raw = await post(server, target, true);
    expect(raw.status).toBe(503);
    expect(raw.headers.get('content-type')).toBe('text/plain');
    expect(await raw.text()).toBe('upstream down');
  });

  it('reset-before: the client sees a connection error, and the server keeps serving', async () => {
    server.script({ kind: 'reset-before' });
    await expect(post(server, target, true)).rejects.toThrow();
    expect(server.requests).toHaveLength(1);
    expect(server.aborted).toEqual([]);
    const next = await post(server, target, false);
    expect(next.status).toBe(200);
    await next.arrayBuffer();
  });

  it('reset-during-stream: N frames arrive, then the body fails', async () => {
    server.script({ kind: 'reset-during-stream', afterChunks: 2 }, { kind: 'reset-during-stream', afterChunks: 1 });
    const response = await post(server, target, true);
    expect(response.status).toBe(200);
    const { events, error } = await readSse(response);
    expect(events).toHaveLength(2);
    expect(error).toBeDefined();
    expect(target.isComplete(events)).toBe(false);

    const plain = await post(server, target, false);
    expect(plain.status).toBe(200);
    await expect(plain.text()).rejects.toThrow();
    expect(server.aborted).toEqual([]);
  });

  it('malformed-json: a 200 JSON body that does not parse', async () => {
    server.script({ kind: 'malformed-json' });
    const response = await post(server, target, false);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    await expect(readJson(response)).rejects.toThrow(SyntaxError);
  });

  it('malformed-sse: N good frames, then one whose data is not JSON', async () => {
    server.script({ kind: 'malformed-sse', afterChunks: 2 });
    const { events, error } = await readSse(await post(server, target, true));
    expect(error).toBeUndefined();
    expect(events).toHaveLength(3);
    events.slice(0, 2).forEach((event) => expect(() => json(event)).not.toThrow());
    expect(() => json(events[2])).toThrow(SyntaxError);
    // An Anthropic SDK only parses frames that carry a known event name.
    if (target.name === 'anthropic') expect(events[2].event).toBe('content_block_delta');
  });

  it('stall: goes silent after N frames, then ends the stream unfinished', async () => {
    server.script({ kind: 'stall', afterChunks: 1, ms: 30 });
    const { events, error } = await readSse(await post(server, target, true));
    expect(error).toBeUndefined();
    expect(events).toHaveLength(1);
    expect(target.isComplete(events)).toBe(false);
  });

  it('stall with resume: the rest of the stream follows the silence', async () => {
    server.script({ kind: 'stall', afterChunks: 2, ms: 20, resume: true });
    const { events } = await readSse(await post(server, target, true));
    expect(target.isComplete(events)).toBe(true);
  });

  it('stall: a client idle timeout trips, and the server stops cleanly when the client leaves', async () => {
    server.script({ kind: 'stall', afterChunks: 1, ms: 60_000 });
    const controller = new AbortController();
    const response = await post(server, target, true, { signal: controller.signal });
    const { events, reader } = await readEvents(response, 1);
    expect(events).toHaveLength(1);
    const idle = Symbol('idle');
    // A fixed wait on purpose: the subject is silence, which no condition announces. A busy
    // machine can only make the stalled server look quieter, never break this check.
    const next = await Promise.race([reader.read(), new Promise<symbol>((resolve) => setTimeout(() => resolve(idle), 50))]);
    expect(next).toBe(idle);
    controller.abort();
    const aborted = await server.waitForAborted(1);
    expect(aborted[0].path).toBe(`/v1${target.path}`);
    // The server still answers at once: the stalled exchange left nothing behind.
    const after = await post(server, target, false);
    expect(after.status).toBe(200);
    await after.arrayBuffer();
  });

  it('stall on a non-streaming request: headers now, body after the silence', async () => {
    server.script({ kind: 'stall', afterChunks: 0, ms: 20 });
    const response = await post(server, target, false);
    expect(response.status).toBe(200);
    expect(await readJson(response)).toHaveProperty('model');
  });

  it('slow-stream: the paced stream carries the same events as the default one', async () => {
    const normal = await readSse(await post(server, target, true));
    server.script({ kind: 'slow-stream', chunkDelayMs: 5 });
    const slow = await readSse(await post(server, target, true));
    expect(target.isComplete(slow.events)).toBe(true);
    expect(slow.events.map((event) => event.event)).toEqual(normal.events.map((event) => event.event));
    expect(slow.events).toHaveLength(normal.events.length);
  });

  it('json and sse steps answer exactly what they were given', async () => {
    const frames = ['event: custom\ndata: {"a":1}\n\n', ': comment\n\n', 'data: plain\n\n'];
    server.script({ kind: 'json', body: { custom: true }, status: 201, headers: { 'x-extra': '1' } }, { kind: 'sse', frames, chunkDelayMs: 2 });
    const jsonResponse = await post(server, target, false);
    expect(jsonResponse.status).toBe(201);
    expect(jsonResponse.headers.get('x-extra')).toBe('1');
    expect(await readJson(jsonResponse)).toEqual({ custom: true });
    const sse = await post(server, target, true);
    expect(sse.headers.get('content-type')).toContain('text/event-stream');
    const { raw, events } = await readSse(sse);
    expect(raw).toBe(frames.join(''));
    expect(events).toEqual([
      { event: 'custom', data: '{"a":1}' },
      { event: undefined, data: 'plain' },
    ]);
  });

  it('error-event: N frames, then an in-band error in the provider format', async () => {
    server.script({ kind: 'error-event', afterChunks: 3, message: 'Stream broke.' }, { kind: 'error-event', afterChunks: 0 });
    const { raw, events, error } = await readSse(await post(server, target, true));
    expect(error).toBeUndefined();
    expect(events).toHaveLength(4);
    expect(events.slice(0, 3).map(target.inBandError)).toEqual([undefined, undefined, undefined]);
    expect(target.inBandError(events[3])).toBe('Stream broke.');
    if (target.name === 'openai') expect(raw).toMatch(/\n\ndata: \{"error":\{"message":"Stream broke\.","type":"server_error","param":null,"code":null\}\}\n\n$/);
    else expect(events[3].event).toBe('error');
    // Without a stream, the nearest equivalent is a 500 in the error shape.
    const plain = await post(server, target, false);
    expect(plain.status).toBe(500);
    expect(target.errorMessage(await readJson(plain))).toBe('Upstream test server error');
  });

  it('path-limited steps wait for their path and leave other requests alone', async () => {
    const otherPath = target.name === 'openai' ? '/responses' : '/messages/count_tokens';
    server.script({ kind: 'status', status: 500, path: otherPath });
    const main = await post(server, target, false);
    expect(main.status).toBe(200);
    await main.arrayBuffer();
    expect(server.pendingSteps).toBe(1);
    const other = await fetch(`${server.url}${otherPath}`, { method: 'POST', headers: target.headers, body: '{}' });
    expect(other.status).toBe(500);
    await other.arrayBuffer();
    expect(server.pendingSteps).toBe(0);
  });

  it('records a client abort in the middle of a stream, and only that one', async () => {
    const completed = await post(server, target, true);
    await readSse(completed);
    server.script({ kind: 'slow-stream', chunkDelayMs: 20 });
    const controller = new AbortController();
    const response = await post(server, target, true, { signal: controller.signal });
    const { events } = await readEvents(response, 2);
    expect(events.length).toBeGreaterThanOrEqual(2);
    controller.abort();
    const aborted = await server.waitForAborted(1);
    expect(aborted).toHaveLength(1);
    expect(aborted[0]).toBe(server.requests[1]);
    expect(server.requests).toHaveLength(2);
  });

  it('records an abort during a delay step without ever answering', async () => {
    server.script({ kind: 'delay', ms: 60_000 });
    const controller = new AbortController();
    const pending = post(server, target, false, { signal: controller.signal });
    await server.waitForRequests(1);
    controller.abort();
    await expect(pending).rejects.toThrow();
    expect((await server.waitForAborted(1))[0].sequence).toBe(1);
  });

  it('reset() clears recordings, the script and the sequence', async () => {
    server.script({ kind: 'status', status: 500 }, { kind: 'status', status: 500 });
    await (await post(server, target, false)).arrayBuffer();
    server.reset();
    expect(server.requests).toEqual([]);
    expect(server.pendingSteps).toBe(0);
    const response = await post(server, target, false);
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    expect(server.requests[0].sequence).toBe(1);
  });
});

// ---------------------------------------------------------------------------
// Lifecycle and extension points
// ---------------------------------------------------------------------------

describe('upstream server lifecycle', () => {
  it('close() ends open streams and keep-alive sockets at once', async () => {
    const server = await startAnthropicUpstream();
    const idle = await fetch(`${server.url}/models`, { headers: { 'anthropic-version': '2023-06-01' } });
    await idle.arrayBuffer(); // leaves a pooled keep-alive socket open
    server.script({ kind: 'stall', afterChunks: 1, ms: 60_000 });
    const response = await post(server, anthropicTarget, true);
    const reading = readSse(response);
    await server.waitForRequests(2);
    await server.close();
    const { events, error } = await reading;
    expect(events.length).toBeLessThanOrEqual(1);
    expect(error).toBeDefined();
    // Closed streams are not client aborts.
    expect(server.aborted).toEqual([]);
    await server.close();
  });

  it('serves custom routes and custom tool arguments', async () => {
    const server = await startOpenAIUpstream({
      toolArguments: { city: 'Paris' },
      routes: { 'POST /v1/embeddings': () => ({ kind: 'json', status: 200, body: { object: 'list', data: [] } }) },
    });
    try {
      const embeddings = await fetch(`${server.url}/embeddings`, { method: 'POST', body: '{}' });
      expect(await readJson(embeddings)).toEqual({ object: 'list', data: [] });
      const tools = [{ type: 'function', function: { name: 'get_weather' } }];
      const completion = await readJson(
        await fetch(`${server.url}/chat/completions`, {
          method: 'POST',
          body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], tools, tool_choice: 'required' }),
        })
      );
      expect(completion.choices[0].message.tool_calls[0].function.arguments).toBe('{"city":"Paris"}');
    } finally {
      await server.close();
    }
  });
});

// ---------------------------------------------------------------------------
// The official SDKs accept the default answers and the error shapes
// ---------------------------------------------------------------------------

describe('official SDKs against the upstream servers', () => {
  it('openai-node reads chat JSON, chat streams, tool-call streams, Responses streams and errors', async () => {
    const server = await startOpenAIUpstream({ expectedApiKey: OPENAI_KEY });
    try {
      const client = new OpenAI({ apiKey: OPENAI_KEY, baseURL: server.url, maxRetries: 0 });
      const completion = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'sdk' }] });
      expect(completion.choices[0].message.content).toBe('Echo: sdk');

      const stream = client.chat.completions.stream({ model: 'gpt-4o', messages: [{ role: 'user', content: 'sdk stream' }], stream_options: { include_usage: true } });
      const streamed = await stream.finalChatCompletion();
      expect(streamed.choices[0].message.content).toBe('Echo: sdk stream');
      expect(streamed.usage?.completion_tokens).toBe(estimateTokens('Echo: sdk stream'));

      const toolStream = client.chat.completions.stream({
        model: 'gpt-4o',
        messages: [{ role: 'user', content: 'Oslo' }],
        tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }],
        tool_choice: 'required',
      });
      const toolCall = (await toolStream.finalChatCompletion()).choices[0].message.tool_calls?.[0];
      expect(toolCall).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: '{"input":"Oslo"}' } });

      const response = await client.responses.stream({ model: 'gpt-4o', input: 'sdk responses' }).finalResponse();
      expect(response.output_text).toBe('Echo: sdk responses');

      server.script({ kind: 'status', status: 400, message: 'Bad value.', param: 'temperature' });
      const failure = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }] }).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
      expect(failure).toMatchObject({ status: 400, param: 'temperature', requestID: `req_${server.requests.length}` });

      server.script({ kind: 'error-event', afterChunks: 2, message: 'mid-stream' });
      const broken = client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'x' }], stream: true });
      await expect(
        (async () => {
          for await (const _chunk of await broken) {
            // drain
          }
        })(),
      ).rejects.toThrow('mid-stream');
    } finally {
      await server.close();
    }
  });

  it('the Anthropic SDK reads messages, streams, tool_use streams, count_tokens and errors', async () => {
    const server = await startAnthropicUpstream({ expectedApiKey: ANTHROPIC_KEY });
    try {
      const client = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: server.origin, maxRetries: 0 });
      const message = await client.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'sdk' }] });
      expect(message.content).toEqual([{ type: 'text', text: 'Echo: sdk' }]);

      const streamed = await client.messages
        .stream({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'sdk stream' }] })
        .finalMessage();
      expect(streamed.content).toMatchObject([{ type: 'text', text: 'Echo: sdk stream' }]);
      expect(streamed.usage.output_tokens).toBe(estimateTokens('Echo: sdk stream'));

      const toolMessage = await client.messages
        .stream({
          model: 'claude-sonnet-4-5',
          max_tokens: 64,
          messages: [{ role: 'user', content: 'Oslo' }],
          tools: [{ name: 'get_weather', input_schema: { type: 'object' } }],
          tool_choice: { type: 'any' },
        })
        .finalMessage();
      expect(toolMessage.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { input: 'Oslo' } });
      expect(toolMessage.stop_reason).toBe('tool_use');

      const counted = await client.messages.countTokens({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'abcd' }] });
      expect(counted.input_tokens).toBe(1);

      server.script({ kind: 'status', status: 529 });
      const failure = await client.messages
        .create({ model: 'claude-sonnet-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(Anthropic.APIError);
      expect(failure).toMatchObject({ status: 529, type: 'overloaded_error' });

      server.script({ kind: 'error-event', afterChunks: 3, message: 'mid-stream' });
      await expect(
        client.messages.stream({ model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'x' }] }).finalMessage(),
      ).rejects.toThrow('mid-stream');
    } finally {
      await server.close();
    }
  });
});
