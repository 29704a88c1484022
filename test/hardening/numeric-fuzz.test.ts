/**
 * Every numeric field of every /v1 JSON route, given what a careless or
 * hostile client sends — fractions, negatives, zero, huge values, numbers past
 * 2^53, strings, booleans, null, arrays, objects — is answered 2xx or a 4xx in
 * the route's error shape, never a 5xx (issue 20 row 13 and the fuzz it asks
 * for). The fields come from the input schemas of the procedures the route table names,
 * so a numeric field added to a schema is fuzzed without touching this file.
 * Every route also gets the numeric fields of the *other* formats, which it
 * does not define (`n: 3.5` on /v1/messages was a 500). The numeric query
 * parameters of the GET routes get the same values as text.
 *
 * A coverage test holds every row of the route table (compat/routes.ts) to a
 * fuzz: its JSON body here, its multipart form in
 * numeric-fuzz-multipart.test.ts, its query here, or a listed reason why it
 * takes no number; the admin and dashboard procedures, which no route serves,
 * are fuzzed over /trpc in numeric-fuzz-trpc.test.ts.
 *
 * Deterministic: the same values in the same order, through the real server on
 * the demo catalog's mock models.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../compat/routes.js';
import { startUpstreamWorld, type UpstreamWorld } from '../support/e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer, getJson, postJson, type Json } from '../support/http.js';
import {
  describeValue,
  inputJsonSchema,
  JSON_BASELINES as BASELINES,
  MULTIPART_BASELINES,
  NOT_FUZZED,
  numericPaths,
  PROCEDURES,
  problemOf,
  QUERY_ROUTES,
  routeName,
  routeNumericPaths,
  routeOf,
  TEXT_VALUES,
  VALUES,
  withValue,
} from './numeric-fuzz.js';

const HELLO = [{ role: 'user', content: 'hi' }];

/** Numeric fields of the formats that the schemas above do not list (the gateway passes or drops them). */
const UNMODELLED_NUMERIC_PATHS = [['top_logprobs'], ['max_tool_calls'], ['thinking', 'budget_tokens'], ['n']];

/** For the fields a route does not define: what broke before, fewer values to keep the run short. */
const FOREIGN_VALUES: unknown[] = [3.5, -1, 1e308, 'seven'];

const ROUTE_PATHS = new Map(Object.keys(BASELINES).map((route) => [route, routeNumericPaths(route)] as const));

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

describe('the fuzz reaches every row of the route table', () => {
  it('each row is fuzzed by its body (JSON, multipart) or its query, or is listed as not fuzzed with the reason', () => {
    const tables = { json: BASELINES, multipart: MULTIPART_BASELINES, query: QUERY_ROUTES, 'not fuzzed': NOT_FUZZED };
    const covered = (name: string) => Object.entries(tables).flatMap(([table, rows]) => (name in rows ? [table] : []));
    const expected = (name: string, body: string): string[] => {
      if (body === 'json') return ['json'];
      if (body === 'multipart') return ['multipart'];
      if (body === 'multipart-or-json') return ['json', 'multipart'];
      // No body: a route whose procedure takes a number has its query fuzzed; any other may be, or is listed with the reason.
      return routeNumericPaths(name).length > 0 || name in QUERY_ROUTES ? ['query'] : ['not fuzzed'];
    };
    const names = ROUTES.map(routeName);
    expect(Object.fromEntries(names.map((name) => [name, covered(name)]))).toEqual(Object.fromEntries(ROUTES.map((route) => [routeName(route), expected(routeName(route), route.body)])));
    // No table names a route that is gone.
    for (const rows of Object.values(tables)) expect(Object.keys(rows).filter((name) => !names.includes(name))).toEqual([]);
  });

  it('a route left out takes no number', () => {
    for (const name of Object.keys(NOT_FUZZED)) expect(routeNumericPaths(name), name).toEqual([]);
    expect(Object.values(NOT_FUZZED).every((reason) => reason.length > 0)).toBe(true);
  });

  it('every procedure is behind a route of the table or fuzzed over /trpc (admin.*, dashboard.*: numeric-fuzz-trpc.test.ts)', () => {
    const routed = new Set(ROUTES.map((route) => route.procedure));
    expect(Object.keys(PROCEDURES).filter((name) => !routed.has(name) && !/^(admin|dashboard)\./.test(name))).toEqual([]);
    // The multipart rows' procedures have numeric fields to fuzz (numeric-fuzz-multipart.test.ts): none hidden by a schema change.
    for (const name of Object.keys(MULTIPART_BASELINES)) expect(numericPaths(inputJsonSchema(routeOf(name).procedure)).length, name).toBeGreaterThan(0);
  });
});

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

  for (const [route, { path, extra, base }] of Object.entries(QUERY_ROUTES)) {
    it(`${route}: numeric query parameters`, async () => {
      const names = [...new Set([...routeNumericPaths(route).map((fieldPath) => fieldPath.join('.')), ...extra])];
      expect(names.length).toBeGreaterThan(0);
      const problems: string[] = [];
      for (const name of names) {
        for (const value of TEXT_VALUES) {
          const query = new URLSearchParams({ ...base, [name]: value });
          const answer = await getJson(`${gateway.url}${path}?${query}`, bearer(key));
          const problem = problemOf(answer, false);
          if (problem) problems.push(`${route} ?${name}=${value}: ${problem}`);
        }
      }
      expect(problems).toEqual([]);
    });
  }

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
