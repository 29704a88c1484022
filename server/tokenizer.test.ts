import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Tiktoken } from 'js-tiktoken/lite';
import o200kBase from 'js-tiktoken/ranks/o200k_base';
import type { CanonicalRequest } from './providers/canonical.js';
import { TOKEN_ESTIMATE, estimateRequestTokens } from './providers/request-tokens.js';
import { TOKEN_COUNT_LIMITS, countTextTokens, decodeTokens, encodeText, estimateTokensFromBytes, isPieceBoundary, truncateTextToTokens } from './tokenizer.js';

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

describe('bounded counting of huge texts', () => {
  const MB = 1024 * 1024;
  const bytesOf = (text: string) => Buffer.byteLength(text, 'utf8');
  /** The count of the whole text, with no budget: what a bounded count must not fall below. */
  const exactCount = (text: string) => encodeText(text).length;
  const mixedText = (length: number) => {
    const words = ['gateway ', 'Tokyo ', 'über ', '日本語', '😀', '\n', 'x_y=42; ', 'ελληνικά ', '\u0000', '\uD800', '\t\t', 'naïveté. '];
    const parts: string[] = [];
    let size = 0;
    for (let i = 0; size < length; i++) {
      const word = words[(i * 7) % words.length];
      parts.push(word);
      size += word.length;
    }
    return parts.join('').slice(0, length);
  };
  /** Pathological inputs: long runs without a piece boundary, CJK, control characters and lone surrogates. */
  const KINDS: Record<string, (length: number) => string> = {
    'one character': (length) => 'a'.repeat(length),
    CJK: (length) => '日'.repeat(length),
    mixed: mixedText,
    'lone surrogates and NUL': (length) => 'a\uD800\u0000\uDC00 '.repeat(Math.ceil(length / 5)).slice(0, length),
    'NUL only': (length) => '\u0000'.repeat(length),
  };
  /** Characters of each kind in about 100 KB of UTF-8. */
  const sampleLength = (kind: string) => (kind === 'CJK' ? 34_000 : 100_000);

  it.each(Object.keys(KINDS))('%s: a 100 KB sample counts at least its exact count and at most its bytes', (kind) => {
    const sample = KINDS[kind](sampleLength(kind));
    expect(bytesOf(sample)).toBeGreaterThan(TOKEN_COUNT_LIMITS.exactTextBytes);
    const exact = exactCount(sample);
    const counted = countTextTokens(sample);
    expect(counted).toBeGreaterThanOrEqual(exact);
    expect(counted).toBeLessThanOrEqual(estimateTokensFromBytes(bytesOf(sample)));
    expect(exact).toBeLessThanOrEqual(estimateTokensFromBytes(bytesOf(sample)));
    const asRequest = estimateRequestTokens({ model: 'm', stream: false, messages: [{ role: 'user', content: [{ type: 'text', text: sample }] }] });
    expect(asRequest).toBeGreaterThanOrEqual(TOKEN_ESTIMATE.replyPriming + TOKEN_ESTIMATE.perMessage + exact);
  });

  it.each([
    ['one character', 19 * MB],
    ['CJK', Math.floor((19 * MB) / 3)],
    ['mixed', 5 * MB],
    ['lone surrogates and NUL', 5 * MB],
  ] as const)('%s, %d code units: completes, tokenizing exactly only the budgeted prefix', (kind, length) => {
    const text = KINDS[kind](length);
    const bytes = bytesOf(text);
    const started = performance.now();
    const counted = countTextTokens(text);
    const countMs = performance.now() - started;
    const requestStarted = performance.now();
    const asRequest = estimateRequestTokens({ model: 'm', stream: false, messages: [{ role: 'user', content: [{ type: 'text', text }] }] });
    const requestMs = performance.now() - requestStarted;
    console.log(`${kind} (${(bytes / MB).toFixed(1)} MB): countTextTokens ${countMs.toFixed(0)} ms, estimateRequestTokens ${requestMs.toFixed(0)} ms`);
    // Never more than one token per byte, so never more than the bytes…
    expect(counted).toBeLessThanOrEqual(estimateTokensFromBytes(bytes));
    // …and everything past the budget (and the one window that may overrun it)
    // is counted as bytes, which no exact count of it can exceed.
    const mostExactBytes = TOKEN_COUNT_LIMITS.exactTextBytes + 3 * TOKEN_COUNT_LIMITS.windowChars;
    expect(counted).toBeGreaterThanOrEqual(estimateTokensFromBytes(bytes - mostExactBytes));
    expect(asRequest).toBeGreaterThanOrEqual(estimateTokensFromBytes(bytes - TOKEN_COUNT_LIMITS.exactRequestBytes - 3 * TOKEN_COUNT_LIMITS.windowChars));
  });

  it('shares one budget among the texts of a request', () => {
    const paragraph = 'The gateway counts prompts exactly while the budget lasts. ';
    const text = paragraph.repeat(Math.ceil(TOKEN_COUNT_LIMITS.exactRequestBytes / paragraph.length));
    const message = { role: 'user' as const, content: [{ type: 'text' as const, text }] };
    const one = estimateRequestTokens({ model: 'm', stream: false, messages: [message] });
    expect(one).toBe(TOKEN_ESTIMATE.replyPriming + TOKEN_ESTIMATE.perMessage + exactCount(text));
    // The second copy comes after the budget is spent: it counts as its bytes.
    const two = estimateRequestTokens({ model: 'm', stream: false, messages: [message, message] });
    expect(two).toBe(one + TOKEN_ESTIMATE.perMessage + estimateTokensFromBytes(bytesOf(text)));
    expect(two).toBeGreaterThanOrEqual(TOKEN_ESTIMATE.replyPriming + 2 * TOKEN_ESTIMATE.perMessage + 2 * exactCount(text));
  });

  it('counts texts within the budget exactly, across regex windows', () => {
    const japanese = '東京は晴れ、気温は二十度でした。明日も「晴れ」の予報です！'.repeat(400);
    const spaced = 'word\t  tab   and   spaces \n\n  indented line, ok?\r\n'.repeat(300);
    const letters = 'Straße naïve café ÀÉÎ déjà-vu; '.repeat(400);
    for (const text of [japanese, spaced, letters]) {
      expect(text.length).toBeGreaterThan(2 * TOKEN_COUNT_LIMITS.windowChars);
      expect(bytesOf(text)).toBeLessThan(TOKEN_COUNT_LIMITS.exactTextBytes);
      expect(countTextTokens(text)).toBe(referenceIds(text).length);
    }
  });

  // Letters, marks, apostrophes (contractions), digits, punctuation and every
  // kind of whitespace, in random order.
  const atoms = ['ab', 'Q', 'é', '\u0301', 'Ü', '日本', '。', "'s", "'", "'LL", "'ve", ' ', '  ', '\t', '\n', '\r\n', '\r', '\u00a0', '\u3000', '123', '4', '!?', '/', '-', '😀', '𠀀', '\uD800', '\u0000', 'x'];

  it('takes as window boundaries only places where the pre-tokenizer ends a piece', () => {
    const pattern = new RegExp(o200kBase.pat_str, 'gu');
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...atoms), { minLength: 1, maxLength: 300 }), (parts) => {
        const text = parts.join('');
        const ends = new Set([...text.matchAll(pattern)].map((match) => match.index + match[0].length));
        for (let index = 1; index < text.length; index++) {
          if (isPieceBoundary(text, index)) expect(ends.has(index), `${JSON.stringify(text)} at ${index}`).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('tokenizes long texts window by window exactly as a whole', () => {
    // The ids must be js-tiktoken's, which splits the whole text at once.
    // Pieces stay short, so no slicing applies.
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...atoms), { minLength: 6000, maxLength: 9000 }), (parts) => {
        const text = parts.join('');
        expect(encodeText(text)).toEqual(referenceIds(text));
      }),
      { numRuns: 20 },
    );
  });

  it('bounds any text by its byte length', () => {
    for (const text of [...SAMPLES, '\u0000\u0000', '\uD800x\uDFFF', '😀'.repeat(50)]) {
      expect(exactCount(text), text).toBeLessThanOrEqual(estimateTokensFromBytes(bytesOf(text)));
    }
    expect(estimateTokensFromBytes(0)).toBe(0);
    expect(estimateTokensFromBytes(10)).toBe(10);
  });
});
