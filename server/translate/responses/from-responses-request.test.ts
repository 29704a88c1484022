import { describe, expect, it } from 'vitest';
import type { CanonicalMessage } from '../../providers/canonical.js';
import { parseOrThrow } from '../../validation.js';
import { fromResponsesRequest } from './from-responses-request.js';
import { responsesRequestSchema } from './responses.wire.js';

/** Bodies go through the public schema first, as the router does. */
function translate(body: Record<string, unknown>, history?: CanonicalMessage[]) {
  return fromResponsesRequest(parseOrThrow(responsesRequestSchema, body), history);
}

describe('instructions and plain input', () => {
  it('maps instructions to system and a string input to one user message', () => {
    expect(translate({ model: 'gpt-4o', instructions: 'Be brief.', input: 'Hi' })).toEqual({
      request: {
        model: 'gpt-4o',
        system: [{ type: 'text', text: 'Be brief.' }],
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
        stream: false,
      },
      report: { dropped: [], approximated: [] },
    });
  });

  it('reads empty instructions as none', () => {
    expect(translate({ model: 'm', instructions: '', input: 'Hi' }).request.system).toBeUndefined();
  });

  it('maps sampling and limit fields', () => {
    const { request } = translate({
      model: 'm',
      input: 'Hi',
      stream: true,
      max_output_tokens: 256,
      temperature: 0.2,
      top_p: 0.9,
      parallel_tool_calls: false,
      safety_identifier: 'user-42',
    });
    expect(request).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      stream: true,
      maxOutputTokens: 256,
      temperature: 0.2,
      topP: 0.9,
      parallelToolCalls: false,
      user: 'user-42',
    });
  });
});

describe('message items', () => {
  it('maps system and developer to system, user parts to text and image parts', () => {
    const { request, report } = translate({
      model: 'm',
      input: [
        { role: 'developer', content: 'Answer in French.' },
        { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'No emojis.' }] },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' },
            { type: 'input_image', image_url: 'https://example.com/cat.jpg' },
            { type: 'input_image', file_id: 'file-123', detail: 'auto' },
            { type: 'input_file', file_id: 'file-456' },
          ],
        },
      ],
    });
    expect(request.messages).toEqual([
      { role: 'system', content: [{ type: 'text', text: 'Answer in French.' }] },
      { role: 'system', content: [{ type: 'text', text: 'No emojis.' }] },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' }, detail: 'high' },
          { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg' } },
          {
            type: 'unknown',
            origin: 'responses:input_image',
            raw: { type: 'input_image', file_id: 'file-123', detail: 'auto' },
          },
          { type: 'unknown', origin: 'responses:input_file', raw: { type: 'input_file', file_id: 'file-456' } },
        ],
      },
    ]);
    expect(report).toEqual({ dropped: [], approximated: [] });
  });

  it('drops non-text parts of system messages and reports them', () => {
    const { request, report } = translate({
      model: 'm',
      input: [
        {
          role: 'system',
          content: [
            { type: 'input_text', text: 'Rules.' },
            { type: 'input_image', image_url: 'https://example.com/x.png' },
          ],
        },
      ],
    });
    expect(request.messages).toEqual([{ role: 'system', content: [{ type: 'text', text: 'Rules.' }] }]);
    expect(report).toEqual({ dropped: ['input[0].content[1]'], approximated: [] });
  });

  it('reads assistant history: output_text parts, a string, and refusals as text', () => {
    const { request, report } = translate({
      model: 'm',
      input: [
        { role: 'user', content: 'Hi' },
        {
          type: 'message',
          id: 'msg_1',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Hello!', annotations: [] }],
        },
        { role: 'user', content: 'Do something bad' },
        { role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot help with that.' }] },
      ],
    });
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Hi' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Hello!' }] },
      { role: 'user', content: [{ type: 'text', text: 'Do something bad' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'I cannot help with that.' }] },
    ]);
    expect(report).toEqual({ dropped: [], approximated: ['input[3].content[0]'] });
  });
});

describe('tool calls and results', () => {
  it('folds a model turn into one assistant message and maps outputs to tool messages', () => {
    const { request, report } = translate({
      model: 'm',
      input: [
        { role: 'user', content: 'Weather in Paris and Tokyo?' },
        {
          type: 'reasoning',
          id: 'rs_1',
          summary: [{ type: 'summary_text', text: 'Two lookups needed.' }],
          encrypted_content: 'gAAAA…',
        },
        { role: 'assistant', content: 'Checking both.' },
        { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', id: 'fc_2', call_id: 'call_2', name: 'get_weather', arguments: '' },
        { type: 'function_call_output', call_id: 'call_1', output: '18°C' },
        {
          type: 'function_call_output',
          call_id: 'call_2',
          output: [
            { type: 'input_text', text: 'See chart' },
            { type: 'input_image', image_url: 'https://example.com/chart.png' },
          ],
        },
      ],
    });
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Tokyo?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', text: 'Two lookups needed.' },
          { type: 'text', text: 'Checking both.' },
          { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { type: 'tool_call', id: 'call_2', name: 'get_weather', arguments: '{}' },
        ],
      },
      { role: 'tool', toolCallId: 'call_1', name: 'get_weather', content: [{ type: 'text', text: '18°C' }] },
      {
        role: 'tool',
        toolCallId: 'call_2',
        name: 'get_weather',
        content: [
          { type: 'text', text: 'See chart' },
          { type: 'image', source: { kind: 'url', url: 'https://example.com/chart.png' } },
        ],
      },
    ]);
    expect(report).toEqual({ dropped: ['input[1].encrypted_content'], approximated: [] });
  });

  it('puts a reasoning item without a following message on its own assistant message', () => {
    const { request } = translate({
      model: 'm',
      input: [
        { type: 'reasoning', id: 'rs_1', summary: [] },
        { type: 'reasoning', id: 'rs_2', summary: [{ type: 'summary_text', text: 'a' }, { type: 'summary_text', text: 'b' }] },
        { role: 'user', content: 'next' },
      ],
    });
    expect(request.messages).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'thinking', text: 'a' },
          { type: 'thinking', text: 'b' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'next' }] },
    ]);
  });

  it('names tool results after calls found in the history', () => {
    const history: CanonicalMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      { role: 'assistant', content: [{ type: 'tool_call', id: 'call_9', name: 'get_weather', arguments: '{}' }] },
    ];
    const { request } = translate(
      { model: 'm', previous_response_id: 'resp_1', input: [{ type: 'function_call_output', call_id: 'call_9', output: 'sunny' }] },
      history,
    );
    expect(request.messages).toEqual([
      ...history,
      { role: 'tool', toolCallId: 'call_9', name: 'get_weather', content: [{ type: 'text', text: 'sunny' }] },
    ]);
    expect(request.extra).toBeUndefined();
  });

  it('keeps unknown items as unknown parts on the side that produced them', () => {
    const search = { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'x' } };
    const reference = { type: 'item_reference', id: 'msg_0' };
    const { request, report } = translate({
      model: 'm',
      input: [reference, search, { role: 'assistant', content: 'Found it.' }],
    });
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'unknown', origin: 'responses:item', raw: reference }] },
      {
        role: 'assistant',
        content: [
          { type: 'unknown', origin: 'responses:item', raw: search },
          { type: 'text', text: 'Found it.' },
        ],
      },
    ]);
    expect(report).toEqual({ dropped: [], approximated: [] });
  });
});

describe('tools and tool choice', () => {
  it('maps flat function tools and keeps hosted tools in extra', () => {
    const { request } = translate({
      model: 'm',
      input: 'Hi',
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'Weather for a city',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          strict: true,
        },
        { type: 'function', name: 'now' },
        { type: 'web_search', search_context_size: 'low' },
      ],
      tool_choice: { type: 'function', name: 'get_weather' },
    });
    expect(request.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Weather for a city',
        parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        strict: true,
      },
      { name: 'now', parameters: { type: 'object', properties: {} } },
    ]);
    expect(request.toolChoice).toEqual({ type: 'tool', name: 'get_weather' });
    expect(request.extra).toEqual({ tools: [{ type: 'web_search', search_context_size: 'low' }] });
  });

  it.each([
    ['auto', { toolChoice: { type: 'auto' } }],
    ['none', { toolChoice: { type: 'none' } }],
    ['required', { toolChoice: { type: 'required' } }],
  ])('maps tool_choice %s', (choice, expected) => {
    expect(translate({ model: 'm', tool_choice: choice }).request).toMatchObject(expected);
  });

  it('approximates allowed_tools by its mode and keeps hosted choices in extra', () => {
    const allowed = translate({
      model: 'm',
      tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'f' }] },
    });
    expect(allowed.request.toolChoice).toEqual({ type: 'required' });
    expect(allowed.report.approximated).toEqual(['tool_choice']);

    const hosted = translate({ model: 'm', tool_choice: { type: 'web_search_preview' } });
    expect(hosted.request.toolChoice).toBeUndefined();
    expect(hosted.request.extra).toEqual({ tool_choice: { type: 'web_search_preview' } });
  });
});

describe('text format and reasoning', () => {
  it('maps text.format and keeps the rest of text in extra', () => {
    const { request, report } = translate({
      model: 'm',
      text: {
        format: { type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true, description: 'An answer' },
        verbosity: 'low',
      },
    });
    expect(request.responseFormat).toEqual({ type: 'json_schema', name: 'answer', schema: { type: 'object' }, strict: true });
    expect(request.extra).toEqual({ text: { verbosity: 'low' } });
    expect(report.dropped).toEqual(['text.format.description']);
    expect(translate({ model: 'm', text: { format: { type: 'json_object' } } }).request.responseFormat).toEqual({
      type: 'json_object',
    });
  });

  it.each([
    [{ effort: 'low', summary: 'auto' }, { effort: 'low', summary: 'auto' }, []],
    [{ effort: 'none' }, { disabled: true }, []],
    [{ effort: 'xhigh' }, { effort: 'high' }, ['reasoning.effort']],
    [{ generate_summary: 'concise' }, { summary: 'concise' }, []],
  ])('maps reasoning %j', (reasoning, expected, approximated) => {
    const { request, report } = translate({ model: 'm', reasoning });
    expect(request.reasoning).toEqual(expected);
    expect(report.approximated).toEqual(approximated);
  });
});

describe('unmodelled fields', () => {
  it('keeps every unmodelled field in extra by its wire name', () => {
    const { request } = translate({
      model: 'm',
      input: 'Hi',
      store: false,
      include: ['reasoning.encrypted_content'],
      metadata: { run: '7' },
      truncation: 'auto',
      background: false,
      conversation: 'conv_1',
      service_tier: 'flex',
      prompt_cache_key: 'k',
      top_logprobs: 2,
      max_tool_calls: 3,
      user: 'legacy-user',
      safety_identifier: 'user-42',
      temperature: null,
    });
    expect(request.user).toBe('user-42');
    expect(request.temperature).toBeUndefined();
    expect(request.extra).toEqual({
      store: false,
      include: ['reasoning.encrypted_content'],
      metadata: { run: '7' },
      truncation: 'auto',
      background: false,
      conversation: 'conv_1',
      service_tier: 'flex',
      prompt_cache_key: 'k',
      top_logprobs: 2,
      max_tool_calls: 3,
      user: 'legacy-user',
    });
  });

  it('reports previous_response_id when no history was resolved', () => {
    const { request, report } = translate({ model: 'm', input: 'Hi', previous_response_id: 'resp_1' });
    expect(request.extra).toBeUndefined();
    expect(report.dropped).toEqual(['previous_response_id']);
  });
});
