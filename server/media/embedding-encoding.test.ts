import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { embedMock } from '../providers/mock/media/mock-embeddings.js';
import { encodeEmbeddingBase64, toFloatArray } from './embedding-encoding.js';

/**
 * Runs the real openai client against a fetch that answers with `embeddings`, calling
 * `embeddings.create` without `encoding_format`, so the SDK asks for base64 and decodes it
 * with its own (unexported) decoder.
 */
async function decodeWithOpenAISdk(embeddings: string[]): Promise<{ requestBody: Record<string, unknown>; vectors: number[][] }> {
  let requestBody: Record<string, unknown> = {};
  const client = new OpenAI({
    apiKey: 'sk-test',
    baseURL: 'http://gateway.test/v1',
    fetch: async (_url: unknown, init?: { body?: unknown }) => {
      requestBody = JSON.parse(String(init?.body)) as Record<string, unknown>;
      const body = {
        object: 'list',
        data: embeddings.map((embedding, index) => ({ object: 'embedding', index, embedding })),
        model: 'text-embedding-3-small',
        usage: { prompt_tokens: 1, total_tokens: 1 },
      };
      return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
    },
  });
  const response = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'x' });
  return { requestBody, vectors: response.data.map((item) => item.embedding) };
}

describe('encodeEmbeddingBase64', () => {
  it('writes little-endian float32 bytes (the documented example)', () => {
    expect(encodeEmbeddingBase64([1, -2])).toBe('AACAPwAAAMA=');
    expect([...Buffer.from(encodeEmbeddingBase64([1, -2]), 'base64')]).toEqual([0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0]);
  });

  it('encodes an empty vector as an empty string', () => {
    expect(encodeEmbeddingBase64([])).toBe('');
    expect(toFloatArray([])).toEqual([]);
  });

  it('accepts a Float32Array and a plain array alike', () => {
    const values = [0.1, -0.25, 3.5e-8];
    expect(encodeEmbeddingBase64(Float32Array.from(values))).toBe(encodeEmbeddingBase64(values));
  });

  it('refuses components JSON or float32 cannot carry', () => {
    expect(() => encodeEmbeddingBase64([0, Number.NaN])).toThrow(RangeError);
    expect(() => toFloatArray([Number.POSITIVE_INFINITY])).toThrow(RangeError);
    expect(() => toFloatArray([1e39])).toThrow(/component 0/);
  });
});

describe('toFloatArray', () => {
  it('rounds each component to float32', () => {
    expect(toFloatArray([0.1, 1 / 3])).toEqual([Math.fround(0.1), Math.fround(1 / 3)]);
    expect(toFloatArray([0.1])[0]).not.toBe(0.1);
  });
});

describe('the openai SDK decodes base64 to exactly the float answer', () => {
  it('round-trips mock embeddings of several sizes', async () => {
    const vectors = [embedMock('The quick brown fox', 1536), embedMock('jumps over the lazy dog', 3072), embedMock('', 7)];
    const { requestBody, vectors: decoded } = await decodeWithOpenAISdk(vectors.map(encodeEmbeddingBase64));
    expect(requestBody.encoding_format).toBe('base64');
    expect(decoded.map((vector) => vector.length)).toEqual([1536, 3072, 7]);
    for (let index = 0; index < vectors.length; index++) {
      // The float answer goes through JSON on the wire; after JSON it must still be identical.
      const floatAnswer = JSON.parse(JSON.stringify(toFloatArray(vectors[index]))) as number[];
      expect(decoded[index]).toEqual(floatAnswer);
    }
  });

  it('round-trips values that float32 must round, including tiny and signed zeros', async () => {
    const values = [0.1, -0.3, 1 / 3, Math.PI, 1e-40, -0, 3.4e38, -1.17549435e-38, 123456789.123];
    const { vectors } = await decodeWithOpenAISdk([encodeEmbeddingBase64(values)]);
    expect(vectors[0]).toEqual(toFloatArray(values));
    // JSON has no -0, so neither form may carry one.
    expect(Object.is(vectors[0][5], 0)).toBe(true);
    expect(Object.is(toFloatArray([-0])[0], 0)).toBe(true);
  });
});
