import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fromGeminiResponse } from './from-gemini-response.js';
import { parseGeminiError, redactGoogleCredentials } from './gemini-errors.js';
import { mapGeminiFinishReason } from './map-gemini-finish-reason.js';

function fixture(name: string): string {
  return readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');
}

describe('fromGeminiResponse', () => {
  it('text after a thought: text pieces joined, the answer signature kept in front, usage with cache and thoughts', () => {
    expect(fromGeminiResponse(JSON.parse(fixture('gemini-text.1.json')))).toEqual({
      id: 'xFAnaeOEHc-xnsEPmNWhsQ0',
      model: 'gemini-2.5-flash',
      content: [
        { type: 'thinking', text: 'Let me think about the ratio.' },
        { type: 'text', text: 'The answer is ' },
        { type: 'thinking', text: '', signature: 'gemini:EhsKGQHLGtN7sigtext==' },
        { type: 'text', text: '42.' },
      ],
      finishReason: 'stop',
      stopSequence: null,
      usage: { inputTokens: 1200, outputTokens: 53, cachedInputTokens: 1024, reasoningTokens: 48 },
    });
  });

  it('function calls: Google\'s id when given, ours otherwise; tool-use prompt tokens are input', () => {
    const response = fromGeminiResponse(JSON.parse(fixture('gemini-tool-calls.1.json')));
    expect(response.content).toEqual([
      { type: 'thinking', text: '', signature: 'gemini:CiQB0e2Kb1sig==' },
      { type: 'tool_call', id: 'call_tools-1_0', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'tool_call', id: 'fc_7', name: 'get_time', arguments: '{}' },
    ]);
    expect(response.finishReason).toBe('tool_calls');
    expect(response.usage).toEqual({ inputTokens: 86, outputTokens: 20, cachedInputTokens: 0 });
  });

  it('function calls of answers without a responseId get ids that differ between answers', () => {
    const body = { candidates: [{ content: { role: 'model', parts: [{ functionCall: { name: 'f', args: {} } }] }, finishReason: 'STOP' }] };
    const first = fromGeminiResponse(body).content[0] as { id: string };
    const second = fromGeminiResponse(body).content[0] as { id: string };
    expect(first.id).toMatch(/^call_[A-Za-z0-9_-]+_0$/);
    expect(first.id).not.toBe(second.id);
  });

  it('a blocked prompt: no content, content_filter', () => {
    expect(fromGeminiResponse(JSON.parse(fixture('gemini-blocked.1.json')))).toMatchObject({ content: [], finishReason: 'content_filter', usage: { inputTokens: 9, outputTokens: 0 } });
  });

  it('a body that is not a response is a 502', () => {
    expect(() => fromGeminiResponse({ candidates: 'nope' })).toThrow(expect.objectContaining({ status: 502 }));
  });
});

describe('mapGeminiFinishReason', () => {
  it.each([
    ['STOP', false, 'stop'],
    ['STOP', true, 'tool_calls'],
    ['MAX_TOKENS', false, 'length'],
    ['SAFETY', false, 'content_filter'],
    ['RECITATION', false, 'content_filter'],
    ['PROHIBITED_CONTENT', false, 'content_filter'],
    ['MALFORMED_FUNCTION_CALL', false, 'error'],
    ['OTHER', false, 'stop'],
    [undefined, false, 'stop'],
  ] as const)('%s (tool called: %s) → %s', (reason, calledTool, expected) => {
    expect(mapGeminiFinishReason(reason, calledTool)).toBe(expected);
  });
});

describe('parseGeminiError', () => {
  it('429 RESOURCE_EXHAUSTED: a retryable rate limit, its RetryInfo delay as retry-after', () => {
    const error = parseGeminiError(429, fixture('gemini-error-429.1.json'), {});
    expect(error).toMatchObject({ status: 429, retryable: true, retryAfter: 17, upstreamType: 'RESOURCE_EXHAUSTED' });
    expect(error.toGatewayError()).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfter: 17 });
  });

  it('400 INVALID_ARGUMENT: the request\'s, not retried, relayed as 400 with the key redacted', () => {
    const error = parseGeminiError(400, fixture('gemini-error-400.1.json'), {});
    expect(error).toMatchObject({ status: 400, retryable: false, upstreamType: 'INVALID_ARGUMENT' });
    expect(error.message).toBe('API key not valid. Please pass a valid API key. (key=[redacted])');
    expect(error.toGatewayError().status).toBe(400);
  });

  it.each([
    [500, 'INTERNAL'],
    [503, 'UNAVAILABLE'],
    [504, 'DEADLINE_EXCEEDED'],
  ])('%i %s: retryable, falls over, 502 to the client', (status, name) => {
    const error = parseGeminiError(status, JSON.stringify({ error: { code: status, message: 'x', status: name } }), {});
    expect(error).toMatchObject({ status, retryable: true, upstreamType: name });
    expect(error.toGatewayError().code).toBe('UPSTREAM_ERROR');
  });

  it('reads Vertex\'s array-wrapped body, and says the status when the body is not Google\'s', () => {
    expect(parseGeminiError(403, JSON.stringify([{ error: { code: 403, message: 'Permission denied on resource project p.', status: 'PERMISSION_DENIED' } }]), {}).message).toBe(
      'Permission denied on resource project p.',
    );
    expect(parseGeminiError(502, '<html>Bad Gateway</html>', {}).message).toBe('Gemini answered HTTP 502.');
  });

  it('redacts API keys, access tokens and bearer headers a message may echo', () => {
    expect(redactGoogleCredentials('key AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW, token ya29.a0AfH6SMBx-y_z.1 and Authorization: Bearer abc.def')).toBe(
      'key [redacted], token [redacted] and Authorization: Bearer [redacted]',
    );
  });
});
