import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../errors.js';
import { fromOpenAIChatResponse } from './from-openai-response.js';

function readJsonFixture(name: string): unknown {
  return JSON.parse(readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8'));
}

describe('fromOpenAIChatResponse', () => {
  describe('recorded responses', () => {
    it('reads a text answer', () => {
      expect(fromOpenAIChatResponse(readJsonFixture('openai-text.1.json'))).toEqual({
        id: 'chatcmpl-BkT6gR5yJp0aX6eOb9MuZ4qWtUkSj',
        model: 'gpt-4o-2024-08-06',
        content: [{ type: 'text', text: 'Bonjour à vous 👋!' }],
        finishReason: 'stop',
        usage: { inputTokens: 19, outputTokens: 6, cachedInputTokens: 0, reasoningTokens: 0 },
      });
    });

    it('reads parallel tool calls with cached tokens', () => {
      expect(fromOpenAIChatResponse(readJsonFixture('openai-tool-calls.1.json'))).toEqual({
        id: 'chatcmpl-BkT7iT8aLr3cZ9gQd2OwB7sYvWmUl',
        model: 'gpt-4.1-2025-04-14',
        content: [
          { type: 'tool_call', id: 'call_Xq3uV9bN2mKcP7tR1sYwZ0aD', name: 'get_weather', arguments: '{"city": "Paris"}' },
          { type: 'tool_call', id: 'call_Hf8eL4jQ6oWs0gTb5nAzR2cM', name: 'get_local_time', arguments: '{"timezone": "Europe/Paris"}' },
        ],
        finishReason: 'tool_calls',
        usage: { inputTokens: 1214, outputTokens: 51, cachedInputTokens: 1024, reasoningTokens: 0 },
      });
    });
  });

  describe('what OpenAI-compatible servers do differently', () => {
    it('reads reasoning_content, content parts, object arguments, a refusal and a missing usage', () => {
      expect(
        fromOpenAIChatResponse({
          id: 'x',
          model: 'm',
          choices: [
            {
              index: 0,
              finish_reason: 'eos',
              message: {
                role: 'assistant',
                reasoning_content: 'Thinking.',
                content: [{ type: 'text', text: 'A' }, { type: 'text', text: 'B' }],
                refusal: 'No.',
                tool_calls: [{ id: '', type: 'function', function: { name: 'f', arguments: { a: 1 } } }, 'garbage'],
              },
            },
          ],
        }),
      ).toEqual({
        id: 'x',
        model: 'm',
        content: [
          { type: 'thinking', text: 'Thinking.' },
          { type: 'text', text: 'AB' },
          { type: 'text', text: 'No.' },
          { type: 'tool_call', id: expect.stringMatching(/^call_/), name: 'f', arguments: '{"a":1}' },
        ],
        finishReason: 'stop',
        usage: { inputTokens: 0, outputTokens: 0 },
      });
    });

    it('reads the first choice when n > 1, and an empty answer', () => {
      const response = fromOpenAIChatResponse({
        choices: [
          { index: 1, message: { content: 'second' }, finish_reason: 'stop' },
          { index: 0, message: { content: '' }, finish_reason: 'length' },
        ],
      });
      expect(response).toEqual({ id: '', model: '', content: [], finishReason: 'length', usage: { inputTokens: 0, outputTokens: 0 } });
    });

    it('gives an empty tool call arguments string as {}', () => {
      const response = fromOpenAIChatResponse({
        choices: [{ message: { tool_calls: [{ id: 'c', function: { name: 'f', arguments: '' } }] }, finish_reason: 'tool_calls' }],
      });
      expect(response.content).toEqual([{ type: 'tool_call', id: 'c', name: 'f', arguments: '{}' }]);
    });
  });

  describe('bodies that are not chat completions', () => {
    it.each([null, 'text', [], { object: 'list' }, { choices: 'no' }])('throws a 502 UpstreamError for %j', (body) => {
      expect(() => fromOpenAIChatResponse(body)).toThrowError(
        expect.objectContaining({ status: 502, retryable: false, message: 'The provider answered with a body that is not a chat completion.' }),
      );
    });

    it('keeps the message of an error sent with status 200', () => {
      let caught: unknown;
      try {
        fromOpenAIChatResponse({ error: { message: 'Model is loading', type: 'server_error' } });
      } catch (error) {
        caught = error;
      }
      expect(caught).toBeInstanceOf(UpstreamError);
      expect((caught as UpstreamError).message).toBe('The provider answered with an error: Model is loading');
    });
  });
});
