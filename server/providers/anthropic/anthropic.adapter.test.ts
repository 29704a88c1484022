import { describe, expect, it } from 'vitest';
import type { ProviderConnection } from '../types.js';
import { UpstreamError } from '../../errors.js';
import { AnthropicStreamDecoder } from './anthropic-stream.js';
import {
  anthropicChatAdapter,
  anthropicChatDefinition,
  buildAnthropicCountTokensRequest,
  buildAnthropicMessagesRequest,
} from './anthropic.adapter.js';

const connection: ProviderConnection = {
  id: 'anthropic-main',
  kind: 'anthropic',
  baseUrl: 'https://api.anthropic.com/v1/',
  apiKey: 'sk-ant-test',
};

describe('anthropicChatAdapter', () => {
  it('declares its kind and native format', () => {
    expect(Object.keys(anthropicChatAdapter.native)).toEqual(['messages']);
  });

  it('builds POST /messages with auth, version and the translated body', () => {
    const { request, report } = anthropicChatDefinition.buildChatRequest(
      { ...connection, headers: { 'anthropic-beta': 'context-1m-2025-08-07' } },
      {
        model: 'claude-sonnet-4-5',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
        stream: true,
        seed: 3,
      },
    );
    expect(request).toEqual({
      method: 'POST',
      url: 'https://api.anthropic.com/v1/messages',
      headers: {
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        'x-api-key': 'sk-ant-test',
        'anthropic-beta': 'context-1m-2025-08-07',
      },
      body: expect.any(String),
    });
    expect(JSON.parse(request.body as string)).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      messages: [{ role: 'user', content: 'Hi' }],
      stream: true,
    });
    expect(report).toEqual({ dropped: ['seed'], approximated: ['max_tokens'] });
  });

  it('lets configured headers replace ours, whatever their case', () => {
    const request = buildAnthropicMessagesRequest({ ...connection, headers: { 'Anthropic-Version': '2024-01-01' } }, { model: 'm' });
    expect(request.headers['anthropic-version']).toBe('2024-01-01');
    expect(Object.keys(request.headers).filter((name) => name.toLowerCase() === 'anthropic-version')).toHaveLength(1);
  });

  it('forwards the client version and betas on pass-through', () => {
    const request = buildAnthropicMessagesRequest(connection, { model: 'm' }, { version: '2023-06-01', beta: 'a,b' });
    expect(request.headers).toMatchObject({ 'anthropic-version': '2023-06-01', 'anthropic-beta': 'a,b' });
  });

  it('wires the response parser, the stream decoder and the error parser', () => {
    expect(anthropicChatDefinition.createStreamDecoder()).toBeInstanceOf(AnthropicStreamDecoder);
    expect(
      anthropicChatDefinition.parseChatResponse({
        id: 'msg_1',
        type: 'message',
        model: 'claude-x',
        content: [{ type: 'text', text: 'ok' }],
        stop_reason: 'max_tokens',
        usage: { input_tokens: 1, output_tokens: 2 },
      }).finishReason,
    ).toBe('length');
    const error = anthropicChatAdapter.parseError(529, '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', {});
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.retryable).toBe(true);
  });
});

describe('buildAnthropicCountTokensRequest', () => {
  it('posts to /messages/count_tokens without generation-only fields', () => {
    const request = buildAnthropicCountTokensRequest(connection, {
      model: 'claude-x',
      max_tokens: 100,
      stream: true,
      temperature: 0.5,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [{ name: 't', input_schema: { type: 'object' } }],
      thinking: { type: 'enabled', budget_tokens: 2048 },
    });
    expect(request.method).toBe('POST');
    expect(request.url).toBe('https://api.anthropic.com/v1/messages/count_tokens');
    expect(request.headers).toMatchObject({ 'x-api-key': 'sk-ant-test', 'anthropic-version': '2023-06-01' });
    expect(JSON.parse(request.body as string)).toEqual({
      model: 'claude-x',
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [{ name: 't', input_schema: { type: 'object' } }],
      thinking: { type: 'enabled', budget_tokens: 2048 },
    });
  });
});
