import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CanonicalResponse } from '../canonical.js';
import { UpstreamError } from '../../errors.js';
import { fromAnthropicResponse } from './from-anthropic-response.js';
import { mapAnthropicStopReason, toAnthropicStopReason } from './map-anthropic-stop-reason.js';
import { toAnthropicResponse } from './to-anthropic-response.js';

function fixture(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8'));
}

const MODEL = 'claude-sonnet-4-5-20250929';

describe('fromAnthropicResponse: recorded answers', () => {
  it('text', () => {
    expect(fromAnthropicResponse(fixture('anthropic-text.1.json'))).toEqual({
      id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
      model: MODEL,
      content: [{ type: 'text', text: 'Grüße aus Paris! 🗼 Wie kann ich helfen?' }],
      finishReason: 'stop',
      stopSequence: null,
      usage: { inputTokens: 25, outputTokens: 15, cachedInputTokens: 0, cacheWriteInputTokens: 0 },
    });
  });

  it('tool use, with cache reads counted in the prompt', () => {
    expect(fromAnthropicResponse(fixture('anthropic-tool-use.1.json'))).toEqual({
      id: 'msg_014p7gG3wDgGV9EUtLvnow3U',
      model: MODEL,
      content: [
        { type: 'text', text: 'Let me check the weather.' },
        {
          type: 'tool_call',
          id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
          name: 'get_weather',
          arguments: '{"city":"Paris","unit":"celsius"}',
        },
        { type: 'tool_call', id: 'toolu_01Nq3bHcWbUMsw8fGzP4Zm2K', name: 'get_time', arguments: '{}' },
      ],
      finishReason: 'tool_calls',
      stopSequence: null,
      usage: { inputTokens: 1496, outputTokens: 89, cachedInputTokens: 1024, cacheWriteInputTokens: 0 },
    });
  });

  it('thinking, redacted thinking and thinking tokens', () => {
    expect(fromAnthropicResponse(fixture('anthropic-thinking.1.json'))).toEqual({
      id: 'msg_01Aq9w938a90dw8q',
      model: MODEL,
      content: [
        {
          type: 'thinking',
          text: 'The user asks for 27 × 453. 27 × 453 = 12231.',
          signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds0l2X7tEM0Xy+LKJq3Pa5mGLcA==',
        },
        { type: 'thinking', text: '', redactedData: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP' },
        { type: 'text', text: '27 × 453 = 12,231.' },
      ],
      finishReason: 'stop',
      stopSequence: null,
      usage: { inputTokens: 58, outputTokens: 142, cachedInputTokens: 0, cacheWriteInputTokens: 0, reasoningTokens: 120 },
    });
  });

  it('stop sequence, with cache writes counted in the prompt', () => {
    const response = fromAnthropicResponse(fixture('anthropic-stop-sequence.1.json'));
    expect(response.finishReason).toBe('stop_sequence');
    expect(response.stopSequence).toBe('5');
    expect(response.usage).toEqual({ inputTokens: 310, outputTokens: 12, cachedInputTokens: 0, cacheWriteInputTokens: 300 });
  });

  it('keeps server tool blocks as unknown parts', () => {
    const block = { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] };
    const response = fromAnthropicResponse({
      id: 'msg_1',
      type: 'message',
      model: 'm',
      content: [block],
      stop_reason: 'end_turn',
      usage: { input_tokens: 1, output_tokens: 1 },
    });
    expect(response.content).toEqual([{ type: 'unknown', origin: 'messages:web_search_tool_result', raw: block }]);
  });
});

describe('fromAnthropicResponse: garbage', () => {
  for (const [name, body] of [
    ['null', null],
    ['a string', 'Bad gateway'],
    ['no content', { id: 'msg_1', type: 'message' }],
    ['another object', { object: 'chat.completion', choices: [] }],
    ['a block without type', { id: 'msg_1', content: [{ text: 'x' }] }],
  ] as const) {
    it(`throws a 502 on ${name}`, () => {
      try {
        fromAnthropicResponse(body);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(UpstreamError);
        expect((error as UpstreamError).status).toBe(502);
        expect((error as UpstreamError).retryable).toBe(false);
      }
    });
  }

  it('reports an error body with its message', () => {
    expect(() => fromAnthropicResponse(fixture('anthropic-error.1.json'))).toThrow('Overloaded');
  });
});

describe('toAnthropicResponse', () => {
  const response: CanonicalResponse = {
    id: 'chatcmpl-1',
    model: 'gpt-4o',
    content: [
      { type: 'thinking', text: 'Plan.', signature: 'sig' },
      { type: 'thinking', text: '', redactedData: 'opaque' },
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'tool_call', id: 'call_2', name: 'get_time', arguments: '' },
      { type: 'unknown', origin: 'messages:server_tool_use', raw: { type: 'server_tool_use', id: 's', name: 'web_search', input: {} } },
      { type: 'unknown', origin: 'responses:web_search_call', raw: { type: 'web_search_call' } },
    ],
    finishReason: 'tool_calls',
    usage: { inputTokens: 120, outputTokens: 30, cachedInputTokens: 80, cacheWriteInputTokens: 10 },
  };

  it('has the exact shape of a messages response', () => {
    expect(toAnthropicResponse(response, { id: 'msg_01A', model: 'claude-x' })).toEqual({
      id: 'msg_01A',
      type: 'message',
      role: 'assistant',
      model: 'claude-x',
      content: [
        { type: 'thinking', thinking: 'Plan.', signature: 'sig' },
        { type: 'redacted_thinking', data: 'opaque' },
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'call_2', name: 'get_time', input: {} },
        { type: 'server_tool_use', id: 's', name: 'web_search', input: {} },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 30, output_tokens: 30, cache_creation_input_tokens: 10, cache_read_input_tokens: 80 },
    });
  });

  it('gives the stop sequence only with stop_reason stop_sequence', () => {
    const base = { ...response, content: [{ type: 'text' as const, text: '1, 2' }], usage: { inputTokens: 5, outputTokens: 2 } };
    const stopped = toAnthropicResponse({ ...base, finishReason: 'stop_sequence', stopSequence: '3' }, { id: 'msg_2', model: 'm' });
    expect([stopped.stop_reason, stopped.stop_sequence]).toEqual(['stop_sequence', '3']);
    expect(stopped.usage).toEqual({ input_tokens: 5, output_tokens: 2, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    const natural = toAnthropicResponse({ ...base, finishReason: 'stop', stopSequence: '3' }, { id: 'msg_3', model: 'm' });
    expect([natural.stop_reason, natural.stop_sequence]).toEqual(['end_turn', null]);
  });

  it('round-trips a recorded answer', () => {
    const body = fixture('anthropic-tool-use.1.json') as Record<string, unknown>;
    const back = toAnthropicResponse(fromAnthropicResponse(body), { id: body.id as string, model: body.model as string });
    expect(back).toEqual(body);
  });
});

describe('stop reasons', () => {
  it('maps every Anthropic reason', () => {
    expect(
      ['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded', null, 'new'].map(
        mapAnthropicStopReason,
      ),
    ).toEqual(['stop', 'length', 'stop_sequence', 'tool_calls', 'pause', 'content_filter', 'length', 'stop', 'stop']);
  });

  it('maps every canonical reason', () => {
    expect(
      (['stop', 'length', 'tool_calls', 'content_filter', 'stop_sequence', 'pause', 'error'] as const).map(toAnthropicStopReason),
    ).toEqual(['end_turn', 'max_tokens', 'tool_use', 'refusal', 'stop_sequence', 'pause_turn', 'end_turn']);
  });
});
