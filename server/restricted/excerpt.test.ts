import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EXCERPT_MAX_CHARACTERS, EXCERPT_SCAN_LIMIT, excerptOf } from './excerpt.js';

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

function codePointsOf(text: string): number {
  return [...text].length;
}

function hasLoneSurrogate(text: string): boolean {
  return /\p{Surrogate}/u.test(text);
}

/** Every grapheme of `excerpt` is also a whole grapheme of `source` (nothing was split). */
function graphemesAreWhole(excerpt: string, source: string): boolean {
  const whole = new Set([...graphemes.segment(source)].map((segment) => segment.segment));
  return [...graphemes.segment(excerpt)].every((segment) => whole.has(segment.segment) || segment.segment === ' ');
}

describe('excerptOf', () => {
  it('keeps a short prompt as it is', () => {
    expect(excerptOf('Hello, world!')).toBe('Hello, world!');
    expect(excerptOf('')).toBe('');
  });

  it('cuts a 10,000-character prompt to 400 code points', () => {
    const prompt = 'abcdefghij'.repeat(1000);
    const excerpt = excerptOf(prompt);
    expect(codePointsOf(excerpt)).toBe(EXCERPT_MAX_CHARACTERS);
    expect(prompt.startsWith(excerpt)).toBe(true);
  });

  it('counts code points, not UTF-16 units or bytes', () => {
    const emoji = '😀'.repeat(1000);
    const excerpt = excerptOf(emoji);
    expect(codePointsOf(excerpt)).toBe(400);
    expect(excerpt.length).toBe(800);
    expect(hasLoneSurrogate(excerpt)).toBe(false);
    const accented = 'ñandú '.repeat(200);
    expect(codePointsOf(excerptOf(accented))).toBeLessThanOrEqual(400);
  });

  it('handles multi-byte scripts', () => {
    const chinese = '漢字かな交じり文'.repeat(100);
    const excerpt = excerptOf(chinese);
    expect(codePointsOf(excerpt)).toBe(400);
    expect(chinese.startsWith(excerpt)).toBe(true);
  });

  it('never splits an emoji ZWJ sequence at the boundary', () => {
    const family = '👨‍👩‍👧‍👦'; // 7 code points, one grapheme
    for (let padding = 390; padding <= 400; padding++) {
      const text = `${'a'.repeat(padding)}${family}${'b'.repeat(50)}`;
      const excerpt = excerptOf(text);
      expect(codePointsOf(excerpt)).toBeLessThanOrEqual(400);
      expect(graphemesAreWhole(excerpt, text)).toBe(true);
      // Either the whole family fits or none of it is there.
      expect(excerpt.includes('\u200d') ? excerpt.includes(family) : !/[👨👩👧👦]/u.test(excerpt)).toBe(true);
    }
  });

  it('never separates a combining mark or a flag from its base', () => {
    for (let padding = 395; padding <= 400; padding++) {
      const combining = `${'a'.repeat(padding)}e\u0301\u0323${'b'.repeat(20)}`;
      const excerpt = excerptOf(combining);
      expect(graphemesAreWhole(excerpt, combining)).toBe(true);
      const flag = `${'a'.repeat(padding)}🇫🇷${'b'.repeat(20)}`;
      expect(graphemesAreWhole(excerptOf(flag), flag)).toBe(true);
    }
  });

  it('leaves out a cluster longer than the whole budget', () => {
    const huge = `a${'\u0301'.repeat(500)}`;
    expect(excerptOf(huge)).toBe('');
    expect(excerptOf(`start ${huge}`)).toBe('start');
  });

  it('collapses whitespace and trims', () => {
    expect(excerptOf('  line one\n\n\tline   two \r\n ')).toBe('line one line two');
    expect(excerptOf(`a${' '.repeat(50_000)}b`)).toBe('a b');
  });

  it('drops control characters and NUL, and repairs lone surrogates', () => {
    expect(excerptOf('a\u0000b\u0007c\u009fd')).toBe('abcd');
    const repaired = excerptOf('x\ud800y\udc00z');
    expect(repaired).toBe('x\ufffdy\ufffdz');
    expect(hasLoneSurrogate(excerptOf('\udbff'.repeat(1000)))).toBe(false);
    expect(Buffer.from(excerptOf('ok\ud83d'), 'utf8').toString('utf8')).toBe('ok\ufffd');
  });

  it('honours a smaller budget', () => {
    expect(excerptOf('abcdef', 3)).toBe('abc');
    expect(excerptOf('abcdef', 0)).toBe('');
  });

  it('reads only the head of a huge prompt', () => {
    const started = performance.now();
    const text = Buffer.alloc(19 * 1024 * 1024, 'a').toString('latin1');
    const excerpt = excerptOf(text);
    console.info(`excerptOf(19 MB): ${(performance.now() - started).toFixed(1)} ms including building the input`);
    expect(excerpt).toBe('a'.repeat(400));
    // Whitespace beyond the scan limit is never reached.
    expect(excerptOf(`${' '.repeat(EXCERPT_SCAN_LIMIT)}late`)).toBe('');
  });
});

describe('excerptOf on arbitrary strings', () => {
  it('is always well-formed, within budget and a whole-grapheme prefix of the cleaned text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 600 }), fc.integer({ min: 0, max: 450 }), (text, budget) => {
        const excerpt = excerptOf(text, budget);
        expect(codePointsOf(excerpt)).toBeLessThanOrEqual(budget);
        expect(hasLoneSurrogate(excerpt)).toBe(false);
        expect([...excerpt].some((character) => /\p{Cc}/u.test(character) && !/\s/.test(character))).toBe(false);
        expect(excerpt).toBe(excerpt.trim());
      }),
      { numRuns: 500 },
    );
  });
});
