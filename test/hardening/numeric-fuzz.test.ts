/**
 * Every numeric field of every /v1 JSON route, given what a careless or
 * hostile client sends — fractions, negatives, zero, huge values, numbers past
 * 2^53, strings, booleans, null, arrays, objects — is answered 2xx or a 4xx in
 * the route's error shape, never a 5xx (issue 20 row 13 and the fuzz it asks
 * for). The fields come from the input schemas of the procedures the route table names,
 * so a numeric field added to a schema is fuzzed without touching this file.
 * Every route also gets the numeric fields of the *other* formats, which it
 * does not define (`n: 3.5` on /v1/messages was a 500).
 *
 * Deterministic: the same values in the same order, through the real server on
 * the demo catalog's mock models.
 */
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../compat/routes.js';
import { appRouter } from '../../routers/_app.js';
import { startUpstreamWorld, type UpstreamWorld } from '../support/e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer, getJson, postJson, type Answer, type Json } from '../support/http.js';

const HELLO = [{ role: 'user', content: 'hi' }];

/** A valid body per JSON route, answered 2xx as it is. */
const BASELINES: Record<string, Json> = {
  'POST /v1/chat/completions': { model: 'mock-chat', max_tokens: 8, messages: HELLO },
  'POST /v1/messages': { model: 'mock-chat', max_tokens: 8, messages: HELLO },
  'POST /v1/messages/count_tokens': { model: 'mock-chat', messages: HELLO },
  'POST /v1/responses': { model: 'mock-chat', max_output_tokens: 16, input: 'hi' },
  'POST /v1/responses/compact': { model: 'mock-chat', input: 'hi' },
  'POST /v1/images/generations': { model: 'mock-image', prompt: 'a lighthouse', size: '256x256' },
  'POST /v1/audio/speech': { model: 'tts-1', input: 'hi', voice: 'alloy' },
  'POST /v1/videos': { model: 'mock-video', prompt: 'a lighthouse', size: '640x360' },
  'POST /v1/embeddings': { model: 'mock-embedding-small', input: 'hi' },
  'POST /v1/moderations': { model: 'text-moderation-latest', input: 'hi' },
};

/** Numeric fields of the formats that the schemas above do not list (the gateway passes or drops them). */
const UNMODELLED_NUMERIC_PATHS = [['top_logprobs'], ['max_tool_calls'], ['thinking', 'budget_tokens'], ['n']];

const VALUES: unknown[] = [3.5, -1, 0, 1e308, -1e308, 2 ** 53 + 1, '7', 'seven', true, null, [], [1], {}];
/** For the fields a route does not define: what broke before, fewer values to keep the run short. */
const FOREIGN_VALUES: unknown[] = [3.5, -1, 1e308, 'seven'];

type JsonSchema = Record<string, unknown>;

/** Paths (property names, `[]` for an array item) of every number or integer in a JSON schema. */
function numericPaths(schema: JsonSchema, root: JsonSchema, prefix: string[] = [], found: string[][] = [], visiting = new Set<JsonSchema>()): string[][] {
  if (typeof schema !== 'object' || schema === null || prefix.length > 4) return found;
  if (typeof schema.$ref === 'string') {
    const target = (root.$defs as Record<string, JsonSchema> | undefined)?.[schema.$ref.split('/').pop()!];
    if (target && !visiting.has(target)) {
      visiting.add(target);
      numericPaths(target, root, prefix, found, visiting);
      visiting.delete(target);
    }
    return found;
  }
  const types = ([] as unknown[]).concat(schema.type);
  if ((types.includes('number') || types.includes('integer')) && !found.some((path) => path.join('.') === prefix.join('.'))) found.push(prefix);
  for (const key of ['anyOf', 'oneOf', 'allOf']) for (const part of (schema[key] as JsonSchema[] | undefined) ?? []) numericPaths(part, root, prefix, found, visiting);
  for (const [name, property] of Object.entries((schema.properties as Record<string, JsonSchema> | undefined) ?? {})) numericPaths(property, root, [...prefix, name], found, visiting);
  if (schema.items && typeof schema.items === 'object') numericPaths(schema.items as JsonSchema, root, [...prefix, '[]'], found, visiting);
  return found;
}

/** The baseline with `value` at `path`: objects on the way are kept and extended, `[]` wraps in an array. */
function withValue(base: unknown, path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  if (head === '[]') return [withValue(undefined, rest, value)];
  const object = typeof base === 'object' && base !== null && !Array.isArray(base) ? (base as Json) : {};
  const extended = head === 'thinking' ? { type: 'enabled', ...((object[head] as Json | undefined) ?? {}) } : object[head!];
  return { ...object, [head!]: withValue(extended, rest, value) };
}

function describeValue(value: unknown): string {
  return typeof value === 'number' && !Number.isSafeInteger(value) ? String(value) : JSON.stringify(value);
}

/** Why an answer is not acceptable (a 5xx, or a 4xx outside the route's error shape), or undefined. */
function problemOf(answer: Answer, anthropicFamily: boolean): string | undefined {
  if (answer.status >= 500) return `${answer.status} ${answer.text.slice(0, 300)}`;
  if (answer.status < 400) return undefined;
  const error = answer.body.error as Json | undefined;
  if (typeof error?.message !== 'string' || typeof error.type !== 'string') return `${answer.status} not in the error shape: ${answer.text.slice(0, 300)}`;
  if (anthropicFamily && answer.body.type !== 'error') return `${answer.status} not in Anthropic's shape: ${answer.text.slice(0, 300)}`;
  if (!anthropicFamily && typeof error.code !== 'string') return `${answer.status} without an OpenAI error code: ${answer.text.slice(0, 300)}`;
  return undefined;
}

const PROCEDURES = (appRouter._def as unknown as { procedures: Record<string, { _def: { inputs: z.ZodType[] } }> }).procedures;

/** The input schema of the procedure behind `METHOD /path`, as the route table says. */
function inputSchemaOf(route: string): z.ZodType {
  const [method, path] = route.split(' ');
  const row = ROUTES.find((entry) => entry.method === method && entry.path === path);
  if (!row) throw new Error(`no route ${route} in the route table`);
  return PROCEDURES[row.procedure]!._def.inputs[0]!;
}

const ROUTE_PATHS = new Map(
  Object.keys(BASELINES).map((route) => {
    const schema = z.toJSONSchema(inputSchemaOf(route), { unrepresentable: 'any', io: 'input' }) as JsonSchema;
    return [route, numericPaths(schema, schema)] as const;
  }),
);

/** Sends `base` with each value at each numeric field of the route, then each foreign value at the other formats' fields; returns what went wrong. */
async function fuzzRoute(baseUrl: string, key: string, route: string, base: Json, values: unknown[], foreignValues: unknown[]): Promise<string[]> {
  const path = route.slice('POST '.length);
  const anthropicFamily = path.startsWith('/v1/messages');
  const own = ROUTE_PATHS.get(route)!;
  const ownNames = new Set(own.map((fieldPath) => fieldPath.join('.')));
  const foreign = [...ROUTE_PATHS.values()]
    .flat()
    .filter((fieldPath) => fieldPath.length === 1)
    .concat(UNMODELLED_NUMERIC_PATHS)
    .filter((fieldPath, index, all) => !ownNames.has(fieldPath.join('.')) && all.findIndex((other) => other.join('.') === fieldPath.join('.')) === index);
  const cases = [...own.flatMap((fieldPath) => values.map((value) => [fieldPath, value] as const)), ...foreign.flatMap((fieldPath) => foreignValues.map((value) => [fieldPath, value] as const))];
  const problems: string[] = [];
  for (const [fieldPath, value] of cases) {
    const answer = await postJson(`${baseUrl}${path}`, withValue(base, fieldPath, value), bearer(key));
    const problem = problemOf(answer, anthropicFamily);
    if (problem) problems.push(`${route} ${String(base.model)} ${fieldPath.join('.')} = ${describeValue(value)}: ${problem}`);
  }
  return problems;
}

describe('numeric fields of every /v1 JSON route: 2xx or a 4xx in the route shape, never a 5xx', () => {
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway({
      // Video jobs stay queued (nothing renders them during the run); no rate limit or balance cuts the fuzz short.
      env: { RATE_LIMITS: 'pro=1000000', VIDEO_WORKER_INTERVAL_MS: '3600000', VIDEO_MAX_QUEUED_PER_ACCOUNT: '100000' },
    });
    ({ key } = await gateway.createAccountWithKey({ credits: 1_000_000 }));
  });
  afterAll(() => gateway?.close());

  const routes = Object.keys(BASELINES);
  const ownPaths = ROUTE_PATHS;

  it('lists the numeric fields of the routes from their schemas', () => {
    // The list the fuzz runs on is not empty by accident (a schema change that hid every number would pass the fuzz).
    expect(ownPaths.get('POST /v1/chat/completions')!.map((path) => path.join('.'))).toEqual(expect.arrayContaining(['n', 'max_tokens', 'temperature', 'seed']));
    expect(ownPaths.get('POST /v1/messages')!.map((path) => path.join('.'))).toEqual(expect.arrayContaining(['max_tokens', 'top_k']));
    expect(ownPaths.get('POST /v1/embeddings')!.map((path) => path.join('.'))).toEqual(expect.arrayContaining(['dimensions', 'input.[]']));
    expect(ownPaths.get('POST /v1/videos')!.map((path) => path.join('.'))).toContain('seconds');
  });

  it('answers each baseline body 2xx', async () => {
    for (const route of routes) {
      const answer = await postJson(`${gateway.url}${route.slice('POST '.length)}`, BASELINES[route], bearer(key));
      expect(answer.status, `${route}: ${answer.text.slice(0, 300)}`).toBeLessThan(300);
    }
  });

  for (const route of routes) {
    it(`${route}: its own numeric fields and the other formats'`, async () => {
      expect(await fuzzRoute(gateway.url, key, route, BASELINES[route]!, VALUES, FOREIGN_VALUES)).toEqual([]);
    });
  }

  it('GET routes: numeric query parameters', async () => {
    const problems: string[] = [];
    const values = ['3.5', '-1', '0', '1e308', '9007199254740993', 'seven', 'true', '', '[]'];
    for (const [path, names] of [
      ['/v1/usage', ['page', 'limit', 'from', 'to']],
      ['/v1/videos', ['limit']],
    ] as const) {
      for (const name of names) {
        for (const value of values) {
          const answer = await getJson(`${gateway.url}${path}?${name}=${encodeURIComponent(value)}`, bearer(key));
          const problem = problemOf(answer, false);
          if (problem) problems.push(`${path}?${name}=${value}: ${problem}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('n: 3.5 on /v1/messages, a field messages does not define, is no choice count: served once and billed as one', async () => {
    const answer = await postJson(`${gateway.url}/v1/messages`, { model: 'mock-chat', max_tokens: 15, n: 3.5, messages: HELLO }, bearer(key));
    expect(answer.status, answer.text).toBe(200);
    expect(answer.body.type).toBe('message');
  });
});

describe('the generation routes in front of real provider adapters (native and bridged): never a 5xx', () => {
  let world: UpstreamWorld;
  let key: string;

  beforeAll(async () => {
    world = await startUpstreamWorld({
      env: { FUZZ_OPENAI_KEY: 'sk-fuzz-openai-0123456789', FUZZ_ANTHROPIC_KEY: 'sk-ant-fuzz-0123456789', RATE_LIMITS: 'pro=1000000' },
      catalog: (urls) => ({
        providers: [
          { id: 'openai-up', kind: 'openai', baseUrl: urls.openai, apiKey: 'env:FUZZ_OPENAI_KEY' },
          { id: 'anthropic-up', kind: 'anthropic', baseUrl: urls.anthropic, apiKey: 'env:FUZZ_ANTHROPIC_KEY' },
        ],
        models: [
          { id: 'gpt-fuzz', ownedBy: 'test', provider: 'openai-up', upstreamModel: 'gpt-4o-mini', endpoints: ['/v1/chat/completions', '/v1/messages', '/v1/responses'], pricing: { input: 1, output: 1 } },
          { id: 'claude-fuzz', ownedBy: 'test', provider: 'anthropic-up', upstreamModel: 'claude-sonnet-4-5', endpoints: ['/v1/chat/completions', '/v1/messages', '/v1/responses'], pricing: { input: 1, output: 1 } },
        ],
      }),
    });
    ({ key } = await world.gateway.createAccountWithKey({ credits: 1_000_000 }));
  });
  afterAll(() => world?.close());

  for (const model of ['gpt-fuzz', 'claude-fuzz']) {
    for (const route of ['POST /v1/chat/completions', 'POST /v1/messages', 'POST /v1/responses']) {
      it(`${route} on ${model}`, async () => {
        const base = { ...BASELINES[route]!, model };
        const baseline = await postJson(`${world.gateway.url}${route.slice('POST '.length)}`, base, bearer(key));
        expect(baseline.status, baseline.text.slice(0, 300)).toBe(200);
        expect(await fuzzRoute(world.gateway.url, key, route, base, [3.5, -1, 1e308, 2 ** 53 + 1, 'seven', null], [3.5, 1e308])).toEqual([]);
      });
    }
  }
});
