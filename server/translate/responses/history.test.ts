import { describe, expect, it } from 'vitest';
import type { CanonicalRequest, CanonicalResponse } from '../../providers/canonical.js';
import { parseOrThrow } from '../../validation.js';
import { fromResponsesRequest } from './from-responses-request.js';
import { responsesRequestSchema } from './responses.wire.js';
import { fromStoredConversation, toStoredConversation } from './history.js';

const request: CanonicalRequest = {
  model: 'm',
  system: [{ type: 'text', text: 'Talk like a pirate.' }],
  messages: [
    { role: 'system', content: [{ type: 'text', text: 'Mid-conversation rule.' }] },
    { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
  ],
  stream: false,
};

const response: CanonicalResponse = {
  id: 'msg_1',
  model: 'm',
  content: [
    { type: 'thinking', text: 'Look it up.', signature: 'sig' },
    { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
  ],
  finishReason: 'tool_calls',
  usage: { inputTokens: 10, outputTokens: 5 },
};

describe('stored conversations', () => {
  it('stores the messages sent plus the answer, and the instructions beside them', () => {
    const stored = toStoredConversation(request, response);
    expect(stored).toEqual({
      version: 1,
      instructions: 'Talk like a pirate.',
      messages: [...request.messages, { role: 'assistant', content: response.content }],
    });
    expect(JSON.parse(JSON.stringify(stored))).toEqual(stored);
  });

  it('skips an empty answer and stores no instructions when there were none', () => {
    const stored = toStoredConversation(
      { ...request, system: undefined },
      { ...response, content: [], finishReason: 'stop' },
    );
    expect(stored).toEqual({ version: 1, instructions: null, messages: request.messages });
  });

  it('replays the conversation without the old instructions (OpenAI semantics)', () => {
    const stored = JSON.parse(JSON.stringify(toStoredConversation(request, response)));
    const history = fromStoredConversation(stored);
    const body = parseOrThrow(responsesRequestSchema, {
      model: 'm',
      instructions: 'Be formal.',
      previous_response_id: 'resp_1',
      input: [{ type: 'function_call_output', call_id: 'call_1', output: '18°C' }],
    });
    const next = fromResponsesRequest(body, history).request;
    expect(next.system).toEqual([{ type: 'text', text: 'Be formal.' }]);
    expect(next.messages).toEqual([
      ...request.messages,
      { role: 'assistant', content: response.content },
      { role: 'tool', toolCallId: 'call_1', name: 'get_weather', content: [{ type: 'text', text: '18°C' }] },
    ]);
  });

  it('records the provider of a passed-through answer, and only then', () => {
    expect(toStoredConversation(request, response, 'openai-main').nativeProvider).toBe('openai-main');
    expect(toStoredConversation(request, response)).not.toHaveProperty('nativeProvider');
  });

  it('hands out copies', () => {
    const stored = toStoredConversation(request, response);
    fromStoredConversation(stored).pop();
    expect(stored.messages).toHaveLength(3);
  });
});
