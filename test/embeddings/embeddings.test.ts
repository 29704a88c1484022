/**
 * `POST /v1/embeddings` with the official `openai` SDK on the mock provider:
 * base64 (the SDK's default, decoded by it) and float answers equal, default
 * sizes, `dimensions` where the model allows it, meaningful similarities,
 * every input form, each bound refused with a 400 naming the field, and the
 * charge per input token.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeCost } from '../../server/billing/money.js';
import { toMicroPrice } from '../../server/catalog/catalog.schema.js';
import { countTextTokens, encodeText } from '../../server/tokenizer.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { postJson, bearer } from '../support/http.js';
import { balancesOf, flushAll, usageRowsOf } from '../support/usage.js';

let gateway: TestGateway;
let key: string;
let accountId: string;
let client: OpenAI;

beforeAll(async () => {
  gateway = await startTestGateway();
  ({ key, accountId } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 }));
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
});

function cosine(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let index = 0; index < a.length; index++) {
    dot += a[index]! * b[index]!;
    normA += a[index]! * a[index]!;
    normB += b[index]! * b[index]!;
  }
  return dot / Math.sqrt(normA * normB);
}

function norm(vector: readonly number[]): number {
  return Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0));
}

async function failure(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await call.then(() => undefined, (caught: unknown) => caught);
  if (!(error instanceof OpenAI.APIError)) throw new Error(`expected an API error, got ${String(error)}`);
  return error;
}

describe('POST /v1/embeddings on the mock', () => {
  it('answers the same vector as base64 (the SDK default, decoded by it) and as floats', async () => {
    const input = 'Embeddings turn text into vectors.';
    const viaBase64 = await client.embeddings.create({ model: 'mock-embedding-small', input });
    const viaFloat = await client.embeddings.create({ model: 'mock-embedding-small', input, encoding_format: 'float' });
    expect(viaBase64.object).toBe('list');
    expect(viaBase64.model).toBe('mock-embedding-small');
    expect(viaBase64.data[0]).toMatchObject({ object: 'embedding', index: 0 });
    expect(viaBase64.data[0]!.embedding).toHaveLength(1536);
    expect(viaBase64.data[0]!.embedding).toEqual(viaFloat.data[0]!.embedding);
    // What the SDK decoded is what went over the wire as base64.
    const raw = await postJson(`${gateway.url}/v1/embeddings`, { model: 'mock-embedding-small', input, encoding_format: 'base64' }, bearer(key));
    const encoded = ((raw.body.data as Array<{ embedding: unknown }>)[0]!.embedding) as string;
    expect(typeof encoded).toBe('string');
    const bytes = Buffer.from(encoded, 'base64');
    expect([...new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4)]).toEqual(viaFloat.data[0]!.embedding);
    expect(Math.abs(norm(viaFloat.data[0]!.embedding) - 1)).toBeLessThan(1e-5);
    expect(viaFloat.usage).toEqual({ prompt_tokens: countTextTokens(input), total_tokens: countTextTokens(input) });
  });

  it('has the catalog sizes (1536, 3072) and reduced dimensions only on the adjustable model, unit length', async () => {
    const large = await client.embeddings.create({ model: 'mock-embedding-large', input: 'size check', encoding_format: 'float' });
    expect(large.data[0]!.embedding).toHaveLength(3072);
    for (const dimensions of [1, 256, 1024, 3072]) {
      const reduced = await client.embeddings.create({ model: 'mock-embedding-large', input: 'size check', dimensions });
      expect(reduced.data[0]!.embedding).toHaveLength(dimensions);
      expect(Math.abs(norm(reduced.data[0]!.embedding) - 1)).toBeLessThan(1e-5);
    }
    const fixed = await failure(client.embeddings.create({ model: 'mock-embedding-small', input: 'x', dimensions: 256 }));
    expect([fixed.status, fixed.code, fixed.param]).toEqual([400, 'UNSUPPORTED_FEATURE', 'dimensions']);
    expect(fixed.message).toMatch(/mock-embedding-small/);
    const tooMany = await failure(client.embeddings.create({ model: 'mock-embedding-large', input: 'x', dimensions: 3073 }));
    expect([tooMany.status, tooMany.code, tooMany.param]).toEqual([400, 'INVALID_REQUEST', 'dimensions']);
    const zero = await failure(client.embeddings.create({ model: 'mock-embedding-large', input: 'x', dimensions: 0 }));
    expect([zero.status, zero.param]).toEqual([400, 'dimensions']);
  });

  it('places texts that share words closer than unrelated ones, for retrieval', async () => {
    const answer = await client.embeddings.create({
      model: 'mock-embedding-large',
      input: ['the cat sat on the mat', 'a cat sat on a mat', 'quarterly revenue grew strongly', 'Revenue grew in the quarter'],
    });
    const [cat, sameCat, revenue, sameRevenue] = answer.data.map((item) => item.embedding);
    expect(answer.data.map((item) => item.index)).toEqual([0, 1, 2, 3]);
    expect(cosine(cat!, sameCat!)).toBeGreaterThan(cosine(cat!, revenue!) + 0.3);
    expect(cosine(revenue!, sameRevenue!)).toBeGreaterThan(cosine(revenue!, sameCat!) + 0.2);
  });

  it('takes every input form: a list in order, token ids (decoded), lists of token ids', async () => {
    const texts = ['first text', 'second, different text'];
    const list = await client.embeddings.create({ model: 'mock-embedding-small', input: texts, encoding_format: 'float' });
    const one = await client.embeddings.create({ model: 'mock-embedding-small', input: texts[1]!, encoding_format: 'float' });
    expect(list.data[1]!.embedding).toEqual(one.data[0]!.embedding);
    const ids = encodeText(texts[1]!);
    const tokens = await client.embeddings.create({ model: 'mock-embedding-small', input: ids, encoding_format: 'float' });
    expect(tokens.data).toHaveLength(1);
    expect(tokens.data[0]!.embedding).toEqual(one.data[0]!.embedding);
    expect(tokens.usage.prompt_tokens).toBe(ids.length);
    const lists = await client.embeddings.create({ model: 'mock-embedding-small', input: texts.map((text) => encodeText(text)), encoding_format: 'float' });
    expect(lists.data.map((item) => item.embedding)).toEqual(list.data.map((item) => item.embedding));
    expect(list.usage.prompt_tokens).toBe(countTextTokens(texts[0]!) + countTextTokens(texts[1]!));
  });

  it('refuses each bound with a 400 naming the field, before anything is held', async () => {
    const { key: boundKey, accountId: boundAccount } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 });
    const bounded = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: boundKey, maxRetries: 0 });
    const longText = 'token '.repeat(9000);
    const cases: Array<[string, Record<string, unknown>, string, string]> = [
      ['2049 inputs', { input: Array.from({ length: 2049 }, () => 'x') }, 'INVALID_REQUEST', 'input'],
      ['an empty string', { input: '' }, 'INVALID_REQUEST', 'input'],
      ['an empty list', { input: [] }, 'INVALID_REQUEST', 'input'],
      ['an input over 8192 tokens', { input: ['short', longText] }, 'INVALID_REQUEST', 'input[1]'],
      ['a single input over 8192 tokens', { input: longText }, 'INVALID_REQUEST', 'input'],
      ['over 300,000 tokens in all', { input: Array.from({ length: 40 }, () => Array.from({ length: 8000 }, (_, index) => index % 1000)) }, 'INVALID_REQUEST', 'input'],
      ['a negative token id', { input: [1, -2] }, 'INVALID_REQUEST', 'input[1]'],
      ['an unknown encoding', { input: 'x', encoding_format: 'int8' }, 'INVALID_REQUEST', 'encoding_format'],
      ['a chat model', { model: 'mock-chat', input: 'x' }, 'UNSUPPORTED_ENDPOINT', 'model'],
    ];
    for (const [name, body, code, param] of cases) {
      const error = await failure(bounded.embeddings.create({ model: 'mock-embedding-small', ...body } as never));
      expect([error.status, error.code, error.param], name).toEqual([400, code, param]);
    }
    await flushAll(gateway);
    expect(await usageRowsOf(gateway, boundAccount)).toHaveLength(0);
  });

  it('bills each request per input token at the model price, one usage row each', async () => {
    const { key: billedKey, accountId: billedAccount } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 });
    const billed = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: billedKey, maxRetries: 0 });
    const text = 'Retrieval needs vectors for every passage of the corpus. '.repeat(60);
    const answer = await billed.embeddings.create({ model: 'mock-embedding-large', input: [text, text] });
    const tokens = 2 * countTextTokens(text);
    expect(answer.usage.prompt_tokens).toBe(tokens);
    await flushAll(gateway);
    const rows = await usageRowsOf(gateway, billedAccount);
    const expected = computeCost(toMicroPrice({ input: 0.13, output: 0 }), { inputTokens: tokens, outputTokens: 0 });
    expect(expected).toBeGreaterThan(10);
    expect(rows.map((row) => [row.endpoint, row.input_tokens, row.output_tokens, row.cost, row.status])).toEqual([['/v1/embeddings', tokens, 0, expected, 200]]);
    expect(await balancesOf(gateway, billedAccount)).toMatchObject({ current: 10_000_000 - expected, held: 0 });
    void accountId;
  });
});
