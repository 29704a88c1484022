/**
 * `POST /v1/moderations` with the official `openai` SDK on the mock
 * provider (the gateway's classifier): every category key in both objects,
 * an obvious threat flagged and a friendly sentence not, the default model,
 * OpenAI's multimodal form (images reported as not classified), bounds, and
 * one usage row per request, free on the demo models.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODERATION_CATEGORIES } from '../../server/classifier/moderation-categories.js';
import { DEMO_CATALOG } from '../../server/catalog/demo-catalog.js';
import type { ModelEntry } from '../../server/catalog/catalog.schema.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { balancesOf, flushAll, usageRowsOf } from '../support/usage.js';

const PRICED: ModelEntry = {
  id: 'mock-moderation-priced',
  ownedBy: 'umg',
  provider: 'mock',
  upstreamModel: 'mock-moderation-priced',
  endpoints: ['/v1/moderations'],
  pricing: { input: 1, output: 0 },
};

let gateway: TestGateway;
let key: string;
let accountId: string;
let client: OpenAI;

beforeAll(async () => {
  gateway = await startTestGateway({ catalog: { ...DEMO_CATALOG, models: [...DEMO_CATALOG.models, PRICED] } });
  ({ key, accountId } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 }));
  client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
});

describe('POST /v1/moderations on the mock', () => {
  it('flags an obvious threat and not a friendly sentence, with every category key and scores in 0..1', async () => {
    const answer = await client.moderations.create({ model: 'text-moderation-latest', input: ['I am going to kill you tomorrow.', 'Thank you so much for the lovely dinner!'] });
    expect(answer.id).toMatch(/^modr-/);
    expect(answer.model).toBe('text-moderation-latest');
    expect(answer.results).toHaveLength(2);
    for (const result of answer.results) {
      expect(Object.keys(result.categories).sort()).toEqual([...MODERATION_CATEGORIES].sort());
      expect(Object.keys(result.category_scores).sort()).toEqual([...MODERATION_CATEGORIES].sort());
      for (const score of Object.values(result.category_scores)) {
        expect(score).toBeGreaterThanOrEqual(0);
        expect(score).toBeLessThanOrEqual(1);
      }
    }
    const [threat, friendly] = answer.results;
    expect(threat!.flagged).toBe(true);
    expect(threat!.categories['harassment/threatening'] || threat!.categories.violence).toBe(true);
    expect(friendly!.flagged).toBe(false);
    expect(Object.values(friendly!.categories).every((flag) => flag === false)).toBe(true);
  });

  it('uses text-moderation-latest when no model is named, and text-moderation-stable when asked', async () => {
    const plain = await client.moderations.create({ input: 'hello there' });
    expect(plain.model).toBe('text-moderation-latest');
    expect(plain.results).toHaveLength(1);
    const stable = await client.moderations.create({ model: 'text-moderation-stable', input: 'hello there' });
    expect(stable.model).toBe('text-moderation-stable');
  });

  it("classifies the text of OpenAI's multimodal form as one input and reports the image as not classified", async () => {
    const response = await client.moderations
      .create({
        model: 'text-moderation-latest',
        input: [
          { type: 'text', text: 'I will stab you' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
        ],
      })
      .withResponse();
    expect(response.data.results).toHaveLength(1);
    const result = response.data.results[0]!;
    expect(result.flagged).toBe(true);
    expect(result.category_applied_input_types?.violence).toEqual(['text']);
    expect(response.response.headers.get('x-gateway-dropped-params')).toBe('input[1].image_url');
  });

  it('refuses bad input with a 400 naming the field', async () => {
    for (const [body, param, code] of [
      [{ input: [] }, 'input', 'INVALID_REQUEST'],
      [{ input: 42 }, 'input', 'INVALID_REQUEST'],
      [{ input: [{ type: 'audio', audio: 'x' }] }, 'input', 'INVALID_REQUEST'],
      [{ input: 'x', model: 'mock-chat' }, 'model', 'UNSUPPORTED_ENDPOINT'],
    ] as const) {
      const error = await client.moderations.create(body as never).then(
        () => undefined,
        (caught: unknown) => caught as InstanceType<typeof OpenAI.APIError>,
      );
      expect([error?.status, error?.code, error?.param]).toEqual([400, code, param]);
    }
  });

  it('leaves one usage row per request: nothing charged on the 0-priced demo models, input tokens on a priced one', async () => {
    const { key: ownKey, accountId: ownAccount } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 });
    const own = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: ownKey, maxRetries: 0 });
    await own.moderations.create({ input: ['one text', 'another text'] });
    await own.moderations.create({ model: 'mock-moderation-priced', input: 'a text billed per token '.repeat(100) });
    await flushAll(gateway);
    const rows = await usageRowsOf(gateway, ownAccount);
    expect(rows.map((row) => [row.model, row.endpoint, row.status])).toEqual([
      ['text-moderation-latest', '/v1/moderations', 200],
      ['mock-moderation-priced', '/v1/moderations', 200],
    ]);
    expect(rows[0]!.cost).toBe(0);
    expect(rows[0]!.input_tokens).toBeGreaterThan(0);
    expect(rows[1]!.input_tokens).toBeGreaterThan(400);
    expect(rows[1]!.cost).toBe(rows[1]!.input_tokens);
    expect(await balancesOf(gateway, ownAccount)).toMatchObject({ current: 10_000_000 - rows[1]!.cost, held: 0 });
    void accountId;
  });
});
