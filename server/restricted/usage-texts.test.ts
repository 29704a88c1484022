import { describe, expect, it } from 'vitest';
import type { CanonicalRequest } from '../providers/canonical.js';
import { collectUsageTexts } from './usage-texts.js';

describe('collectUsageTexts', () => {
  it('reads every text the model will see, in conversation order', () => {
    const request: CanonicalRequest = {
      model: 'm',
      stream: false,
      system: [{ type: 'text', text: 'system prompt' }],
      tools: [{ name: 'lookup', description: 'Looks things up.', parameters: { type: 'object' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'question' }, { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', text: 'reasoning' },
            { type: 'text', text: 'answer' },
            { type: 'tool_call', id: 'c1', name: 'lookup', arguments: '{"q":"arguments"}' },
          ],
        },
        { role: 'tool', toolCallId: 'c1', content: [{ type: 'text', text: 'tool result' }] },
        { role: 'system', content: [{ type: 'text', text: 'mid-conversation system' }] },
        {
          role: 'user',
          content: [
            { type: 'unknown', origin: 'messages:document', raw: { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'document text' }, title: 'doc title' } },
            { type: 'unknown', origin: 'messages:document', raw: { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } } },
          ],
        },
      ],
    };
    expect(collectUsageTexts(request).texts).toEqual([
      { role: 'system', text: 'system prompt' },
      { role: 'developer', text: 'Looks things up.' },
      { role: 'user', text: 'question' },
      { role: 'assistant', text: 'reasoning' },
      { role: 'assistant', text: 'answer' },
      { role: 'assistant', text: '{"q":"arguments"}' },
      { role: 'tool', text: 'tool result' },
      { role: 'system', text: 'mid-conversation system' },
      { role: 'user', text: 'document text' },
      { role: 'user', text: 'doc title' },
    ]);
  });
});
