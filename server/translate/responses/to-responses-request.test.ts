import { describe, expect, it } from 'vitest';
import type { CanonicalRequest } from '../../providers/canonical.js';
import { parseOrThrow } from '../../validation.js';
import { responsesRequestSchema } from './responses.wire.js';
import { toResponsesRequest } from './to-responses-request.js';

const base: CanonicalRequest = { model: 'gpt-4o', messages: [], stream: false };

describe('system, sampling and limits', () => {
  it('writes instructions, sampling fields and the end user', () => {
    const { body, report } = toResponsesRequest({
      ...base,
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      maxOutputTokens: 300,
      temperature: 0.5,
      topP: 0.8,
      user: 'user-42',
      stream: true,
    });
    expect(body).toEqual({
      model: 'gpt-4o',
      instructions: 'Be brief.',
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }],
      max_output_tokens: 300,
      temperature: 0.5,
      top_p: 0.8,
      safety_identifier: 'user-42',
      stream: true,
    });
    expect(report).toEqual({ dropped: [], approximated: [] });
    expect(() => parseOrThrow(responsesRequestSchema, body)).not.toThrow();
  });

  it('reports what Responses has no field for and raises max_output_tokens to 16', () => {
    const { body, report } = toResponsesRequest({
      ...base,
      system: [
        { type: 'text', text: 'A', cacheControl: { type: 'ephemeral' } },
        { type: 'text', text: 'B' },
      ],
      maxOutputTokens: 1,
      stop: ['END'],
      topK: 40,
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      seed: 7,
    });
    expect(body.instructions).toBe('A\n\nB');
    expect(body.max_output_tokens).toBe(16);
    expect(report).toEqual({
      dropped: ['cache_control', 'stop', 'top_k', 'presence_penalty', 'frequency_penalty', 'seed'],
      approximated: ['system', 'max_output_tokens'],
    });
  });
});

describe('messages', () => {
  it('turns an assistant turn into reasoning, message and function_call items', () => {
    const { body, report } = toResponsesRequest({
      ...base,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', text: 'Need a lookup.', signature: 'sig' },
            { type: 'text', text: 'Let me check' },
            { type: 'text', text: ' now.' },
            { type: 'tool_call', id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
            { type: 'thinking', text: '', redactedData: 'opaque' },
          ],
        },
        { role: 'tool', toolCallId: 'toolu_1', content: [{ type: 'text', text: '18°C' }], isError: false },
      ],
    });
    expect(body.input).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather?' }] },
      { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Need a lookup.' }] },
      {
        type: 'message',
        role: 'assistant',
        content: [
          { type: 'output_text', text: 'Let me check', annotations: [] },
          { type: 'output_text', text: ' now.', annotations: [] },
        ],
      },
      { type: 'function_call', call_id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'toolu_1', output: '18°C' },
    ]);
    expect(report).toEqual({
      dropped: ['thinking.signature', 'redacted_thinking', 'messages[2].is_error'],
      approximated: [],
    });
  });

  it('drops thinking when asked to', () => {
    const { body, report } = toResponsesRequest(
      { ...base, messages: [{ role: 'assistant', content: [{ type: 'thinking', text: 'hmm' }, { type: 'text', text: 'Hi' }] }] },
      { dropThinking: true },
    );
    expect(body.input).toEqual([
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hi', annotations: [] }] },
    ]);
    expect(report.dropped).toEqual(['thinking']);
  });

  it('writes images as input_image URLs and puts Responses items back as sent', () => {
    const reference = { type: 'item_reference', id: 'msg_0' };
    const { body, report } = toResponsesRequest({
      ...base,
      messages: [
        {
          role: 'user',
          name: 'alice',
          content: [
            { type: 'text', text: 'Look' },
            { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' }, detail: 'low' },
            { type: 'unknown', origin: 'responses:item', raw: reference },
            { type: 'image', source: { kind: 'url', url: 'https://example.com/a.jpg' } },
            { type: 'unknown', origin: 'responses:input_file', raw: { type: 'input_file', file_id: 'file-1' } },
            { type: 'unknown', origin: 'messages:document', raw: { type: 'document' } },
          ],
        },
      ],
    });
    expect(body.input).toEqual([
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'Look' },
          { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' },
        ],
      },
      reference,
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_image', image_url: 'https://example.com/a.jpg' },
          { type: 'input_file', file_id: 'file-1' },
        ],
      },
    ]);
    expect(report.dropped).toEqual(['messages[0].name', 'messages:document']);
  });

  it('sends tool output as parts unless it is a single text', () => {
    const { body } = toResponsesRequest({
      ...base,
      messages: [
        {
          role: 'tool',
          toolCallId: 'call_1',
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        { role: 'tool', toolCallId: 'call_2', content: [] },
      ],
    });
    expect(body.input).toEqual([
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: [
          { type: 'input_text', text: 'a' },
          { type: 'input_text', text: 'b' },
        ],
      },
      { type: 'function_call_output', call_id: 'call_2', output: [] },
    ]);
  });

  it('keeps mid-conversation system messages as system items', () => {
    const { body } = toResponsesRequest({
      ...base,
      messages: [{ role: 'system', content: [{ type: 'text', text: 'Switch to English.' }] }],
    });
    expect(body.input).toEqual([
      { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'Switch to English.' }] },
    ]);
  });
});

describe('tools, format, reasoning and extra', () => {
  it('writes flat function tools, tool choice and text.format, merging what a Responses client sent', () => {
    const { body, report } = toResponsesRequest({
      ...base,
      tools: [{ name: 'get_weather', description: 'Weather', parameters: { type: 'object' }, strict: false }],
      toolChoice: { type: 'tool', name: 'get_weather' },
      parallelToolCalls: false,
      responseFormat: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true },
      extra: {
        tools: [{ type: 'web_search' }],
        text: { verbosity: 'high' },
        store: false,
        metadata: { run: '1' },
        service_tier: 'standard_only',
        stream_options: { include_usage: true },
        logit_bias: { 50256: -100 },
      },
    });
    expect(body).toEqual({
      model: 'gpt-4o',
      input: [],
      tools: [
        { type: 'function', name: 'get_weather', description: 'Weather', parameters: { type: 'object' }, strict: false },
        { type: 'web_search' },
      ],
      tool_choice: { type: 'function', name: 'get_weather' },
      parallel_tool_calls: false,
      text: { verbosity: 'high', format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true } },
      stream: false,
      store: false,
      metadata: { run: '1' },
    });
    expect(report.dropped).toEqual(['service_tier', 'stream_options', 'logit_bias']);
  });

  it('uses a hosted tool choice from extra when there is no canonical one', () => {
    const { body } = toResponsesRequest({ ...base, extra: { tool_choice: { type: 'web_search_preview' } } });
    expect(body.tool_choice).toEqual({ type: 'web_search_preview' });
    expect(toResponsesRequest({ ...base, toolChoice: { type: 'required' } }).body.tool_choice).toBe('required');
  });

  it.each([
    [{ effort: 'low', summary: 'detailed' }, { effort: 'low', summary: 'detailed' }, []],
    [{ disabled: true }, { effort: 'none' }, []],
    [{ budgetTokens: 2048 }, { effort: 'low' }, ['reasoning.budget_tokens']],
    [{ budgetTokens: 10_000 }, { effort: 'medium' }, ['reasoning.budget_tokens']],
    [{ budgetTokens: 32_000 }, { effort: 'high' }, ['reasoning.budget_tokens']],
  ] as const)('maps reasoning %j', (reasoning, expected, approximated) => {
    const { body, report } = toResponsesRequest({ ...base, reasoning });
    expect(body.reasoning).toEqual(expected);
    expect(report.approximated).toEqual(approximated);
  });
});
