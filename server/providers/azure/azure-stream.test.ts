/**
 * Azure OpenAI streams and answers, as Azure writes them (its leading
 * `prompt_filter_results` chunk, `content_filter_results` on every choice, the
 * asynchronous filter's trailing offsets chunk), through the Azure chat
 * adapter's translators, whole and split at every byte.
 *
 * @see https://learn.microsoft.com/en-us/azure/ai-foundry/openai/concepts/content-filter
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CanonicalStreamEvent } from '../canonical.js';
import { decodeAtEverySplit, decodeSse } from '../../../test/support/stream-replay.js';
import { azureChatDefinition } from './azure.adapter.js';

const fixtures = new URL('./__fixtures__/', import.meta.url);
const read = (name: string): Buffer => readFileSync(new URL(name, fixtures));

const decode = (chunks: Uint8Array[]): CanonicalStreamEvent[] => decodeSse(() => azureChatDefinition.createStreamDecoder(), chunks);

const ID = 'chatcmpl-AzUr3kQ9mN2pL5vX8cT1bY7wE0dFg';
const MODEL = 'gpt-4o-2024-11-20';

const expected: Record<string, CanonicalStreamEvent[]> = {
  'azure-text.1.sse': [
    // The leading chunk (empty id and model, no choices, the prompt's verdicts) starts nothing.
    { type: 'start', id: ID, model: MODEL },
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, text: 'Grüß' },
    { type: 'text-delta', index: 0, text: ' Gott' },
    { type: 'text-delta', index: 0, text: ' 👋' },
    { type: 'text-delta', index: 0, text: '!' },
    { type: 'part-end', index: 0 },
    { type: 'finish', finishReason: 'stop', usage: { inputTokens: 21, outputTokens: 6, cachedInputTokens: 0, reasoningTokens: 0 } },
  ],
  'azure-output-filtered.1.sse': [
    { type: 'start', id: ID, model: MODEL },
    { type: 'text-start', index: 0 },
    { type: 'text-delta', index: 0, text: 'The' },
    { type: 'text-delta', index: 0, text: ' plan' },
    { type: 'text-delta', index: 0, text: ' is' },
    { type: 'part-end', index: 0 },
    // The trailing offsets chunk after the finish changes nothing.
    { type: 'finish', finishReason: 'content_filter', usage: { inputTokens: 0, outputTokens: 0 } },
  ],
  'azure-tool-calls.1.sse': [
    { type: 'start', id: ID, model: MODEL },
    { type: 'tool-call-start', index: 0, id: 'call_Az7kP2qL9mX4vB1nC8tR5wYe', name: 'get_weather' },
    { type: 'tool-call-delta', index: 0, argumentsDelta: '{"ci' },
    { type: 'tool-call-delta', index: 0, argumentsDelta: 'ty":"' },
    { type: 'tool-call-delta', index: 0, argumentsDelta: 'Wien"}' },
    { type: 'part-end', index: 0 },
    { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 0, outputTokens: 0 } },
  ],
};

describe.each(Object.keys(expected))('the Azure stream %s', (name) => {
  const bytes = read(name);

  it('decodes to the expected canonical events', () => {
    expect(decode([bytes])).toEqual(expected[name]);
  });

  it('decodes the same split in two at every byte boundary, and fed byte by byte', () => {
    expect(decodeAtEverySplit(decode, bytes)).toEqual(expected[name]);
  });
});

describe('Azure JSON answers', () => {
  it('reads the answer beside its prompt and completion filter verdicts', () => {
    expect(azureChatDefinition.parseChatResponse(JSON.parse(read('azure-text.1.json').toString('utf8')))).toEqual({
      id: ID,
      model: MODEL,
      content: [{ type: 'text', text: 'Grüß Gott 👋!' }],
      finishReason: 'stop',
      usage: { inputTokens: 21, outputTokens: 6, cachedInputTokens: 0, reasoningTokens: 0 },
    });
  });

  it('reads a filtered completion as the content_filter finish reason, with its usage', () => {
    expect(azureChatDefinition.parseChatResponse(JSON.parse(read('azure-output-filtered.1.json').toString('utf8')))).toMatchObject({
      content: [],
      finishReason: 'content_filter',
      usage: { inputTokens: 19, outputTokens: 12 },
    });
  });
});
