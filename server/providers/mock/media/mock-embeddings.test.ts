import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EMBEDDING_SCAN_LIMIT, MAX_EMBEDDING_DIMENSIONS, embedMock } from './mock-embeddings.js';

function cosine(left: Float32Array, right: Float32Array): number {
  let dot = 0;
  for (let index = 0; index < left.length; index++) dot += left[index] * right[index];
  return dot;
}

function norm(vector: Float32Array): number {
  return Math.sqrt(cosine(vector, vector));
}

describe('embedMock', () => {
  it('gives unit vectors of the requested size', () => {
    for (const dimensions of [1, 2, 7, 256, 1536, 3072]) {
      const vector = embedMock('The quick brown fox jumps over the lazy dog', dimensions);
      expect(vector).toBeInstanceOf(Float32Array);
      expect(vector.length).toBe(dimensions);
      expect(norm(vector)).toBeCloseTo(1, 5);
    }
  });

  it('is deterministic', () => {
    expect(embedMock('Deterministic vectors, please.', 1536)).toEqual(embedMock('Deterministic vectors, please.', 1536));
    expect(embedMock('漢字とかな', 64)).toEqual(embedMock('漢字とかな', 64));
  });

  it('ignores case and Unicode compatibility forms', () => {
    expect(embedMock('Hello World', 512)).toEqual(embedMock('hello world', 512));
    expect(embedMock('ＨＥＬＬＯ world', 512)).toEqual(embedMock('hello world', 512));
  });

  it('places texts that share words closer than unrelated texts', () => {
    const anchor = embedMock('The cat sat on the warm mat by the fire', 1536);
    const sharing = embedMock('A cat sat on a mat', 1536);
    const unrelated = embedMock('Quarterly revenue grew by ten percent in Europe', 1536);
    expect(cosine(anchor, sharing)).toBeGreaterThan(0.4);
    expect(cosine(anchor, sharing)).toBeGreaterThan(cosine(anchor, unrelated) + 0.3);
  });

  it('ranks more shared words as more similar', () => {
    const query = embedMock('how to reset a forgotten database password', 1536);
    const close = embedMock('reset your database password if forgotten', 1536);
    const partial = embedMock('database backup schedule', 1536);
    const far = embedMock('recipe for banana bread', 1536);
    expect(cosine(query, close)).toBeGreaterThan(cosine(query, partial));
    expect(cosine(query, partial)).toBeGreaterThan(cosine(query, far));
  });

  it('keeps inflected forms close through character trigrams', () => {
    const base = embedMock('embedding', 1536);
    expect(cosine(base, embedMock('embeddings', 1536))).toBeGreaterThan(cosine(base, embedMock('television', 1536)) + 0.15);
  });

  it('compares CJK text character by character', () => {
    const tokyo = embedMock('東京は日本の首都です', 512);
    expect(cosine(tokyo, embedMock('日本の首都は東京', 512))).toBeGreaterThan(0.5);
    expect(cosine(tokyo, embedMock('今日は雨が降っている', 512))).toBeLessThan(cosine(tokyo, embedMock('日本の首都は東京', 512)));
  });

  it('gives a defined unit vector for empty and wordless input', () => {
    const empty = embedMock('', 1536);
    expect(norm(empty)).toBeCloseTo(1, 5);
    expect(embedMock('', 1536)).toEqual(empty);
    expect(embedMock('   ', 1536)).toEqual(empty);
    const emoji = embedMock('🙂', 1536);
    expect(norm(emoji)).toBeCloseTo(1, 5);
    expect(emoji).not.toEqual(empty);
  });

  it('refuses sizes outside 1..3072', () => {
    for (const dimensions of [0, -1, 1.5, Number.NaN, MAX_EMBEDDING_DIMENSIONS + 1]) {
      expect(() => embedMock('text', dimensions)).toThrow(RangeError);
    }
  });

  it('reads only the first scan limit of a long input', () => {
    const head = 'alpha beta gamma '.repeat(EMBEDDING_SCAN_LIMIT / 17 + 1).slice(0, EMBEDDING_SCAN_LIMIT);
    expect(embedMock(`${head} something else entirely`, 256)).toEqual(embedMock(head, 256));
  });

  describe('pathological input', () => {
    const cases: Array<[string, () => string]> = [
      ['19 MB of one character', () => 'a'.repeat(19 * 1024 * 1024)],
      ['5 MB of CJK', () => '漢字'.repeat(2.5 * 1024 * 1024)],
      ['lone surrogates', () => '\ud800x\udc00y\udbff'.repeat(100_000)],
      ['NUL characters', () => '\u0000'.repeat(1_000_000)],
      ['a surrogate pair cut by the scan limit', () => `${'a'.repeat(EMBEDDING_SCAN_LIMIT - 1)}😀tail`],
    ];
    for (const [name, build] of cases) {
      it(`gives a unit vector for ${name}`, () => {
        const text = build();
        const started = performance.now();
        const vector = embedMock(text, 3072);
        const elapsed = performance.now() - started;
        console.info(`embedMock(${name}, 3072): ${elapsed.toFixed(2)} ms`);
        expect(norm(vector)).toBeCloseTo(1, 5);
        expect(vector.every(Number.isFinite)).toBe(true);
      });
    }
  });

  it('gives a finite unit vector for arbitrary strings and sizes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.integer({ min: 1, max: 64 }), (text, dimensions) => {
        const vector = embedMock(text, dimensions);
        expect(vector.length).toBe(dimensions);
        expect(vector.every(Number.isFinite)).toBe(true);
        expect(norm(vector)).toBeCloseTo(1, 5);
      }),
      { numRuns: 300 },
    );
  });
});
