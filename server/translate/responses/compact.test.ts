import { describe, expect, it } from 'vitest';
import type { CanonicalMessage } from '../../providers/canonical.js';
import { parseOrThrow } from '../../validation.js';
import {
  COMPACTION_SUMMARY_PREFIX,
  COMPACTION_SYSTEM_PROMPT,
  buildCompactionRequest,
  renderConversationAsText,
  toCompactionResponse,
} from './compact.js';
import { fromResponsesRequest } from './from-responses-request.js';
import { compactRequestSchema, responsesRequestSchema } from './responses.wire.js';

const history: CanonicalMessage[] = [
  { role: 'user', content: [{ type: 'text', text: 'Plan a trip to Lyon.' }] },
  {
    role: 'assistant',
    content: [
      { type: 'thinking', text: 'internal' },
      { type: 'text', text: 'Checking trains.' },
      { type: 'tool_call', id: 'call_1', name: 'search_trains', arguments: '{"to":"Lyon"}' },
    ],
  },
];

describe('buildCompactionRequest', () => {
  it('asks for a summary of history and input rendered as text, without tools', () => {
    const body = parseOrThrow(compactRequestSchema, {
      model: 'gpt-4o',
      instructions: 'You are a travel agent.',
      previous_response_id: 'resp_1',
      tools: [{ type: 'function', name: 'search_trains' }],
      reasoning: { effort: 'low' },
      input: [
        { type: 'function_call_output', call_id: 'call_1', output: '08:15 TGV' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Book it.' },
            { type: 'input_image', image_url: 'data:image/png;base64,AAAA' },
            { type: 'input_image', image_url: 'https://example.com/ticket.png' },
            { type: 'input_file', file_id: 'file-1' },
          ],
        },
      ],
    });
    expect(buildCompactionRequest(body, history)).toEqual({
      model: 'gpt-4o',
      system: [{ type: 'text', text: COMPACTION_SYSTEM_PROMPT }],
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'text',
              text: [
                "The assistant's standing instructions (context only; do not summarise them):",
                'You are a travel agent.',
                '',
                'The conversation:',
                '',
                '[user]',
                'Plan a trip to Lyon.',
                '',
                '[assistant]',
                'Checking trains.',
                '[tool call search_trains (id call_1) with arguments {"to":"Lyon"}]',
                '',
                '[tool result from search_trains for call call_1]',
                '08:15 TGV',
                '',
                '[user]',
                'Book it.',
                '[image]',
                '[image: https://example.com/ticket.png]',
                '[input_file omitted]',
                '',
                'Write the summary now.',
              ].join('\n'),
            },
          ],
        },
      ],
      stream: false,
      reasoning: { effort: 'low' },
    });
  });

  it('handles a null input with no history', () => {
    const request = buildCompactionRequest(parseOrThrow(compactRequestSchema, { model: 'm', input: null }));
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'The conversation:\n\n(empty)\n\nWrite the summary now.' }] },
    ]);
  });
});

describe('renderConversationAsText', () => {
  it('renders system messages, errors and unknown items', () => {
    expect(
      renderConversationAsText([
        { role: 'system', content: [{ type: 'text', text: 'Rule.' }] },
        { role: 'tool', toolCallId: 'c', isError: true, content: [{ type: 'text', text: 'timeout' }] },
        { role: 'assistant', content: [{ type: 'unknown', origin: 'responses:item', raw: { type: 'web_search_call' } }] },
      ]),
    ).toBe('[system]\nRule.\n\n[tool result for call c (error)]\ntimeout\n\n[assistant]\n[web_search_call omitted]');
  });
});

describe('toCompactionResponse', () => {
  it('answers one assistant message holding the summary, which the next request accepts as input', () => {
    const object = toCompactionResponse(
      {
        id: 'x',
        model: 'upstream',
        content: [{ type: 'text', text: '  The user plans a trip to Lyon; the 08:15 TGV was found.  ' }],
        finishReason: 'stop',
        usage: { inputTokens: 200, outputTokens: 20 },
      },
      { id: 'resp_c1', model: 'gpt-4o', createdAt: 1_700_000_000 },
    );
    const summary = `${COMPACTION_SUMMARY_PREFIX}The user plans a trip to Lyon; the 08:15 TGV was found.`;
    expect(object).toMatchObject({
      id: 'resp_c1',
      object: 'response',
      status: 'completed',
      model: 'gpt-4o',
      output: [
        {
          type: 'message',
          id: 'msg_c1_0',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: summary, annotations: [], logprobs: [] }],
        },
      ],
      usage: { input_tokens: 200, output_tokens: 20, total_tokens: 220 },
    });
    const next = parseOrThrow(responsesRequestSchema, { model: 'gpt-4o', input: [...object.output, { role: 'user', content: 'Go on.' }] });
    expect(fromResponsesRequest(next).request.messages).toEqual([
      { role: 'assistant', content: [{ type: 'text', text: summary }] },
      { role: 'user', content: [{ type: 'text', text: 'Go on.' }] },
    ]);
  });

  it('is incomplete when the summary was cut', () => {
    const object = toCompactionResponse(
      { id: 'x', model: 'm', content: [{ type: 'text', text: 'Part' }], finishReason: 'length', usage: { inputTokens: 1, outputTokens: 1 } },
      { id: 'resp_c2', model: 'm', createdAt: 1 },
    );
    expect(object).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [{ status: 'incomplete' }],
    });
  });
});
