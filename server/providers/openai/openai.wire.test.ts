import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.js';
import { parseOrThrow } from '../../validation.js';
import { chatCompletionRequestSchema } from './openai.wire.js';

const minimal = { model: 'gpt-4o', messages: [{ role: 'user', content: 'Hi' }] };

/** The 400 a client would get for this body, or undefined when it is valid. */
function rejectionOf(body: unknown): { code: string; status: number; param: string | null; message: string } | undefined {
  try {
    parseOrThrow(chatCompletionRequestSchema, body);
    return undefined;
  } catch (error) {
    if (!(error instanceof GatewayError)) throw error;
    return { code: error.code, status: error.status, param: error.param, message: error.message };
  }
}

function paramOf(body: unknown): string | null | undefined {
  return rejectionOf(body)?.param;
}

describe('chatCompletionRequestSchema', () => {
  describe('SPEC bounds are rejected with a 400 naming the param', () => {
    it.each([
      ['temperature below 0', { temperature: -0.1 }, 'temperature'],
      ['temperature above 2', { temperature: 2.01 }, 'temperature'],
      ['temperature not a number', { temperature: '1' }, 'temperature'],
      ['top_p above 1', { top_p: 1.5 }, 'top_p'],
      ['top_p below 0', { top_p: -1 }, 'top_p'],
      ['five stop sequences', { stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
      ['stop of the wrong type', { stop: 4 }, 'stop'],
      ['presence_penalty below -2', { presence_penalty: -2.5 }, 'presence_penalty'],
      ['presence_penalty above 2', { presence_penalty: 2.5 }, 'presence_penalty'],
      ['frequency_penalty below -2', { frequency_penalty: -3 }, 'frequency_penalty'],
      ['frequency_penalty above 2', { frequency_penalty: 2.1 }, 'frequency_penalty'],
      ['max_tokens of 0', { max_tokens: 0 }, 'max_tokens'],
      ['max_tokens not an integer', { max_tokens: 10.5 }, 'max_tokens'],
      ['max_completion_tokens of 0', { max_completion_tokens: 0 }, 'max_completion_tokens'],
      ['n of 0', { n: 0 }, 'n'],
      ['stream not a boolean', { stream: 'yes' }, 'stream'],
      ['include_usage not a boolean', { stream_options: { include_usage: 'yes' } }, 'stream_options.include_usage'],
      ['parallel_tool_calls not a boolean', { parallel_tool_calls: 1 }, 'parallel_tool_calls'],
      ['unknown reasoning_effort', { reasoning_effort: 'extreme' }, 'reasoning_effort'],
      ['unknown response_format type', { response_format: { type: 'xml' } }, 'response_format.type'],
      ['json_schema without a name', { response_format: { type: 'json_schema', json_schema: { schema: {} } } }, 'response_format.json_schema.name'],
      ['unknown tool_choice', { tool_choice: 'any' }, 'tool_choice'],
      ['named tool_choice without a name', { tool_choice: { type: 'function', function: {} } }, 'tool_choice'],
    ])('%s', (_name, fields, param) => {
      expect(rejectionOf({ ...minimal, ...fields })).toMatchObject({ code: 'INVALID_REQUEST', status: 400, param });
    });

    it('says what is wrong in the message', () => {
      expect(rejectionOf({ ...minimal, stop: ['a', 'b', 'c', 'd', 'e'] })?.message).toBe(
        "Invalid value for 'stop': Expected a string or an array of at most 4 strings.",
      );
      expect(rejectionOf({ ...minimal, tools: [{ type: 'web_search' }] })?.message).toBe(
        "Invalid value for 'tools[0].type': Only tools of type 'function' are supported.",
      );
    });
  });

  describe('model and messages', () => {
    it.each([
      ['model missing', { messages: minimal.messages }, 'model'],
      ['model empty', { model: '', messages: minimal.messages }, 'model'],
      ['messages missing', { model: 'gpt-4o' }, 'messages'],
      ['messages empty', { model: 'gpt-4o', messages: [] }, 'messages'],
      ['body not an object', null, null],
    ])('rejects %s', (_name, body, param) => {
      expect(paramOf(body)).toBe(param);
    });

    it('names the role of a message with an unknown role', () => {
      const messages = [...minimal.messages, { role: 'assistant', content: 'Hello' }, { role: 'model', content: '?' }];
      expect(paramOf({ model: 'gpt-4o', messages })).toBe('messages[2].role');
    });

    it.each([
      ['user without content', { role: 'user' }, 'messages[0].content'],
      ['user content of the wrong type', { role: 'user', content: 5 }, 'messages[0].content'],
      ['tool message without tool_call_id', { role: 'tool', content: 'ok' }, 'messages[0].tool_call_id'],
      ['function message without name', { role: 'function', content: 'ok' }, 'messages[0].name'],
      [
        'text part without text',
        { role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'text' }] },
        'messages[0].content[1].text',
      ],
      ['image_url part without url', { role: 'user', content: [{ type: 'image_url', image_url: {} }] }, 'messages[0].content[0].image_url.url'],
      [
        'assistant tool call without id',
        { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] },
        'messages[0].tool_calls[0].id',
      ],
      [
        'assistant tool call with object arguments',
        { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: {} } }] },
        'messages[0].tool_calls[0].function.arguments',
      ],
    ])('rejects %s', (_name, message, param) => {
      expect(paramOf({ model: 'gpt-4o', messages: [message] })).toBe(param);
    });
  });

  describe('tools', () => {
    const tool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } };

    it.each([
      ['a tool type other than function', [tool, { type: 'custom', custom: { name: 'x' } }], 'tools[1].type'],
      ['a name with spaces', [{ type: 'function', function: { name: 'get weather' } }], 'tools[0].function.name'],
      ['a name of 65 characters', [{ type: 'function', function: { name: 'a'.repeat(65) } }], 'tools[0].function.name'],
      ['an empty name', [{ type: 'function', function: { name: '' } }], 'tools[0].function.name'],
      ['parameters that are not an object', [{ type: 'function', function: { name: 'f', parameters: 'x' } }], 'tools[0].function.parameters'],
      ['a tool without function', [{ type: 'function' }], 'tools[0].function'],
    ])('rejects %s', (_name, tools, param) => {
      expect(paramOf({ ...minimal, tools })).toBe(param);
    });

    it('accepts a 64-character name with - and _', () => {
      expect(rejectionOf({ ...minimal, tools: [{ type: 'function', function: { name: `a-b_${'c'.repeat(60)}` } }] })).toBeUndefined();
    });
  });

  describe('what is accepted', () => {
    it('accepts the bounds themselves', () => {
      expect(
        rejectionOf({
          ...minimal,
          temperature: 2,
          top_p: 0,
          stop: ['a', 'b', 'c', 'd'],
          presence_penalty: -2,
          frequency_penalty: 2,
          max_tokens: 1,
          max_completion_tokens: 1,
          n: 1,
        }),
      ).toBeUndefined();
    });

    it('keeps unknown top-level fields', () => {
      const parsed = parseOrThrow(chatCompletionRequestSchema, { ...minimal, logit_bias: { '50256': -100 }, future_parameter: { a: 1 } });
      expect(parsed).toMatchObject({ logit_bias: { '50256': -100 }, future_parameter: { a: 1 } });
    });

    it('accepts unknown content part types as they are', () => {
      const content = [
        { type: 'text', text: 'Listen:' },
        { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
        { type: 'file', file: { file_id: 'file-abc' } },
        { type: 'hologram', hologram: { frames: 3 } },
      ];
      const parsed = parseOrThrow(chatCompletionRequestSchema, { model: 'gpt-4o', messages: [{ role: 'user', content }] });
      expect(parsed.messages[0]).toEqual({ role: 'user', content });
    });

    it('accepts null for optional parameters, as OpenAI does', () => {
      expect(
        rejectionOf({ ...minimal, temperature: null, stop: null, tools: null, tool_choice: null, response_format: null, max_tokens: null }),
      ).toBeUndefined();
    });

    it('accepts every role, legacy function calling and all tool_choice forms', () => {
      const messages = [
        { role: 'developer', content: 'Be brief.' },
        { role: 'system', content: [{ type: 'text', text: 'You are helpful.' }] },
        { role: 'user', content: 'Weather?', name: 'ada' },
        { role: 'assistant', content: null, function_call: { name: 'get_weather', arguments: '{}' } },
        { role: 'function', name: 'get_weather', content: 'sunny' },
        { role: 'assistant', content: '', refusal: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'ok' }] },
      ];
      for (const tool_choice of [
        'auto',
        'none',
        'required',
        { type: 'function', function: { name: 'f' } },
        { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'f' } }] } },
      ]) {
        expect(rejectionOf({ model: 'gpt-4o', messages, tool_choice })).toBeUndefined();
      }
    });

    it('accepts every response_format and reasoning_effort', () => {
      for (const response_format of [
        { type: 'text' },
        { type: 'json_object' },
        { type: 'json_schema', json_schema: { name: 'answer', schema: { type: 'object' }, strict: true } },
      ]) {
        expect(rejectionOf({ ...minimal, response_format })).toBeUndefined();
      }
      for (const reasoning_effort of ['minimal', 'low', 'medium', 'high']) {
        expect(rejectionOf({ ...minimal, reasoning_effort })).toBeUndefined();
      }
    });
  });
});
