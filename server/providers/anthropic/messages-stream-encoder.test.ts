import { readFileSync } from 'node:fs';
import Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import type { CanonicalStreamEvent } from '../canonical.js';
import { SseParser, formatSseFrame } from '../../sse/sse-parser.js';
import { AnthropicStreamDecoder } from './anthropic-stream.js';
import type { AnthropicStreamFrame } from './anthropic.wire.js';
import { MessagesStreamEncoder } from './messages-stream-encoder.js';

function encode(events: CanonicalStreamEvent[], options = { id: 'msg_01A', model: 'claude-x' } as ConstructorParameters<typeof MessagesStreamEncoder>[0]) {
  const encoder = new MessagesStreamEncoder(options);
  const frames: AnthropicStreamFrame[] = [];
  for (const event of events) frames.push(...encoder.push(event));
  frames.push(...encoder.end());
  return { frames, encoder };
}

const messageStart = (usage: Record<string, number>) => ({
  event: 'message_start',
  data: {
    type: 'message_start',
    message: {
      id: 'msg_01A',
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...usage },
    },
  },
});
const blockStart = (index: number, block: Record<string, unknown>) => ({
  event: 'content_block_start',
  data: { type: 'content_block_start', index, content_block: block },
});
const blockDelta = (index: number, delta: Record<string, unknown>) => ({
  event: 'content_block_delta',
  data: { type: 'content_block_delta', index, delta },
});
const blockStop = (index: number) => ({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
const messageDelta = (stopReason: string, usage: Record<string, number>, stopSequence: string | null = null) => ({
  event: 'message_delta',
  data: {
    type: 'message_delta',
    delta: { stop_reason: stopReason, stop_sequence: stopSequence },
    usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, ...usage },
  },
});
const messageStop = { event: 'message_stop', data: { type: 'message_stop' } };

describe('MessagesStreamEncoder: sequence', () => {
  it('text: the exact sequence of PROTOCOLS.md §3', () => {
    const { frames, encoder } = encode([
      { type: 'start', id: 'chatcmpl-9', model: 'gpt-4o', usage: { inputTokens: 20, cachedInputTokens: 5 } },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Hello' },
      { type: 'text-delta', index: 0, text: ' there' },
      { type: 'part-end', index: 0 },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 20, outputTokens: 2, cachedInputTokens: 5 } },
    ]);
    expect(frames).toEqual([
      messageStart({ input_tokens: 15, cache_read_input_tokens: 5 }),
      blockStart(0, { type: 'text', text: '' }),
      blockDelta(0, { type: 'text_delta', text: 'Hello' }),
      blockDelta(0, { type: 'text_delta', text: ' there' }),
      blockStop(0),
      messageDelta('end_turn', { input_tokens: 15, cache_read_input_tokens: 5, output_tokens: 2 }),
      messageStop,
    ]);
    expect(encoder.usage).toEqual({ inputTokens: 20, outputTokens: 2, cachedInputTokens: 5 });
  });

  it('uses the constructor input tokens until the provider reports its own', () => {
    const { frames } = encode(
      [
        { type: 'start', id: 'x', model: 'y' },
        { type: 'finish', finishReason: 'length', usage: { inputTokens: 42, outputTokens: 100 } },
      ],
      { id: 'msg_01A', model: 'claude-x', inputTokens: 40 },
    );
    expect(frames).toEqual([
      messageStart({ input_tokens: 40 }),
      messageDelta('max_tokens', { input_tokens: 42, output_tokens: 100 }),
      messageStop,
    ]);
  });

  it('thinking with signature, redacted thinking, tool use and the stop sequence', () => {
    const { frames } = encode([
      { type: 'start', id: 'x', model: 'y', usage: { inputTokens: 10 } },
      { type: 'thinking-start', index: 0 },
      { type: 'thinking-delta', index: 0, text: 'Hmm.' },
      { type: 'thinking-signature', index: 0, signature: 'sig' },
      { type: 'part-end', index: 0 },
      { type: 'thinking-start', index: 1, redactedData: 'opaque' },
      { type: 'part-end', index: 1 },
      { type: 'tool-call-start', index: 2, id: 'toolu_1', name: 'f' },
      { type: 'tool-call-delta', index: 2, argumentsDelta: '{"a":1}' },
      { type: 'part-end', index: 2 },
      { type: 'finish', finishReason: 'stop_sequence', stopSequence: 'END', usage: { inputTokens: 10, outputTokens: 5 } },
    ]);
    expect(frames).toEqual([
      messageStart({ input_tokens: 10 }),
      blockStart(0, { type: 'thinking', thinking: '', signature: '' }),
      blockDelta(0, { type: 'thinking_delta', thinking: 'Hmm.' }),
      blockDelta(0, { type: 'signature_delta', signature: 'sig' }),
      blockStop(0),
      blockStart(1, { type: 'redacted_thinking', data: 'opaque' }),
      blockStop(1),
      blockStart(2, { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }),
      blockDelta(2, { type: 'input_json_delta', partial_json: '{"a":1}' }),
      blockStop(2),
      messageDelta('stop_sequence', { input_tokens: 10, output_tokens: 5 }, 'END'),
      messageStop,
    ]);
  });

  it('interleaved tool calls: one block at a time, the others buffered', () => {
    const { frames } = encode([
      { type: 'start', id: 'chatcmpl-1', model: 'gpt-4o' },
      { type: 'tool-call-start', index: 0, id: 'call_a', name: 'get_weather' },
      { type: 'tool-call-start', index: 1, id: 'call_b', name: 'get_time' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '{"city":' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{"tz":' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '"UTC"}' },
      { type: 'tool-call-delta', index: 0, argumentsDelta: '"Paris"}' },
      { type: 'part-end', index: 0 },
      { type: 'part-end', index: 1 },
      { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 20, outputTokens: 9 } },
    ]);
    expect(frames).toEqual([
      messageStart({}),
      blockStart(0, { type: 'tool_use', id: 'call_a', name: 'get_weather', input: {} }),
      blockDelta(0, { type: 'input_json_delta', partial_json: '{"city":' }),
      blockDelta(0, { type: 'input_json_delta', partial_json: '"Paris"}' }),
      blockStop(0),
      blockStart(1, { type: 'tool_use', id: 'call_b', name: 'get_time', input: {} }),
      blockDelta(1, { type: 'input_json_delta', partial_json: '{"tz":"UTC"}' }),
      blockStop(1),
      messageDelta('tool_use', { input_tokens: 20, output_tokens: 9 }),
      messageStop,
    ]);
  });

  it('interleaved parts ending out of order, and parts still open at finish', () => {
    const { frames } = encode([
      { type: 'text-start', index: 0 },
      { type: 'tool-call-start', index: 1, id: 'call_a', name: 'a' },
      { type: 'tool-call-delta', index: 1, argumentsDelta: '{}' },
      { type: 'part-end', index: 1 },
      { type: 'tool-call-start', index: 2, id: 'call_b', name: 'b' },
      { type: 'text-delta', index: 0, text: 'Hi' },
      { type: 'part-end', index: 0 },
      { type: 'tool-call-delta', index: 2, argumentsDelta: '{"x":1}' },
      { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 3, outputTokens: 4 } },
    ]);
    expect(frames).toEqual([
      messageStart({}),
      blockStart(0, { type: 'text', text: '' }),
      blockDelta(0, { type: 'text_delta', text: 'Hi' }),
      blockStop(0),
      blockStart(1, { type: 'tool_use', id: 'call_a', name: 'a', input: {} }),
      blockDelta(1, { type: 'input_json_delta', partial_json: '{}' }),
      blockStop(1),
      blockStart(2, { type: 'tool_use', id: 'call_b', name: 'b', input: {} }),
      blockDelta(2, { type: 'input_json_delta', partial_json: '{"x":1}' }),
      blockStop(2),
      messageDelta('tool_use', { input_tokens: 3, output_tokens: 4 }),
      messageStop,
    ]);
  });

  it('an error becomes an error event and ends the stream', () => {
    const { frames } = encode([
      { type: 'start', id: 'x', model: 'y' },
      { type: 'text-start', index: 0 },
      { type: 'text-delta', index: 0, text: 'Once' },
      { type: 'error', message: 'upstream failed', errorType: 'server_error' },
      { type: 'text-delta', index: 0, text: 'ignored' },
    ]);
    expect(frames).toEqual([
      messageStart({}),
      blockStart(0, { type: 'text', text: '' }),
      blockDelta(0, { type: 'text_delta', text: 'Once' }),
      { event: 'error', data: { type: 'error', error: { type: 'api_error', message: 'upstream failed' } } },
    ]);
    const overloaded = encode([{ type: 'error', message: 'Overloaded', errorType: 'overloaded_error' }]).frames;
    expect(overloaded).toEqual([
      { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } },
    ]);
  });

  it('end() without finish closes the message', () => {
    const { frames } = encode([{ type: 'text-start', index: 0 }]);
    expect(frames).toEqual([
      messageStart({}),
      blockStart(0, { type: 'text', text: '' }),
      blockStop(0),
      messageDelta('end_turn', {}),
      messageStop,
    ]);
  });

  it('gives a ping frame', () => {
    expect(new MessagesStreamEncoder({ id: 'msg_1', model: 'm' }).pingFrame()).toEqual({ event: 'ping', data: { type: 'ping' } });
  });
});

describe('MessagesStreamEncoder: read by the Anthropic SDK', () => {
  /** Anthropic stream bytes → our decoder → our encoder → SSE text, as the gateway relays it. */
  function relay(fixture: string): string {
    const parser = new SseParser();
    const decoder = new AnthropicStreamDecoder();
    const encoder = new MessagesStreamEncoder({ id: 'msg_gateway', model: 'claude-x' });
    const frames: AnthropicStreamFrame[] = [encoder.pingFrame()];
    const bytes = readFileSync(new URL(`./__fixtures__/${fixture}`, import.meta.url));
    const events = [...parser.push(bytes), ...parser.end()].flatMap((event) => decoder.push(event));
    events.push(...decoder.end());
    for (const event of events) frames.push(...encoder.push(event));
    frames.push(...encoder.end());
    return frames.map((frame) => formatSseFrame(JSON.stringify(frame.data), frame.event)).join('');
  }

  function client(body: string) {
    return new Anthropic({
      apiKey: 'test-key',
      baseURL: 'http://gateway.test',
      maxRetries: 0,
      fetch: async () => new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
    });
  }

  const params = { model: 'claude-x', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'Hi' }] };

  it('accumulates a relayed tool-use stream into the recorded answer', async () => {
    const message = await client(relay('anthropic-tool-use.1.sse')).messages.stream(params).finalMessage();
    const recorded = JSON.parse(readFileSync(new URL('./__fixtures__/anthropic-tool-use.1.json', import.meta.url), 'utf8'));
    expect(message).toMatchObject({ ...recorded, id: 'msg_gateway', model: 'claude-x' });
  });

  it('accumulates thinking with its signature', async () => {
    const message = await client(relay('anthropic-thinking.1.sse')).messages.stream(params).finalMessage();
    expect(message.content).toEqual([
      {
        type: 'thinking',
        thinking: 'The user asks for 27 × 453. 27 × 453 = 12231.',
        signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds0l2X7tEM0Xy+LKJq3Pa5mGLcA==',
      },
      { type: 'text', text: '27 × 453 = 12,231.' },
    ]);
    expect(message.usage).toMatchObject({ input_tokens: 58, output_tokens: 142 });
  });

  it('throws the relayed error with its type', async () => {
    const stream = client(relay('anthropic-error-midstream.1.sse')).messages.stream(params);
    await expect(stream.finalMessage()).rejects.toMatchObject({ type: 'overloaded_error' });
  });
});
