import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors.js';
import { parseOrThrow } from '../../validation.js';
import { compactRequestSchema, responsesRequestSchema } from './responses.wire.js';

function rejection(schema: typeof responsesRequestSchema | typeof compactRequestSchema, body: unknown) {
  try {
    parseOrThrow(schema, body);
  } catch (error) {
    if (error instanceof GatewayError) return { code: error.code, status: error.status, param: error.param };
    throw error;
  }
  throw new Error('expected the body to be rejected');
}

describe('responsesRequestSchema: bounds are rejected with the field as param', () => {
  it.each([
    ['missing model', { input: 'hi' }, 'model'],
    ['empty model', { model: '' }, 'model'],
    ['max_output_tokens below 16', { model: 'm', max_output_tokens: 15 }, 'max_output_tokens'],
    ['fractional max_output_tokens', { model: 'm', max_output_tokens: 20.5 }, 'max_output_tokens'],
    ['temperature above 2', { model: 'm', temperature: 2.1 }, 'temperature'],
    ['negative temperature', { model: 'm', temperature: -0.1 }, 'temperature'],
    ['top_p above 1', { model: 'm', top_p: 1.01 }, 'top_p'],
    ['input of the wrong type', { model: 'm', input: 42 }, 'input'],
    ['message without content', { model: 'm', input: [{ role: 'user' }] }, 'input[0].content'],
    ['message with an unknown role', { model: 'm', input: [{ role: 'robot', content: 'x' }] }, 'input[0].role'],
    [
      'input_text without text',
      { model: 'm', input: [{ role: 'user', content: [{ type: 'input_text' }] }] },
      'input[0].content[0].text',
    ],
    [
      'function_call without call_id',
      { model: 'm', input: [{ type: 'function_call', name: 'f', arguments: '{}' }] },
      'input[0].call_id',
    ],
    [
      'function_call with object arguments',
      { model: 'm', input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: {} }] },
      'input[0].arguments',
    ],
    [
      'function_call_output without output',
      { model: 'm', input: [{ type: 'function_call_output', call_id: 'c' }] },
      'input[0].output',
    ],
    ['function tool without name', { model: 'm', tools: [{ type: 'function', parameters: {} }] }, 'tools[0].name'],
    ['tool without type', { model: 'm', tools: [{ name: 'f' }] }, 'tools[0].type'],
    ['unknown tool_choice string', { model: 'm', tool_choice: 'always' }, 'tool_choice'],
    ['function tool_choice without name', { model: 'm', tool_choice: { type: 'function' } }, 'tool_choice.name'],
    [
      'json_schema format without name',
      { model: 'm', text: { format: { type: 'json_schema', schema: {} } } },
      'text.format.name',
    ],
    ['unknown text format', { model: 'm', text: { format: { type: 'yaml' } } }, 'text.format.type'],
    ['unknown reasoning summary', { model: 'm', reasoning: { summary: 'verbose' } }, 'reasoning.summary'],
  ])('%s', (_name, body, param) => {
    expect(rejection(responsesRequestSchema, body)).toEqual({ code: 'INVALID_REQUEST', status: 400, param });
  });
});

describe('responsesRequestSchema: lenient where nothing is bounded', () => {
  it('keeps unknown top-level fields, hosted tools and new item and part types as sent', () => {
    const body = {
      model: 'gpt-4o',
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'hi' }, { type: 'input_audio', data: 'AAA=' }] },
        { type: 'web_search_call', id: 'ws_1', status: 'completed' },
        { type: 'item_reference', id: 'msg_1' },
        { type: 'compaction', id: 'cmp_1', encrypted_content: 'opaque' },
      ],
      tools: [
        { type: 'web_search' },
        { type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example.com' },
        { type: 'function', name: 'f' },
      ],
      tool_choice: { type: 'web_search_preview' },
      store: false,
      include: ['reasoning.encrypted_content'],
      brand_new_parameter: { nested: true },
    };
    expect(parseOrThrow(responsesRequestSchema, body)).toEqual(body);
  });

  it('accepts messages without type, string input and nulls', () => {
    expect(parseOrThrow(responsesRequestSchema, { model: 'm', input: 'hi', temperature: null })).toEqual({
      model: 'm',
      input: 'hi',
      temperature: null,
    });
    expect(
      parseOrThrow(responsesRequestSchema, { model: 'm', input: [{ role: 'developer', content: 'Be brief.' }] }),
    ).toEqual({ model: 'm', input: [{ role: 'developer', content: 'Be brief.' }] });
  });

  it('accepts the bounds themselves', () => {
    const body = { model: 'm', max_output_tokens: 16, temperature: 2, top_p: 0, reasoning: { effort: 'xhigh' } };
    expect(parseOrThrow(responsesRequestSchema, body)).toEqual(body);
  });
});

describe('compactRequestSchema', () => {
  it('accepts null, text and item input', () => {
    for (const input of [null, 'hello', [{ role: 'user', content: 'hello' }]]) {
      expect(parseOrThrow(compactRequestSchema, { model: 'm', input })).toEqual({ model: 'm', input });
    }
  });

  it('requires a model and names bad items', () => {
    expect(rejection(compactRequestSchema, { input: null })).toMatchObject({ param: 'model' });
    expect(rejection(compactRequestSchema, { model: 'm', input: [{ type: 'function_call' }] })).toMatchObject({
      param: 'input[0].call_id',
    });
  });
});
