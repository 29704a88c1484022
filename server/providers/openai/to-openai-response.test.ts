import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { CanonicalResponse } from '../canonical.js';
import { toOpenAIChatResponse } from './to-openai-response.js';

const options = { id: 'chatcmpl-1', model: 'gpt-4o', created: 1700000000 };

const toolCallResponse: CanonicalResponse = {
  id: 'msg_01A',
  model: 'claude-x',
  content: [
    { type: 'thinking', text: 'The user wants weather.', signature: 'sig' },
    { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
  ],
  finishReason: 'tool_calls',
  usage: { inputTokens: 20, outputTokens: 9 },
};

describe('toOpenAIChatResponse', () => {
  it('writes the exact shape of PROTOCOLS.md §2 for a tool call', () => {
    expect(toOpenAIChatResponse(toolCallResponse, options)).toEqual({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1700000000,
      model: 'gpt-4o',
      choices: [
        {
          index: 0,
          logprobs: null,
          finish_reason: 'tool_calls',
          message: {
            role: 'assistant',
            content: null,
            refusal: null,
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
          },
        },
      ],
      usage: {
        prompt_tokens: 20,
        completion_tokens: 9,
        total_tokens: 29,
        prompt_tokens_details: { cached_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    });
  });

  it('joins text parts, leaves out tool_calls when there are none and reports cached and reasoning tokens', () => {
    const completion = toOpenAIChatResponse(
      {
        id: 'x',
        model: 'y',
        content: [
          { type: 'text', text: 'Hello ' },
          { type: 'unknown', origin: 'messages:server_tool_use', raw: {} },
          { type: 'text', text: 'world' },
        ],
        finishReason: 'stop_sequence',
        stopSequence: '###',
        usage: { inputTokens: 100, outputTokens: 50, cachedInputTokens: 80, cacheWriteInputTokens: 10, reasoningTokens: 30 },
      },
      options,
    );
    expect(completion.choices[0]).toEqual({
      index: 0,
      logprobs: null,
      finish_reason: 'stop',
      message: { role: 'assistant', content: 'Hello world', refusal: null },
    });
    expect(completion.usage).toEqual({
      prompt_tokens: 100,
      completion_tokens: 50,
      total_tokens: 150,
      prompt_tokens_details: { cached_tokens: 80 },
      completion_tokens_details: { reasoning_tokens: 30 },
    });
  });

  it('writes an empty string when there is neither text nor a tool call', () => {
    const completion = toOpenAIChatResponse({ ...toolCallResponse, content: [], finishReason: 'length' }, options);
    expect(completion.choices[0]?.message).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(completion.choices[0]?.finish_reason).toBe('length');
  });

  it('sends thinking as reasoning_content only when asked for', () => {
    expect(toOpenAIChatResponse(toolCallResponse, options).choices[0]?.message).not.toHaveProperty('reasoning_content');
    expect(toOpenAIChatResponse(toolCallResponse, { ...options, includeReasoning: true }).choices[0]?.message.reasoning_content).toBe(
      'The user wants weather.',
    );
  });

  it('is read by openai-node', async () => {
    const client = new OpenAI({
      apiKey: 'test',
      baseURL: 'http://gateway.test/v1',
      maxRetries: 0,
      fetch: async () =>
        new Response(JSON.stringify(toOpenAIChatResponse(toolCallResponse, options)), {
          status: 200,
          headers: { 'content-type': 'application/json' },
        }),
    });
    const completion = await client.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'Weather?' }] });
    expect(completion.choices[0]?.message.tool_calls?.[0]).toMatchObject({ id: 'call_1', function: { name: 'get_weather' } });
  });
});
