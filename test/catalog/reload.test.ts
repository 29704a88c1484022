/**
 * Catalog reload without a restart (issue 24, part 5): two instances on one
 * database — an embedded PGlite shared in this process, and a PostgreSQL
 * database of its own — where a reload through instance A's admin procedure
 * adds and removes models for both; a file that fails validation changes
 * nothing and says why; what is derived from the catalog follows (restricted
 * families, provider health, logged secrets, metric labels).
 */
import { writeFileSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/client.js';
import type { CatalogFile, ModelEntry } from '../../server/catalog/catalog.schema.js';
import { REDACTED } from '../../server/logger.js';
import { dataOf, expectTrpcError, trpcMutation, trpcQuery } from '../foundation/http.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { openSharedPGlite, startTestGateway, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/wait.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';

const UPSTREAM_KEY = 'sk-upstream-reload-0123456789';
/** The key of a provider only the reloaded catalog has: not masked in logs before the reload. */
const NEW_PROVIDER_KEY = 'newprovider-reload-9876543210';
/** A budget for a loaded machine, not a claim about speed. */
const DEADLINE_MS = 20_000;

function model(id: string, provider: string, extra: Partial<ModelEntry> = {}): ModelEntry {
  return { id, ownedBy: 'test', provider, upstreamModel: 'gpt-4o-mini', endpoints: ['/v1/chat/completions'], pricing: { input: 1, output: 2 }, ...extra };
}

/** Before: model-old and model-kept on the upstream. */
function firstCatalog(upstreamUrl: string): CatalogFile {
  return {
    providers: [{ id: 'up', kind: 'openai', baseUrl: upstreamUrl, apiKey: 'env:RELOAD_UPSTREAM_KEY' }],
    models: [model('model-old', 'up'), model('model-kept', 'up')],
  };
}

/** After: model-old gone, model-new added (on a new provider), model-companion in a new restricted family. */
function secondCatalog(upstreamUrl: string): CatalogFile {
  return {
    providers: [
      { id: 'up', kind: 'openai', baseUrl: upstreamUrl, apiKey: 'env:RELOAD_UPSTREAM_KEY' },
      { id: 'up-new', kind: 'openai', baseUrl: upstreamUrl, apiKey: 'env:RELOAD_NEW_KEY' },
    ],
    models: [model('model-kept', 'up', { pricing: { input: 3, output: 4 } }), model('model-new', 'up-new'), model('model-companion', 'up', { family: 'companion' })],
    families: { companion: { restricted: true, usageChecks: { enabled: false } } },
  };
}

interface Pair {
  a: TestGateway;
  b: TestGateway;
  /** Log lines of instance A. */
  logA: string[];
  close(): Promise<void>;
}

type Backend = 'pglite' | 'postgres';

async function startPair(backend: Backend, upstream: UpstreamServer): Promise<Pair> {
  const logA: string[] = [];
  let shared: DatabaseHandle | undefined;
  let database: TestDatabase | undefined;
  if (backend === 'pglite') shared = await openSharedPGlite();
  else database = await createTestDatabase();
  const common = {
    catalog: firstCatalog(upstream.url),
    env: { RELOAD_UPSTREAM_KEY: UPSTREAM_KEY, RELOAD_NEW_KEY: NEW_PROVIDER_KEY },
    databaseUrl: database?.url,
    sharedPGlite: shared,
    // One failure cools a deployment down; no retries, so one scripted 500 is one failure.
    config: { providerHealth: { failures: 1, windowMs: 60_000, cooldownMs: 60_000 }, upstream: { connectTimeoutMs: 5_000, firstByteTimeoutMs: 30_000, idleTimeoutMs: 30_000, maxRetries: 0, retryBaseDelayMs: 1 } },
  };
  // One after the other: both run the migrations on the same database.
  const a = await startTestGateway({ ...common, logLines: logA });
  const b = await startTestGateway(common);
  return {
    a,
    b,
    logA,
    async close() {
      await Promise.all([a.close(), b.close()]);
      await shared?.close();
      await database?.drop();
    },
  };
}

function sdk(gateway: TestGateway, key: string): OpenAI {
  return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
}

async function modelIds(gateway: TestGateway, key: string): Promise<string[]> {
  const page = await sdk(gateway, key).models.list();
  return page.data.map((entry) => entry.id);
}

/** The status a chat request on `modelId` gets (200, or the SDK error's status), with the error code. */
async function chatStatus(gateway: TestGateway, key: string, modelId: string): Promise<{ status: number; code: string | null }> {
  try {
    await sdk(gateway, key).chat.completions.create({ model: modelId, messages: [{ role: 'user', content: 'hello' }] });
    return { status: 200, code: null };
  } catch (error) {
    if (error instanceof OpenAI.APIError) return { status: error.status ?? 0, code: (error.code as string | null) ?? null };
    throw error;
  }
}

async function reloadOn(gateway: TestGateway) {
  return trpcMutation(gateway.url, 'admin.catalog.reload', undefined, gateway.adminToken);
}

function catalogFileOf(gateway: TestGateway): string {
  return gateway.gateway.services.config.catalogFile!;
}

async function metricSeries(gateway: TestGateway): Promise<string> {
  return gateway.gateway.services.observability.metrics.registry.metrics();
}

describe.each<Backend>(['pglite', 'postgres'])('catalog reload with two instances on one %s database', (backend) => {
  let upstream: UpstreamServer;
  let pair: Pair;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream({ expectedApiKey: undefined });
    pair = await startPair(backend, upstream);
    ({ key, accountId } = await pair.a.createAccountWithKey());
  });

  afterAll(async () => {
    await pair?.close();
    await upstream?.close();
  });

  it('a reload on A adds and removes models for A and B, and what derives from the catalog follows', async () => {
    const { a, b, logA } = pair;
    for (const instance of [a, b]) {
      expect(await modelIds(instance, key)).toEqual(['model-old', 'model-kept']);
      expect(await chatStatus(instance, key, 'model-old')).toEqual({ status: 200, code: null });
    }
    // B's deployment of model-old fails once and is cooled down; its metrics carry the model.
    upstream.script({ kind: 'status', status: 500 });
    expect((await chatStatus(b, key, 'model-old')).status).toBe(502);
    const before = dataOf<{ deployments: Array<{ model: string; provider: string; state: string }> }>(await trpcQuery(b.url, 'admin.providers.health', undefined, b.adminToken));
    expect(before.deployments).toEqual([expect.objectContaining({ model: 'model-old', provider: 'up', state: 'cooling' })]);
    expect(await metricSeries(b)).toContain('model="model-old"');
    // The new provider's key is not a known secret yet.
    a.gateway.services.log.warn('test.probe', { message: `echo ${NEW_PROVIDER_KEY}` });
    expect(logA.at(-1)).toContain(NEW_PROVIDER_KEY);

    writeFileSync(catalogFileOf(a), JSON.stringify(secondCatalog(upstream.url)));
    const answer = dataOf<Record<string, unknown>>(await reloadOn(a));
    expect(answer).toMatchObject({ models: 3, providers: 2, added: ['model-new', 'model-companion'], removed: ['model-old'], changed: ['model-kept'], unset_secrets: [] });
    // A answers once it serves the new catalog.
    expect(await modelIds(a, key)).toEqual(['model-kept', 'model-new', 'model-companion']);
    // B follows through the database.
    await waitFor(async () => (await modelIds(b, key)).join() === 'model-kept,model-new,model-companion', { timeoutMs: DEADLINE_MS, message: 'B to list the reloaded catalog' });
    for (const instance of [a, b]) {
      expect(await chatStatus(instance, key, 'model-new')).toEqual({ status: 200, code: null });
      expect(await chatStatus(instance, key, 'model-old')).toEqual({ status: 404, code: 'MODEL_NOT_FOUND' });
      // The new family is restricted on both: no grant yet.
      expect(await chatStatus(instance, key, 'model-companion')).toEqual({ status: 403, code: 'ACCESS_NOT_GRANTED' });
    }
    // The family is known to A's grant check, and B serves the granted account.
    dataOf(await trpcMutation(a.url, 'admin.restricted.grants.grant', { accountId, family: 'companion' }, a.adminToken));
    await waitFor(async () => (await chatStatus(b, key, 'model-companion')).status === 200, { timeoutMs: DEADLINE_MS, message: 'B to serve the granted family' });

    // What B derived from the old catalog is gone: the cooled deployment of model-old, its metric series.
    const after = dataOf<{ deployments: unknown[] }>(await trpcQuery(b.url, 'admin.providers.health', undefined, b.adminToken));
    expect(after.deployments).toEqual([]);
    await waitFor(async () => !(await metricSeries(b)).includes('model="model-old"'), { timeoutMs: DEADLINE_MS, message: "B's metrics to drop model-old" });
    // The new provider's key is masked from now on.
    a.gateway.services.log.warn('test.probe', { message: `echo ${NEW_PROVIDER_KEY}` });
    expect(logA.at(-1)).not.toContain(NEW_PROVIDER_KEY);
    expect(logA.at(-1)).toContain(REDACTED);
    expect(logA.some((line) => line.includes('"catalog.reloaded"') && line.includes('"trigger":"admin"'))).toBe(true);
  });

  it('a file that fails validation changes nothing on either instance, and the answer and the log say why', async () => {
    const { a, b, logA } = pair;
    const serving = ['model-kept', 'model-new', 'model-companion'];
    const broken: Array<{ text: string; reason: RegExp }> = [
      { text: '{"providers": [', reason: /not valid JSON/ },
      {
        text: JSON.stringify({ ...secondCatalog(upstream.url), models: [model('model-lost', 'nowhere')] }),
        reason: /models\[0\]\.provider: unknown provider "nowhere"/,
      },
      {
        text: JSON.stringify({ ...secondCatalog(upstream.url), models: [model('model-priceless', 'up', { pricing: { input: -1, output: 0 } })] }),
        reason: /models\[0\]\.pricing\.input/,
      },
    ];
    for (const { text, reason } of broken) {
      writeFileSync(catalogFileOf(a), text);
      const error = expectTrpcError(await reloadOn(a), 400, 'INVALID_REQUEST');
      expect(error.message).toMatch(/^The catalog was not reloaded \(the running one stays\): GATEWAY_CONFIG /);
      expect(error.message).toMatch(reason);
      const logged = JSON.parse(logA.filter((line) => line.includes('"catalog.reload_failed"')).at(-1) ?? '{}') as { message?: string };
      expect(logged.message).toMatch(reason);
      expect(logged.message).toContain('the running catalog stays');
    }
    // B has had every chance to hear of a change: a valid reload on B of the same (unchanged) catalog answers nothing added or removed.
    writeFileSync(catalogFileOf(b), JSON.stringify(secondCatalog(upstream.url)));
    expect(dataOf<Record<string, unknown>>(await reloadOn(b))).toMatchObject({ added: [], removed: [], changed: [] });
    for (const instance of [a, b]) {
      expect(await modelIds(instance, key)).toEqual(serving);
      expect(await chatStatus(instance, key, 'model-new')).toEqual({ status: 200, code: null });
    }
  });
});

describe.each<Backend>(['pglite', 'postgres'])('an instance starting on a %s database with another file', (backend) => {
  it('gives the instances already running its catalog, as a reload does', async () => {
    const upstream = await startOpenAIUpstream();
    const pair = await startPair(backend, upstream);
    try {
      const { key } = await pair.a.createAccountWithKey();
      const third = await startTestGateway({
        catalog: secondCatalog(upstream.url),
        env: { RELOAD_UPSTREAM_KEY: UPSTREAM_KEY, RELOAD_NEW_KEY: NEW_PROVIDER_KEY },
        databaseUrl: pair.a.databaseUrl,
        sharedPGlite: backend === 'pglite' ? pair.a.gateway.services.database : undefined,
      });
      try {
        for (const instance of [pair.a, pair.b]) {
          await waitFor(async () => (await modelIds(instance, key)).join() === 'model-kept,model-new,model-companion', { timeoutMs: DEADLINE_MS, message: 'a running instance to take the new start\'s catalog' });
          expect(await chatStatus(instance, key, 'model-old')).toEqual({ status: 404, code: 'MODEL_NOT_FOUND' });
        }
      } finally {
        await third.close();
      }
    } finally {
      await pair.close();
      await upstream.close();
    }
  });
});

describe('a request in flight during a reload', () => {
  let upstream: UpstreamServer;
  let gateway: TestGateway;

  beforeAll(async () => {
    upstream = await startOpenAIUpstream();
    gateway = await startTestGateway({
      catalog: {
        providers: [{ id: 'up', kind: 'openai', baseUrl: upstream.url, apiKey: 'env:RELOAD_UPSTREAM_KEY' }],
        models: [model('model-slow', 'up'), model('model-stays', 'up')],
      },
      env: { RELOAD_UPSTREAM_KEY: UPSTREAM_KEY },
      config: { upstream: { connectTimeoutMs: 5_000, firstByteTimeoutMs: 60_000, idleTimeoutMs: 120_000, maxRetries: 0, retryBaseDelayMs: 1 } },
    });
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('a stream finishes on the catalog it started with after a reload removed its model', async () => {
    const { key, accountId } = await gateway.createAccountWithKey();
    let release!: () => void;
    upstream.script({ kind: 'hold', afterChunks: 2, until: new Promise<void>((resolve) => (release = resolve)) });
    const prompt = 'a long enough sentence to be streamed in several pieces';
    const stream = await sdk(gateway, key).chat.completions.create({ model: 'model-slow', messages: [{ role: 'user', content: prompt }], stream: true, stream_options: { include_usage: true } });
    const chunks = stream[Symbol.asyncIterator]();
    const first = await chunks.next();
    expect(first.done).toBe(false);
    let text = first.value!.choices[0]?.delta.content ?? '';

    // The upstream holds the stream open while the model leaves the catalog.
    writeFileSync(catalogFileOf(gateway), JSON.stringify({ providers: [{ id: 'up', kind: 'openai', baseUrl: upstream.url, apiKey: 'env:RELOAD_UPSTREAM_KEY' }], models: [model('model-stays', 'up')] }));
    expect(dataOf<Record<string, unknown>>(await reloadOn(gateway))).toMatchObject({ removed: ['model-slow'] });
    expect(await chatStatus(gateway, key, 'model-slow')).toEqual({ status: 404, code: 'MODEL_NOT_FOUND' });

    release();
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null | undefined;
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) {
      text += next.value.choices[0]?.delta.content ?? '';
      finish = next.value.choices[0]?.finish_reason ?? finish;
      usage = next.value.usage ?? usage;
    }
    expect(text).toBe(`Echo: ${prompt}`);
    expect(finish).toBe('stop');
    expect(usage?.completion_tokens).toBeGreaterThan(0);
    // Charged at the removed model's price (1 and 2 micro-credits per input and output token).
    const db = gateway.gateway.services.db;
    let row: { model: string; status: number; aborted: boolean; input_tokens: number; output_tokens: number; cost: number } | undefined;
    await waitFor(
      async () => {
        row = await db.selectFrom('usage').select(['model', 'status', 'aborted', 'input_tokens', 'output_tokens', 'cost']).where('account_id', '=', accountId).where('model', '=', 'model-slow').executeTakeFirst();
        return row !== undefined;
      },
      { timeoutMs: DEADLINE_MS, message: 'the usage row of the stream' },
    );
    expect(row).toMatchObject({ status: 200, aborted: false, input_tokens: usage!.prompt_tokens, output_tokens: usage!.completion_tokens });
    expect(row!.cost).toBe(usage!.prompt_tokens * 1 + usage!.completion_tokens * 2);
  });
});

describe('who may reload, and what', () => {
  it('refuses a caller without the admin token, and a gateway without GATEWAY_CONFIG says there is nothing to reload', async () => {
    const gateway = await startTestGateway();
    try {
      const { key } = await gateway.createAccountWithKey();
      for (const token of [undefined, 'wrong-token', key]) {
        expectTrpcError(await trpcMutation(gateway.url, 'admin.catalog.reload', undefined, token), 401, 'UNAUTHORIZED_ADMIN');
      }
      const error = expectTrpcError(await reloadOn(gateway), 400, 'INVALID_REQUEST');
      expect(error.message).toBe('The catalog was not reloaded (the running one stays): GATEWAY_CONFIG is not set: this instance serves the built-in demo catalog, and there is no file to reload.');
      expect(await modelIds(gateway, key)).toContain('mock-chat');
    } finally {
      await gateway.close();
    }
  });
});
