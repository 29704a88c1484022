import { describe, expect, it } from 'vitest';
import type { CanonicalResponse } from '../../providers/canonical.js';
import { UpstreamError } from '../../errors.js';
import { fromResponsesResponse, toResponsesResponse } from './to-responses-response.js';

const options = { id: 'resp_abc', model: 'claude-x', createdAt: 1_700_000_000 };

describe('toResponsesResponse', () => {
  it('builds the full Response object with reasoning, message and function_call items', () => {
    const response: CanonicalResponse = {
      id: 'msg_01A',
      model: 'claude-x-2025',
      content: [
        { type: 'thinking', text: 'Need the weather.', signature: 'sig' },
        { type: 'text', text: 'Checking' },
        { type: 'text', text: ' now.' },
        { type: 'tool_call', id: 'toolu_01B', name: 'get_weather', arguments: '{"city":"Paris"}' },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 20, outputTokens: 9, cachedInputTokens: 5, reasoningTokens: 3 },
    };
    expect(toResponsesResponse(response, options)).toEqual({
      id: 'resp_abc',
      object: 'response',
      created_at: 1_700_000_000,
      status: 'completed',
      error: null,
      incomplete_details: null,
      instructions: null,
      max_output_tokens: null,
      model: 'claude-x',
      output: [
        { type: 'reasoning', id: 'rs_abc_0', summary: [{ type: 'summary_text', text: 'Need the weather.' }] },
        {
          type: 'message',
          id: 'msg_abc_1',
          role: 'assistant',
          status: 'completed',
          content: [
            { type: 'output_text', text: 'Checking', annotations: [], logprobs: [] },
            { type: 'output_text', text: ' now.', annotations: [], logprobs: [] },
          ],
        },
        {
          type: 'function_call',
          id: 'fc_abc_2',
          call_id: 'toolu_01B',
          name: 'get_weather',
          arguments: '{"city":"Paris"}',
          status: 'completed',
        },
      ],
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      temperature: 1,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [],
      top_p: 1,
      metadata: {},
      usage: {
        input_tokens: 20,
        input_tokens_details: { cached_tokens: 5, cache_write_tokens: 0 },
        output_tokens: 9,
        output_tokens_details: { reasoning_tokens: 3 },
        total_tokens: 29,
      },
    });
  });

  it('echoes the request fields', () => {
    const tools = [{ type: 'function', name: 'f', parameters: {} }];
    const object = toResponsesResponse(
      { id: 'x', model: 'm', content: [], finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 0 } },
      {
        ...options,
        request: {
          instructions: 'Be brief.',
          tools,
          tool_choice: 'required',
          temperature: 0.3,
          top_p: 0.5,
          parallel_tool_calls: false,
          metadata: { run: '1' },
          previous_response_id: 'resp_prev',
          max_output_tokens: 100,
          text: { verbosity: 'low' },
          reasoning: { effort: 'low', summary: 'auto' },
        },
      },
    );
    expect(object).toMatchObject({
      instructions: 'Be brief.',
      tools,
      tool_choice: 'required',
      temperature: 0.3,
      top_p: 0.5,
      parallel_tool_calls: false,
      metadata: { run: '1' },
      previous_response_id: 'resp_prev',
      max_output_tokens: 100,
      text: { verbosity: 'low', format: { type: 'text' } },
      reasoning: { effort: 'low', summary: 'auto' },
      output: [],
    });
  });

  it.each([
    ['length', 'max_output_tokens'],
    ['content_filter', 'content_filter'],
  ] as const)('answers %s as incomplete (%s) and marks the cut message', (finishReason, reason) => {
    const object = toResponsesResponse(
      { id: 'x', model: 'm', content: [{ type: 'text', text: 'Once upon' }], finishReason, usage: { inputTokens: 3, outputTokens: 16 } },
      options,
    );
    expect(object.status).toBe('incomplete');
    expect(object.incomplete_details).toEqual({ reason });
    expect(object.output).toEqual([
      {
        type: 'message',
        id: 'msg_abc_0',
        role: 'assistant',
        status: 'incomplete',
        content: [{ type: 'output_text', text: 'Once upon', annotations: [], logprobs: [] }],
      },
    ]);
  });

  it('answers a provider error as failed, and keeps Responses items from a Responses upstream', () => {
    const search = { type: 'web_search_call', id: 'ws_1', status: 'completed' };
    const object = toResponsesResponse(
      {
        id: 'x',
        model: 'm',
        content: [
          { type: 'unknown', origin: 'responses:item', raw: search },
          { type: 'unknown', origin: 'messages:server_tool_use', raw: { type: 'server_tool_use' } },
        ],
        finishReason: 'error',
        usage: { inputTokens: 0, outputTokens: 0 },
      },
      options,
    );
    expect(object.status).toBe('failed');
    expect(object.error).toEqual({ code: 'server_error', message: 'The provider failed to complete the response.' });
    expect(object.output).toEqual([search]);
  });
});

describe('fromResponsesResponse', () => {
  it('reads reasoning, messages, refusals, function calls and usage', () => {
    const response = fromResponsesResponse({
      id: 'resp_1',
      object: 'response',
      status: 'completed',
      model: 'o4-mini',
      output: [
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Plan.' }] },
        { type: 'reasoning', id: 'rs_2', summary: [], content: [{ type: 'reasoning_text', text: 'raw thought' }] },
        {
          type: 'message',
          id: 'msg_1',
          role: 'assistant',
          status: 'completed',
          content: [
            { type: 'output_text', text: 'Hi', annotations: [] },
            { type: 'refusal', refusal: 'Not that.' },
          ],
        },
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'f', arguments: '', status: 'completed' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed' },
      ],
      usage: {
        input_tokens: 10,
        input_tokens_details: { cached_tokens: 4 },
        output_tokens: 7,
        output_tokens_details: { reasoning_tokens: 2 },
        total_tokens: 17,
      },
    });
    expect(response).toEqual({
      id: 'resp_1',
      model: 'o4-mini',
      content: [
        { type: 'thinking', text: 'Plan.' },
        { type: 'thinking', text: 'raw thought' },
        { type: 'text', text: 'Hi' },
        { type: 'text', text: 'Not that.' },
        { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{}' },
        {
          type: 'unknown',
          origin: 'responses:item',
          raw: { type: 'web_search_call', id: 'ws_1', status: 'completed' },
        },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 10, outputTokens: 7, cachedInputTokens: 4, reasoningTokens: 2 },
    });
  });

  it('maps incomplete reasons', () => {
    const incomplete = (reason: string) =>
      fromResponsesResponse({ status: 'incomplete', incomplete_details: { reason }, output: [] }).finishReason;
    expect(incomplete('max_output_tokens')).toBe('length');
    expect(incomplete('content_filter')).toBe('content_filter');
    expect(fromResponsesResponse({ output: [] })).toEqual({
      id: '',
      model: '',
      content: [],
      finishReason: 'stop',
      usage: { inputTokens: 0, outputTokens: 0 },
    });
  });

  it('throws a 502 UpstreamError on garbage and on a failed response', () => {
    for (const body of [null, 'oops', { id: 'resp_1' }, { output: 'no' }]) {
      expect(() => fromResponsesResponse(body, 'openai-main')).toThrowError(UpstreamError);
    }
    try {
      fromResponsesResponse({ status: 'failed', error: { code: 'server_error', message: 'boom' }, output: [] });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(UpstreamError);
      expect(error).toMatchObject({ status: 502, message: 'boom', retryable: true, upstreamType: 'server_error' });
    }
  });
});
