import { describe, expect, it } from 'vitest';
import type { CanonicalFinishReason } from '../canonical.js';
import { mapOpenAIFinishReason, toOpenAIFinishReason } from './map-openai-finish-reason.js';

describe('mapOpenAIFinishReason', () => {
  it.each([
    ['stop', 'stop'],
    ['length', 'length'],
    ['tool_calls', 'tool_calls'],
    ['function_call', 'tool_calls'],
    ['content_filter', 'content_filter'],
    ['eos', 'stop'],
    [null, 'stop'],
    [undefined, 'stop'],
  ] as const)('%s → %s', (chat, canonical) => {
    expect(mapOpenAIFinishReason(chat)).toBe(canonical);
  });
});

describe('toOpenAIFinishReason', () => {
  it.each([
    ['stop', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause', 'stop'],
    ['error', 'stop'],
    ['length', 'length'],
    ['tool_calls', 'tool_calls'],
    ['content_filter', 'content_filter'],
  ] as [CanonicalFinishReason, string][])('%s → %s', (canonical, chat) => {
    expect(toOpenAIFinishReason(canonical)).toBe(chat);
  });
});
