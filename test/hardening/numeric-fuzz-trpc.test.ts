/**
 * The numeric fields of every admin.* and dashboard.* procedure over /trpc
 * (issue 20's fuzz; no /v1 route serves them): each field, one at a time, gets
 * fractions, negatives, zero, huge values, numbers past 2^53 and every other
 * JSON type, and the whole input gets a number, a string and an array. Each
 * call is answered 2xx or a 4xx whose tRPC error carries that status, never a
 * 5xx.
 *
 * The procedures and their fields come from the router (`_def.inputs`), so a
 * new procedure with a number is fuzzed without touching this file. The rest
 * of its input is the smallest valid one its schema allows (the test's own
 * account and key where an id is asked for); a procedure no such input can be
 * built for is listed in {@link UNBUILDABLE}, and the list is checked to be
 * exactly those, so it cannot grow unnoticed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminClient, signIn } from '../support/dashboard-client.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { toAnswer, type Answer, type Json } from '../support/http.js';
import { MAX_CREDITS } from '../../server/billing/money.js';
import { describeValue, inputJsonSchema, numericPaths, PROCEDURES, VALUES, withValue } from './numeric-fuzz.js';

type JsonSchema = Record<string, unknown>;

/** Procedures with a numeric field whose other required fields no simple value satisfies (none today). */
const UNBUILDABLE: string[] = [];

/** A seventh decimal: finer than the ledger's micro-credit. */
const PROCEDURE_VALUES: unknown[] = [...VALUES, 1e-7];

/** Values for the whole input in place of its object. */
const ROOT_VALUES: unknown[] = [3.5, 'seven', [], null];

const CANNOT = Symbol('no valid value');

interface Fixtures {
  accountId: string;
  keyId: string;
}

let emails = 0;

/** The smallest valid value of a JSON schema (required properties only), or CANNOT. */
function minimalValue(schema: JsonSchema, root: JsonSchema, name: string, fixtures: Fixtures): unknown {
  if (typeof schema.$ref === 'string') return minimalValue((root.$defs as Record<string, JsonSchema>)[schema.$ref.split('/').pop()!]!, root, name, fixtures);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  for (const part of (schema.anyOf ?? schema.oneOf ?? []) as JsonSchema[]) {
    const value = minimalValue(part, root, name, fixtures);
    if (value !== CANNOT) return value;
  }
  const type = ([] as unknown[]).concat(schema.type).find((candidate) => candidate !== 'null') ?? schema.type;
  switch (type) {
    case 'object': {
      const object: Json = {};
      for (const property of (schema.required as string[] | undefined) ?? []) {
        const value = minimalValue((schema.properties as Record<string, JsonSchema>)[property]!, root, property, fixtures);
        if (value === CANNOT) return CANNOT;
        object[property] = value;
      }
      return object;
    }
    case 'string':
      if (/^account_?id$/i.test(name)) return fixtures.accountId;
      if (/^key_?id$/i.test(name)) return fixtures.keyId;
      if (schema.format === 'email' || name === 'email') return `fuzz-${++emails}@example.com`;
      if (schema.format === 'date-time') return '2099-01-01T00:00:00.000Z';
      if (schema.pattern !== undefined || schema.format !== undefined) return CANNOT;
      return 'fuzz'.padEnd(Number(schema.minLength ?? 1), 'z').slice(0, Number(schema.maxLength ?? 200));
    case 'number':
    case 'integer':
      // 1, or the nearest bound when 1 is out of range.
      return Math.min(Math.max(1, Number(schema.minimum ?? 1)), Number(schema.maximum ?? 1));
    case 'boolean':
      return false;
    case 'array':
      return Number(schema.minItems ?? 0) > 0 ? CANNOT : [];
    case 'null':
      return null;
    default:
      return CANNOT;
  }
}

/** The admin and dashboard procedures with numeric fields, each with its fields' paths. */
const FUZZED = Object.keys(PROCEDURES)
  .filter((name) => /^(admin|dashboard)\./.test(name))
  .map((name) => ({ name, schema: inputJsonSchema(name), type: PROCEDURES[name]!._def.type }))
  .map((procedure) => ({ ...procedure, paths: numericPaths(procedure.schema) }))
  .filter((procedure) => procedure.paths.length > 0);

interface Caller {
  headers: Record<string, string>;
  csrf?: string;
}

/** A call as @trpc/client's httpLink sends it: a query as GET with `?input=`, a mutation as POST with the JSON input. */
async function call(baseUrl: string, procedure: { name: string; type: string }, input: unknown, caller: Caller): Promise<Answer> {
  if (procedure.type === 'query') return toAnswer(await fetch(`${baseUrl}/trpc/${procedure.name}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers: caller.headers }));
  const headers = { ...caller.headers, 'content-type': 'application/json', ...(caller.csrf ? { 'x-csrf-token': caller.csrf } : {}) };
  return toAnswer(await fetch(`${baseUrl}/trpc/${procedure.name}`, { method: 'POST', headers, body: JSON.stringify(input) }));
}

/** Why a /trpc answer is not acceptable (a 5xx, or a 4xx that is no tRPC error of that status), or undefined. */
function problemOf(answer: Answer): string | undefined {
  if (answer.status >= 500) return `${answer.status} ${answer.text.slice(0, 300)}`;
  if (answer.status < 400) return undefined;
  const data = (answer.body.error as { data?: { httpStatus?: number; code?: string } } | undefined)?.data;
  if (data?.httpStatus !== answer.status || data.code === 'INTERNAL_SERVER_ERROR') return `${answer.status} not a tRPC error of that status: ${answer.text.slice(0, 300)}`;
  return undefined;
}

describe('numeric fields of every admin and dashboard procedure over /trpc: 2xx or a 4xx, never a 5xx', () => {
  let gateway: TestGateway;
  let fixtures: Fixtures;
  let admin: Caller;
  let dashboard: Caller;

  beforeAll(async () => {
    gateway = await startTestGateway({ env: { RATE_LIMITS: 'pro=1000000' } });
    const { accountId, keyId } = await gateway.createAccountWithKey({ credits: 1_000 });
    fixtures = { accountId, keyId };
    admin = { headers: { authorization: `Bearer ${gateway.adminToken}` } };
    const password = 'fuzz-password-0123456789';
    await adminClient(gateway.url, gateway.adminToken).admin.users.create.mutate({ email: 'fuzz-owner@example.com', password, role: 'owner', account_id: accountId });
    const session = await signIn(gateway.url, 'fuzz-owner@example.com', password);
    dashboard = { headers: { cookie: session.cookie! }, csrf: session.csrf };
  });
  afterAll(() => gateway?.close());

  const callerOf = (name: string) => (name.startsWith('admin.') ? admin : dashboard);

  it('finds the procedures and their numeric fields in the router', () => {
    const fields = Object.fromEntries(FUZZED.map((procedure) => [procedure.name, procedure.paths.map((path) => path.join('.'))]));
    expect(fields['admin.accounts.create']).toEqual(expect.arrayContaining(['credits', 'vault_credits', 'daily_limit', 'reset_cycle_days']));
    expect(fields['admin.accounts.adjustCredits']).toContain('amount');
    expect(fields['admin.billing.setDiscountPool']).toEqual(expect.arrayContaining(['minPercentage', 'maxPercentage', 'perAccount']));
    expect(fields['dashboard.account.usage.list']).toEqual(expect.arrayContaining(['page', 'limit']));
    expect(fields['dashboard.account.usage.totals']).toContain('days');
  });

  it('builds a base input for every one of them but those listed as unbuildable', () => {
    const unbuildable = FUZZED.filter((procedure) => minimalValue(procedure.schema!, procedure.schema!, '', fixtures) === CANNOT).map((procedure) => procedure.name);
    expect(unbuildable).toEqual(UNBUILDABLE);
  });

  it('credits past the largest amount, in one adjustment or in two, are refused 400 and leave the balance as it was', async () => {
    const adjust = (amount: number) => call(gateway.url, { name: 'admin.accounts.adjustCredits', type: 'mutation' }, { account_id: fixtures.accountId, amount }, admin);
    const get = async () => (await call(gateway.url, { name: 'admin.accounts.get', type: 'query' }, { account_id: fixtures.accountId }, admin)).body;
    const before = await get();
    expect((await adjust(MAX_CREDITS + 1)).status).toBe(400);
    // To the largest balance, then one credit past it.
    const room = MAX_CREDITS - (before.result as { data: { current_credits: number } }).data.current_credits;
    expect((await adjust(room)).status).toBe(200);
    const past = await adjust(1);
    expect(past.status, past.text).toBe(400);
    expect((past.body.error as { data: { gatewayCode: string } }).data.gatewayCode).toBe('INVALID_REQUEST');
    expect((await adjust(-room)).status).toBe(200);
    expect(await get()).toEqual(before);
  });

  for (const procedure of FUZZED) {
    it(`${procedure.name}: its numeric fields, and the whole input, given bad values`, async (context) => {
      if (UNBUILDABLE.includes(procedure.name)) return context.skip();
      const base = minimalValue(procedure.schema!, procedure.schema!, '', fixtures) as Json;
      const caller = callerOf(procedure.name);
      const baseline = await call(gateway.url, procedure, base, caller);
      expect(baseline.status, `${procedure.name} ${JSON.stringify(base)}: ${baseline.text.slice(0, 300)}`).toBeLessThan(300);
      const cases = [...procedure.paths.flatMap((path) => PROCEDURE_VALUES.map((value) => [path, value] as const)), ...ROOT_VALUES.map((value) => [[] as string[], value] as const)];
      const problems: string[] = [];
      for (const [path, value] of cases) {
        const answer = await call(gateway.url, procedure, withValue(base, path, value), caller);
        const problem = problemOf(answer);
        if (problem) problems.push(`${procedure.name} ${path.join('.') || '(input)'} = ${describeValue(value)}: ${problem}`);
      }
      expect(problems).toEqual([]);
    });
  }
});
