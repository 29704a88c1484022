import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
});

function client(key: string): OpenAI {
  return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
}

describe('POST /v1/images/generations', () => {
  it('refuses free-plan accounts with 403 PLAN_RESTRICTED before anything is held or charged', async () => {
    const { key, accountId } = await gateway.createAccountWithKey({ plan: 'free', credits: 10 });
    const error = await client(key)
      .images.generate({ model: 'mock-image', prompt: 'a red fox' })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect((error as InstanceType<typeof OpenAI.APIError>).code).toBe('PLAN_RESTRICTED');
    await gateway.gateway.services.billing.flush();
    const account = await gateway.gateway.services.db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
    expect(account.current_credits).toBe(10_000_000);
    expect(account.held).toBe(0);
    const rows = await gateway.gateway.services.db.selectFrom('usage').selectAll().where('account_id', '=', accountId).execute();
    expect(rows).toHaveLength(0);
  });

  it('generates deterministic PNGs on the mock and bills each image at the catalog price', async () => {
    const { key, accountId } = await gateway.createAccountWithKey({ plan: 'pro', credits: 10 });
    const first = await client(key).images.generate({ model: 'mock-image', prompt: 'a red fox', n: 2, response_format: 'b64_json' });
    const second = await client(key).images.generate({ model: 'mock-image', prompt: 'a red fox', n: 1, response_format: 'b64_json' });
    expect(first.data).toHaveLength(2);
    const png = Buffer.from(first.data![0]!.b64_json!, 'base64');
    expect(png.subarray(1, 4).toString('ascii')).toBe('PNG');
    expect(second.data![0]!.b64_json).toBe(first.data![0]!.b64_json);
    expect(first.data![1]!.b64_json).not.toBe(first.data![0]!.b64_json);
    await gateway.gateway.services.billing.flush();
    const rows = await gateway.gateway.services.db.selectFrom('usage').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
    // mock-image costs 0.04 credits per image.
    expect(rows.map((row) => [row.units, row.cost])).toEqual([
      [2, 80_000],
      [1, 40_000],
    ]);
    const account = await gateway.gateway.services.db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirstOrThrow();
    expect(account.current_credits).toBe(10_000_000 - 120_000);
    expect(account.held).toBe(0);
  });

  it('validates n, size and the model endpoint with 400s naming the field', async () => {
    const { key } = await gateway.createAccountWithKey({ plan: 'pro' });
    for (const [body, param, code] of [
      [{ model: 'mock-image', prompt: 'x', n: 11 }, 'n', 'INVALID_REQUEST'],
      [{ model: 'mock-image', prompt: 'x', size: '100x100' }, 'size', 'INVALID_REQUEST'],
      [{ model: 'mock-image' }, 'prompt', 'INVALID_REQUEST'],
      [{ model: 'mock-chat', prompt: 'x' }, 'model', 'UNSUPPORTED_ENDPOINT'],
    ] as const) {
      const error = (await client(key)
        .images.generate(body as never)
        .catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.param).toBe(param);
      expect(error.code).toBe(code);
    }
  });
});
