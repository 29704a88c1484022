import { describe, expect, it } from 'vitest';
import type { CanonicalRequest } from '../canonical.js';
import { SseParser } from '../../sse/sse-parser.js';
import { openAIChatAdapter, openAIChatDefinition } from './openai.adapter.js';

const request: CanonicalRequest = {
  model: 'gpt-4o-2024-08-06',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
  topK: 5,
  stream: true,
};

describe('openAIChatAdapter', () => {
  it('speaks chat and responses natively', () => {
    expect(Object.keys(openAIChatAdapter.native)).toEqual(['chat', 'responses', 'compact']);
  });

  it('builds the chat completions request with the bearer key and the JSON body', () => {
    const { request: httpRequest, report } = openAIChatDefinition.buildChatRequest(
      { id: 'openai-main', kind: 'openai', baseUrl: 'https://api.openai.com/v1/', apiKey: 'sk-test', headers: { 'OpenAI-Organization': 'org_1' } },
      request,
    );
    expect(httpRequest).toEqual({
      method: 'POST',
      url: 'https://api.openai.com/v1/chat/completions',
      headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', 'openai-organization': 'org_1' },
      body: JSON.stringify({
        model: 'gpt-4o-2024-08-06',
        messages: [{ role: 'user', content: 'Hi' }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    expect(report).toEqual({ dropped: ['top_k'], approximated: [] });
  });

  it('sends no authorization without a key, and lets a configured header replace ours', () => {
    const build = (apiKey: string | undefined, headers?: Record<string, string>) =>
      openAIChatDefinition.buildChatRequest({ id: 'local', kind: 'openai', baseUrl: 'http://localhost:8000/v1', apiKey, headers }, request).request
        .headers;
    expect(build(undefined)).toEqual({ 'content-type': 'application/json' });
    expect(build('sk-a', { Authorization: 'Bearer other' })).toEqual({ 'content-type': 'application/json', authorization: 'Bearer other' });
  });

  it('wires the response parser, a fresh stream decoder each time and the error parser', () => {
    expect(openAIChatDefinition.parseChatResponse({ id: 'c', model: 'm', choices: [{ message: { content: 'ok' }, finish_reason: 'stop' }] }).content).toEqual([
      { type: 'text', text: 'ok' },
    ]);
    const first = openAIChatDefinition.createStreamDecoder();
    expect(first).not.toBe(openAIChatDefinition.createStreamDecoder());
    const events = new SseParser().push('data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"x"}}]}\n\n');
    expect(events.flatMap((event) => first.push(event))[0]).toEqual({ type: 'start', id: 'c', model: 'm' });
    expect(openAIChatAdapter.parseError(429, '{"error":{"message":"Slow down"}}', { 'retry-after': '2' })).toMatchObject({
      status: 429,
      retryable: true,
      retryAfter: 2,
      message: 'Slow down',
    });
  });
});
