import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { CanonicalResponse, CanonicalStreamEvent } from '../../providers/canonical.js';
import { SseParser, formatSseFrame } from '../../sse/sse-parser.js';
import { parseOrThrow } from '../../validation.js';
import { responsesRequestSchema } from './responses.wire.js';
import type { ResponsesStreamFrame } from './responses-object.wire.js';
import { ResponsesStreamDecoder } from './responses-stream-decoder.js';
import { ResponsesStreamEncoder } from './responses-stream-encoder.js';
import { toResponsesResponse } from './to-responses-response.js';

const options = { id: 'resp_t1', model: 'gpt-test', createdAt: 1_700_000_000 };

function encode(events: CanonicalStreamEvent[], encoder = new ResponsesStreamEncoder(options)): ResponsesStreamFrame[] {
  return [...events.flatMap((event) => encoder.push(event)), ...encoder.end()];
}

function toSse(frames: ResponsesStreamFrame[]): string {
  return frames.map((frame) => formatSseFrame(JSON.stringify(frame.data), frame.event)).join('');
}

/** The official client reads our bytes: its accumulator must accept them. */
async function readWithOpenAI(sse: string) {
  const client = new OpenAI({
    apiKey: 'sk-test',
    baseURL: 'http://gateway.test/v1',
    maxRetries: 0,
    fetch: async () => new Response(sse, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  });
  const stream = client.responses.stream({ model: 'gpt-test', input: 'Hi' });
  const seen: string[] = [];
  for await (const event of stream) seen.push(event.type);
  return { seen, final: await stream.finalResponse() };
}

const usage = { inputTokens: 20, outputTokens: 9 };
const usageWire = {
  input_tokens: 20,
  input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
  output_tokens: 9,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 29,
};

function responseObject(fields: Record<string, unknown>) {
  return {
    id: 'resp_t1',
    object: 'response',
    created_at: 1_700_000_000,
    status: 'in_progress',
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: 'gpt-test',
    output: [],
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    temperature: 1,
    text: { format: { type: 'text' } },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    metadata: {},
    usage: null,
    ...fields,
  };
}

describe('a text answer', () => {
  it('produces exactly the PROTOCOLS.md §4 sequence with sequence numbers from 0', () => {
    const frames = encode([
      { type: 'start', id: 'chatcmpl-1', model: 'upstream-model' },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Hel' },
      { type: 'text-delta', index: 0, text: 'lo' },
      { type: 'part-end', index: 0 },
      { type: 'finish', finishReason: 'stop', usage },
    ]);
    const message = { type: 'message', id: 'msg_t1_0', role: 'assistant' };
    const at = { item_id: 'msg_t1_0', output_index: 0, content_index: 0 };
    const part = { type: 'output_text', text: 'Hello', annotations: [], logprobs: [] };
    const completedMessage = { ...message, status: 'completed', content: [part] };
    expect(frames).toEqual([
      { event: 'response.created', data: { type: 'response.created', sequence_number: 0, response: responseObject({}) } },
      { event: 'response.in_progress', data: { type: 'response.in_progress', sequence_number: 1, response: responseObject({}) } },
      {
        event: 'response.output_item.added',
        data: {
          type: 'response.output_item.added',
          sequence_number: 2,
          output_index: 0,
          item: { ...message, status: 'in_progress', content: [] },
        },
      },
      {
        event: 'response.content_part.added',
        data: { type: 'response.content_part.added', sequence_number: 3, ...at, part: { ...part, text: '' } },
      },
      {
        event: 'response.output_text.delta',
        data: { type: 'response.output_text.delta', sequence_number: 4, ...at, delta: 'Hel', logprobs: [] },
      },
      {
        event: 'response.output_text.delta',
        data: { type: 'response.output_text.delta', sequence_number: 5, ...at, delta: 'lo', logprobs: [] },
      },
      {
        event: 'response.output_text.done',
        data: { type: 'response.output_text.done', sequence_number: 6, ...at, text: 'Hello', logprobs: [] },
      },
      { event: 'response.content_part.done', data: { type: 'response.content_part.done', sequence_number: 7, ...at, part } },
      {
        event: 'response.output_item.done',
        data: { type: 'response.output_item.done', sequence_number: 8, output_index: 0, item: completedMessage },
      },
      {
        event: 'response.completed',
        data: {
          type: 'response.completed',
          sequence_number: 9,
          response: responseObject({ status: 'completed', output: [completedMessage], usage: usageWire }),
        },
      },
    ]);
  });

  it('is accepted by the openai client, which rebuilds the same response', async () => {
    const encoder = new ResponsesStreamEncoder(options);
    const frames = encode(
      [
        { type: 'text-start', index: 0 },
        { type: 'text-delta', index: 0, text: 'Hi ' },
        { type: 'text-delta', index: 0, text: 'there' },
        { type: 'part-end', index: 0 },
        { type: 'finish', finishReason: 'stop', usage },
      ],
      encoder,
    );
    const { final } = await readWithOpenAI(toSse(frames));
    expect(final.output_text).toBe('Hi there');
    expect(final).toMatchObject(encoder.response ?? {});
  });
});

describe('text and tool calls', () => {
  const events: CanonicalStreamEvent[] = [
    { type: 'start', id: 'msg_01', model: 'claude-x', usage: { inputTokens: 20, cachedInputTokens: 4 } },
    { type: 'thinking-start', index: 0 },
    { type: 'thinking-delta', index: 0, text: 'Need ' },
    { type: 'thinking-delta', index: 0, text: 'weather.' },
    { type: 'thinking-signature', index: 0, signature: 'sig' },
    { type: 'part-end', index: 0 },
    { type: 'text-start', index: 1 },
    { type: 'text-delta', index: 1, text: 'Checking.' },
    { type: 'part-end', index: 1 },
    { type: 'tool-call-start', index: 2, id: 'toolu_1', name: 'get_weather' },
    { type: 'tool-call-delta', index: 2, argumentsDelta: '{"city":' },
    { type: 'tool-call-delta', index: 2, argumentsDelta: '"Paris"}' },
    { type: 'part-end', index: 2 },
    { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 20, outputTokens: 30, reasoningTokens: 12 } },
  ];

  it('emits reasoning, message and function_call items in order', () => {
    const frames = encode(events);
    expect(frames.map((frame) => [frame.data.sequence_number, frame.event, 'output_index' in frame.data ? frame.data.output_index : null])).toEqual([
      [0, 'response.created', null],
      [1, 'response.in_progress', null],
      [2, 'response.output_item.added', 0],
      [3, 'response.reasoning_summary_part.added', 0],
      [4, 'response.reasoning_summary_text.delta', 0],
      [5, 'response.reasoning_summary_text.delta', 0],
      [6, 'response.reasoning_summary_text.done', 0],
      [7, 'response.reasoning_summary_part.done', 0],
      [8, 'response.output_item.done', 0],
      [9, 'response.output_item.added', 1],
      [10, 'response.content_part.added', 1],
      [11, 'response.output_text.delta', 1],
      [12, 'response.output_text.done', 1],
      [13, 'response.content_part.done', 1],
      [14, 'response.output_item.done', 1],
      [15, 'response.output_item.added', 2],
      [16, 'response.function_call_arguments.delta', 2],
      [17, 'response.function_call_arguments.delta', 2],
      [18, 'response.function_call_arguments.done', 2],
      [19, 'response.output_item.done', 2],
      [20, 'response.completed', null],
    ]);
    expect(frames[3].data).toEqual({
      type: 'response.reasoning_summary_part.added',
      sequence_number: 3,
      item_id: 'rs_t1_0',
      output_index: 0,
      summary_index: 0,
      part: { type: 'summary_text', text: '' },
    });
    expect(frames[15].data).toEqual({
      type: 'response.output_item.added',
      sequence_number: 15,
      output_index: 2,
      item: { type: 'function_call', id: 'fc_t1_2', call_id: 'toolu_1', name: 'get_weather', arguments: '', status: 'in_progress' },
    });
    expect(frames[18].data).toEqual({
      type: 'response.function_call_arguments.done',
      sequence_number: 18,
      item_id: 'fc_t1_2',
      output_index: 2,
      name: 'get_weather',
      arguments: '{"city":"Paris"}',
    });
  });

  it('accumulates correctly in the openai client and equals the non-streamed object', async () => {
    const encoder = new ResponsesStreamEncoder(options);
    const frames = encode(events, encoder);
    const { seen, final } = await readWithOpenAI(toSse(frames));
    expect(seen).toEqual(frames.map((frame) => frame.event));
    expect(final.output_text).toBe('Checking.');
    // The client adds its own `parsed` fields; everything we sent must be there.
    expect(final.output).toMatchObject([
      { type: 'reasoning', id: 'rs_t1_0', summary: [{ type: 'summary_text', text: 'Need weather.' }] },
      {
        type: 'message',
        id: 'msg_t1_1',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Checking.', annotations: [], logprobs: [] }],
      },
      {
        type: 'function_call',
        id: 'fc_t1_2',
        call_id: 'toolu_1',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
        status: 'completed',
      },
    ]);
    expect(final.usage).toEqual({
      input_tokens: 20,
      input_tokens_details: { cached_tokens: 4, cache_write_tokens: 0 },
      output_tokens: 30,
      output_tokens_details: { reasoning_tokens: 12 },
      total_tokens: 50,
    });
    const response: CanonicalResponse = {
      id: 'msg_01',
      model: 'claude-x',
      content: [
        { type: 'thinking', text: 'Need weather.', signature: 'sig' },
        { type: 'text', text: 'Checking.' },
        { type: 'tool_call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 20, outputTokens: 30, cachedInputTokens: 4, reasoningTokens: 12 },
    };
    expect(encoder.response).toEqual(toResponsesResponse(response, options));
  });

  it('keeps output indexes right for interleaved tool calls', async () => {
    const encoder = new ResponsesStreamEncoder(options);
    const frames = encode(
      [
        { type: 'tool-call-start', index: 0, id: 'call_a', name: 'f' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: '{"x"' },
        { type: 'tool-call-start', index: 1, id: 'call_b', name: 'g' },
        { type: 'tool-call-delta', index: 1, argumentsDelta: '{"y":2}' },
        { type: 'tool-call-delta', index: 0, argumentsDelta: ':1}' },
        { type: 'part-end', index: 1 },
        { type: 'tool-call-start', index: 2, id: 'call_c', name: 'h' },
        { type: 'part-end', index: 0 },
        { type: 'finish', finishReason: 'tool_calls', usage },
      ],
      encoder,
    );
    const deltas = frames
      .filter((frame) => frame.event === 'response.function_call_arguments.delta')
      .map((frame) => frame.data);
    expect(deltas).toMatchObject([
      { item_id: 'fc_t1_0', output_index: 0, delta: '{"x"' },
      { item_id: 'fc_t1_1', output_index: 1, delta: '{"y":2}' },
      { item_id: 'fc_t1_0', output_index: 0, delta: ':1}' },
    ]);
    const { final } = await readWithOpenAI(toSse(frames));
    expect(final.output.map((item) => (item.type === 'function_call' ? [item.call_id, item.arguments] : null))).toEqual([
      ['call_a', '{"x":1}'],
      ['call_b', '{"y":2}'],
      ['call_c', '{}'],
    ]);
    expect(final.status).toBe('completed');
  });

  it('merges consecutive text parts into one message item', () => {
    const encoder = new ResponsesStreamEncoder(options);
    encode(
      [
        { type: 'text-start', index: 0 },
        { type: 'text-delta', index: 0, text: 'A' },
        { type: 'part-end', index: 0 },
        { type: 'text-start', index: 1 },
        { type: 'text-delta', index: 1, text: 'B' },
        { type: 'part-end', index: 1 },
        { type: 'finish', finishReason: 'stop', usage },
      ],
      encoder,
    );
    expect(encoder.response?.output).toEqual([
      {
        type: 'message',
        id: 'msg_t1_0',
        role: 'assistant',
        status: 'completed',
        content: [
          { type: 'output_text', text: 'A', annotations: [], logprobs: [] },
          { type: 'output_text', text: 'B', annotations: [], logprobs: [] },
        ],
      },
    ]);
  });
});

describe('echoed request fields', () => {
  it('takes a parsed request as its echo source and frames fit the generic frame type', () => {
    const request = parseOrThrow(responsesRequestSchema, {
      model: 'gpt-test',
      input: 'Hi',
      instructions: 'Be brief.',
      tools: [{ type: 'web_search' }, { type: 'function', name: 'f' }],
      tool_choice: 'none',
      metadata: { run: '1' },
    });
    const encoder = new ResponsesStreamEncoder({ ...options, request });
    const frames: { event: string; data: Record<string, unknown> }[] = encoder.push({
      type: 'finish',
      finishReason: 'stop',
      usage,
    });
    expect(frames.map((frame) => frame.event)).toEqual(['response.created', 'response.in_progress', 'response.completed']);
    expect(encoder.response).toMatchObject({
      instructions: 'Be brief.',
      tools: [{ type: 'web_search' }, { type: 'function', name: 'f' }],
      tool_choice: 'none',
      metadata: { run: '1' },
      output: [],
    });
  });
});

describe('terminal events', () => {
  it('ends a length-limited answer with response.incomplete', async () => {
    const encoder = new ResponsesStreamEncoder({ ...options, request: { max_output_tokens: 16 } });
    const frames = encode(
      [
        { type: 'text-start', index: 0 },
        { type: 'text-delta', index: 0, text: 'Once upon a' },
        { type: 'part-end', index: 0 },
        { type: 'finish', finishReason: 'length', usage },
      ],
      encoder,
    );
    expect(frames.slice(-2).map((frame) => frame.event)).toEqual(['response.output_item.done', 'response.incomplete']);
    expect(encoder.response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      max_output_tokens: 16,
      output: [{ type: 'message', status: 'incomplete' }],
    });
    const { final } = await readWithOpenAI(toSse(frames));
    expect(final.status).toBe('incomplete');
  });

  it('answers an error with response.failed then an error event, and nothing after', () => {
    const encoder = new ResponsesStreamEncoder(options);
    const frames = [
      ...encoder.push({ type: 'text-start', index: 0 }),
      ...encoder.push({ type: 'text-delta', index: 0, text: 'Par' }),
      ...encoder.push({ type: 'error', message: 'Overloaded', errorType: 'overloaded_error' }),
      ...encoder.push({ type: 'text-delta', index: 0, text: 'tial' }),
      ...encoder.end(),
    ];
    expect(frames.map((frame) => frame.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.failed',
      'error',
    ]);
    expect(frames[5].data).toMatchObject({
      sequence_number: 5,
      response: {
        status: 'failed',
        error: { code: 'server_error', message: 'Overloaded' },
        output: [{ type: 'message', status: 'incomplete', content: [{ type: 'output_text', text: 'Par' }] }],
      },
    });
    expect(frames[6].data).toEqual({
      type: 'error',
      sequence_number: 6,
      code: 'server_error',
      message: 'Overloaded',
      param: null,
      error: { type: 'server_error', code: 'server_error', message: 'Overloaded', param: null },
    });
    expect(encoder.response?.status).toBe('failed');
  });

  it('makes the official client throw on the error event', async () => {
    const frames = encode([
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Par' },
      { type: 'error', message: 'Overloaded', errorType: 'overloaded_error' },
    ]);
    const error = await readWithOpenAI(toSse(frames)).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain('Overloaded');
  });

  it('continues a stream another writer started, numbering after it', () => {
    const encoder = new ResponsesStreamEncoder({ ...options, continueAfter: 7 });
    const frames = encoder.push({ type: 'error', message: 'Cut off', errorType: undefined });
    expect(frames.map((frame) => [frame.event, frame.data.sequence_number])).toEqual([
      ['response.failed', 8],
      ['error', 9],
    ]);
    expect(frames[0].data).toMatchObject({ response: { id: 'resp_t1', status: 'failed', output: [] } });
  });

  it('maps rate limits to rate_limit_exceeded', () => {
    const frames = encode([{ type: 'error', message: 'Too many', errorType: 'rate_limit_error' }]);
    expect(frames.at(-1)?.data).toMatchObject({ type: 'error', code: 'rate_limit_exceeded' });
  });

  it('reports a canonical stream that never finished as failed', () => {
    const encoder = new ResponsesStreamEncoder(options);
    expect(encoder.response).toBeUndefined();
    const frames = [...encoder.push({ type: 'start', id: 'x', model: 'm' }), ...encoder.end()];
    expect(frames.map((frame) => frame.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.failed',
      'error',
    ]);
    expect(encoder.end()).toEqual([]);
  });
});

describe('a Responses upstream replayed to a Responses client', () => {
  it('round-trips the recorded function-call stream through decoder and encoder', async () => {
    const bytes = readFileSync(new URL('./__fixtures__/responses-function-call.1.sse', import.meta.url));
    const parser = new SseParser();
    const decoder = new ResponsesStreamDecoder();
    const encoder = new ResponsesStreamEncoder(options);
    const frames: ResponsesStreamFrame[] = [];
    for (const sse of [...parser.push(bytes), ...parser.end()]) {
      for (const event of decoder.push(sse)) frames.push(...encoder.push(event));
    }
    for (const event of decoder.end()) frames.push(...encoder.push(event));
    frames.push(...encoder.end());
    const { final } = await readWithOpenAI(toSse(frames));
    expect(final.output.map((item) => item.type)).toEqual(['reasoning', 'function_call', 'function_call']);
    expect(final.output[1]).toMatchObject({ call_id: 'call_5SDfhT0hWnR3LzUq1VJxN2eA', arguments: '{"city":"Paris"}' });
    expect(final.usage?.output_tokens_details.reasoning_tokens).toBe(128);
  });
});
