import { describe, expect, it } from 'vitest';
import { Tiktoken } from 'js-tiktoken/lite';
import o200kBase from 'js-tiktoken/ranks/o200k_base';
import type { CanonicalRequest } from './providers/canonical.js';
import {
  TOKEN_ESTIMATE,
  countTextTokens,
  decodeTokens,
  encodeText,
  estimateRequestTokens,
  truncateTextToTokens,
} from './tokenizer.js';

// js-tiktoken's own encoder is the reference our merge must agree with.
const reference = new Tiktoken(o200kBase);
const referenceIds = (text: string) => reference.encode(text, [], []);

const SAMPLES = [
  'hello world',
  'Hello, World!  \n\n  foo',
  '日本語のテキストです。😀👍🏽 and ελληνικά, русский, العربية',
  'function square(x) { return x ** 2; }\n\t\t// comment\r\n',
  '<|endoftext|> and <|endofprompt|> are plain text here',
  '   leading spaces and trailing ones   ',
  "It's we're I'll they'd YOU'VE",
  '1234567890 3.14159 -42 1e10',
  'ÀÉÎõü ñ ç Straße café naïve',
  'https://example.com/path?query=1&other=two#frag',
  '{"city":"Paris","unit":"celsius","days":[1,2,3]}',
  'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  '\r\n\r\n   \n\t',
];

describe('countTextTokens', () => {
  it('counts known strings in o200k_base', () => {
    expect(countTextTokens('hello world')).toBe(2);
    expect(countTextTokens('')).toBe(0);
    expect(countTextTokens('a')).toBe(1);
    expect(countTextTokens('The quick brown fox jumps over the lazy dog.')).toBe(10);
  });

  it('agrees with js-tiktoken on varied text', () => {
    for (const text of SAMPLES) {
      expect(countTextTokens(text), text).toBe(referenceIds(text).length);
    }
  });

  it('agrees with js-tiktoken on a long mixed prompt', () => {
    const words = ['gateway', 'Tokyo', 'über', 'naïveté', '42', 'x_y', 'camelCase', '—', '😀', '\n'];
    const text = Array.from({ length: 3000 }, (_, i) => words[(i * 7) % words.length] + (i % 5 === 0 ? '.' : ' ')).join('');
    expect(countTextTokens(text)).toBe(referenceIds(text).length);
  });

  it('stays close on pathological long pieces, which it merges in slices', () => {
    for (const text of ['a'.repeat(1000), ' '.repeat(700) + 'x', 'ab'.repeat(500)]) {
      const expected = referenceIds(text).length;
      expect(Math.abs(countTextTokens(text) - expected)).toBeLessThanOrEqual(Math.ceil(expected * 0.05));
    }
  });
});

describe('encodeText and decodeTokens', () => {
  it('gives the same ids as js-tiktoken', () => {
    for (const text of SAMPLES) expect(encodeText(text), text).toEqual(referenceIds(text));
  });

  it('round-trips text', () => {
    for (const text of SAMPLES) expect(decodeTokens(encodeText(text))).toBe(text);
  });
});

describe('truncateTextToTokens', () => {
  it('keeps a prefix of at most the given number of tokens', () => {
    const text = 'Mock answer to: "What is the weather in Paris?". The amber river hums softly.';
    for (let max = 0; max <= countTextTokens(text) + 1; max++) {
      const prefix = truncateTextToTokens(text, max);
      expect(text.startsWith(prefix)).toBe(true);
      expect(countTextTokens(prefix)).toBeLessThanOrEqual(max);
    }
    expect(truncateTextToTokens(text, 1000)).toBe(text);
  });

  it('never leaves half a character', () => {
    const text = '😀😀😀 done';
    for (let max = 1; max < 8; max++) {
      const prefix = truncateTextToTokens(text, max);
      expect(prefix).not.toContain('\uFFFD');
      expect(text.startsWith(prefix)).toBe(true);
    }
  });
});

describe('estimateRequestTokens', () => {
  const userMessage = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }] });
  const request = (extra: Partial<CanonicalRequest> = {}): CanonicalRequest => ({
    model: 'm',
    stream: false,
    messages: [userMessage('hello world')],
    ...extra,
  });

  it('frames messages like OpenAI chat', () => {
    expect(estimateRequestTokens(request())).toBe(TOKEN_ESTIMATE.replyPriming + TOKEN_ESTIMATE.perMessage + 2);
    expect(estimateRequestTokens(request({ system: [{ type: 'text', text: 'hello world' }] }))).toBe(
      TOKEN_ESTIMATE.replyPriming + 2 * (TOKEN_ESTIMATE.perMessage + 2),
    );
    expect(
      estimateRequestTokens(request({ messages: [{ role: 'user', name: 'alice', content: [{ type: 'text', text: 'hello world' }] }] })),
    ).toBe(TOKEN_ESTIMATE.replyPriming + TOKEN_ESTIMATE.perMessage + 2 + TOKEN_ESTIMATE.perName + countTextTokens('alice'));
  });

  it('grows with messages, tool calls and tool results', () => {
    const one = estimateRequestTokens(request());
    const two = estimateRequestTokens(request({ messages: [userMessage('hello world'), userMessage('and more text')] }));
    expect(two).toBe(one + TOKEN_ESTIMATE.perMessage + countTextTokens('and more text'));
    const withCall = estimateRequestTokens(
      request({
        messages: [
          userMessage('hello world'),
          { role: 'assistant', content: [{ type: 'tool_call', id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }] },
          { role: 'tool', toolCallId: 'c1', content: [{ type: 'text', text: '{"temperature": 21}' }] },
        ],
      }),
    );
    expect(withCall).toBe(
      one +
        TOKEN_ESTIMATE.perMessage +
        TOKEN_ESTIMATE.perToolCall +
        countTextTokens('get_weather') +
        countTextTokens('{"city":"Paris"}') +
        TOKEN_ESTIMATE.perMessage +
        countTextTokens('{"temperature": 21}'),
    );
  });

  it('counts tool definitions and response schemas', () => {
    const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
    const tool = { name: 'get_weather', description: 'Current weather for a city.', parameters };
    const base = estimateRequestTokens(request());
    const withTool = estimateRequestTokens(request({ tools: [tool] }));
    expect(withTool).toBe(
      base +
        TOKEN_ESTIMATE.toolsPreamble +
        TOKEN_ESTIMATE.perTool +
        countTextTokens('get_weather') +
        countTextTokens('Current weather for a city.') +
        countTextTokens(JSON.stringify(parameters)),
    );
    const withTwoTools = estimateRequestTokens(request({ tools: [tool, { ...tool, name: 'get_time' }] }));
    expect(withTwoTools).toBeGreaterThan(withTool);
    const withSchema = estimateRequestTokens(
      request({ responseFormat: { type: 'json_schema', name: 'weather', schema: parameters } }),
    );
    expect(withSchema).toBe(base + TOKEN_ESTIMATE.responseSchema + countTextTokens(JSON.stringify(parameters)));
  });

  it('prices images at a fixed cost by detail and size', () => {
    const withImage = (image: CanonicalRequest['messages'][number]['content'][number]) =>
      estimateRequestTokens(request({ messages: [{ role: 'user', content: [image as never] }] })) -
      TOKEN_ESTIMATE.replyPriming -
      TOKEN_ESTIMATE.perMessage;
    expect(withImage({ type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' }, detail: 'low' })).toBe(85);
    expect(withImage({ type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } })).toBe(85 + 4 * 170);
    const small = 'A'.repeat(1000);
    expect(withImage({ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: small } })).toBe(85 + 170);
    expect(withImage({ type: 'image', source: { kind: 'url', url: `data:image/png;base64,${small}` } })).toBe(85 + 170);
    const large = 'A'.repeat(200 * 1024);
    expect(withImage({ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: large } })).toBe(85 + 4 * 170);
    const huge = 'A'.repeat(4 * 1024 * 1024);
    expect(withImage({ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: huge } })).toBe(85 + 8 * 170);
  });

  it('estimates unknown parts by their size', () => {
    const raw = { type: 'input_audio', data: 'x'.repeat(396) };
    const tokens =
      estimateRequestTokens(request({ messages: [{ role: 'user', content: [{ type: 'unknown', origin: 'chat:input_audio', raw }] }] })) -
      TOKEN_ESTIMATE.replyPriming -
      TOKEN_ESTIMATE.perMessage;
    expect(tokens).toBe(Math.ceil(JSON.stringify(raw).length / 4));
  });
});
