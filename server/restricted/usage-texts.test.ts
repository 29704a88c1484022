import { describe, expect, it } from 'vitest';
import type { CanonicalMessage } from '../providers/canonical.js';
import { readUsageTexts } from './usage-texts.js';

describe('readUsageTexts', () => {
  it('reads a chat request: one text per message and per tool, request options left out', () => {
    const reading = readUsageTexts('chat', {
      model: 'gpt-4o',
      user: 'user-1234',
      metadata: { note: 'metadata' },
      stop: ['STOP'],
      messages: [
        { role: 'system', content: 'system prompt' },
        { role: 'user', name: 'alice', content: [{ type: 'text', text: 'question' }, { type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] },
        { role: 'assistant', content: null, refusal: 'refusal text', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"arguments"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'tool result' },
      ],
      tools: [{ type: 'function', function: { name: 'lookup', description: 'Looks things up.', parameters: { type: 'object', properties: { q: { type: 'string', description: 'the query' } } } } }],
      response_format: { type: 'json_schema', json_schema: { name: 'answer', description: 'format description', schema: { type: 'object' } } },
      prediction: { type: 'content', content: 'predicted text' },
    });
    expect(reading.texts).toEqual([
      { role: 'system', text: 'system prompt' },
      { role: 'user', text: 'alice\nquestion' },
      { role: 'assistant', text: 'refusal text\nlookup\n{"q":"arguments"}' },
      { role: 'tool', text: 'tool result' },
      { role: 'developer', text: 'lookup\nLooks things up.\n{"type":"object","properties":{"q":{"type":"string","description":"the query"}}}' },
      { role: 'developer', text: 'answer\nformat description\n{"type":"object"}' },
      { role: 'developer', text: 'predicted text' },
    ]);
    expect(reading.unread).toEqual({ image: 1, audio: 0, file: 0 });
  });

  it('reads a messages request: system, blocks, tool input as JSON, text documents; not signatures or bytes', () => {
    const reading = readUsageTexts('messages', {
      model: 'claude',
      max_tokens: 10,
      system: [{ type: 'text', text: 'system prompt', cache_control: { type: 'ephemeral' } }],
      messages: [
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'reasoning', signature: 'c2lnbmF0dXJl' },
            { type: 'redacted_thinking', data: 'b3BhcXVl' },
            { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { query: 'input value' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'tool result', citations: [{ type: 'char_location', cited_text: 'cited text', document_index: 0 }] }] },
            { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'document text' }, title: 'doc title' },
            { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' }, title: 'pdf title' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
      ],
      tools: [{ name: 'lookup', description: 'Looks things up.', input_schema: { type: 'object' }, input_examples: [{ query: 'example value' }] }],
    });
    expect(reading.texts).toEqual([
      { role: 'system', text: 'system prompt' },
      { role: 'assistant', text: 'reasoning\nlookup\n{"query":"input value"}' },
      { role: 'user', text: 'tool result\ncited text\ndocument text\ndoc title\npdf title' },
      { role: 'developer', text: 'lookup\nLooks things up.\n{"type":"object"}\nexample value' },
    ]);
    expect(reading.unread).toEqual({ image: 1, audio: 0, file: 1 });
  });

  it('reads a responses request: instructions, items of every kind (unknown ones too), tools, prompt variables', () => {
    const reading = readUsageTexts('responses', {
      model: 'gpt-4o',
      previous_response_id: 'resp_1',
      instructions: 'instructions',
      prompt: { id: 'pmpt_1', version: '2', variables: { topic: 'variable text' } },
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'question' }, { type: 'input_file', file_id: 'file_1', filename: 'notes.txt' }] },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'summary' }], encrypted_content: 'b3BhcXVl' },
        { type: 'custom_tool_call_output', call_id: 'c1', output: 'custom output' },
        { type: 'mcp_list_tools', id: 'l1', server_label: 'deepwiki', tools: [{ name: 'ask', description: 'tool description', input_schema: { type: 'object' } }] },
        { type: 'a_future_item', payload: { nested: ['future text'] } },
        { type: 'message', role: 'assistant', content: [{ type: 'output_audio', data: 'UklGRg==', transcript: 'spoken words' }] },
      ],
      tools: [{ type: 'function', name: 'lookup', description: 'Looks things up.', parameters: { type: 'object' } }],
      text: { format: { type: 'json_schema', name: 'answer', schema: { type: 'object' } }, verbosity: 'low' },
      reasoning: { effort: 'high' },
    });
    expect(reading.texts).toEqual([
      { role: 'system', text: 'instructions' },
      { role: 'developer', text: 'variable text' },
      { role: 'user', text: 'question\nnotes.txt' },
      { role: 'assistant', text: 'summary' },
      { role: 'tool', text: 'custom output' },
      { role: 'developer', text: 'deepwiki\nask\ntool description\n{"type":"object"}' },
      { role: 'user', text: 'future text' },
      { role: 'assistant', text: 'spoken words' },
      { role: 'developer', text: 'lookup\nLooks things up.\n{"type":"object"}' },
      { role: 'developer', text: 'answer\n{"type":"object"}' },
    ]);
    expect(reading.unread).toEqual({ image: 0, audio: 1, file: 1 });
  });

  it('reads the stored conversation first, marked as history', () => {
    const history: CanonicalMessage[] = [
      { role: 'user', content: [{ type: 'text', text: 'earlier question' }, { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', text: 'earlier reasoning', signature: 'sig' },
          { type: 'tool_call', id: 'c1', name: 'lookup', arguments: '{"q":1}' },
          { type: 'unknown', origin: 'responses:mcp_call', raw: { type: 'mcp_call', id: 'm1', output: 'mcp output' } },
        ],
      },
    ];
    const reading = readUsageTexts('responses', { model: 'm', input: 'new question' }, history);
    expect(reading.texts).toEqual([
      { role: 'user', text: 'earlier question', source: 'history' },
      { role: 'assistant', text: 'earlier reasoning\nlookup\n{"q":1}\nmcp output', source: 'history' },
      { role: 'user', text: 'new question' },
    ]);
    expect(reading.unread.image).toBe(1);
  });
});
