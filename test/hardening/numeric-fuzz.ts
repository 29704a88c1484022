/**
 * What the numeric fuzz suites share (issue 20: "a fuzz over every numeric
 * field of every route … → 4xx, never 5xx"): the numeric fields of a zod
 * schema, a body with one of them replaced, the route table's rows and how
 * each is fuzzed — a JSON body, a multipart form, a query, or not at all and
 * why — so that the coverage test of numeric-fuzz.test.ts can hold a new route
 * to one of them.
 */
import { z } from 'zod';
import { ROUTES, type CompatRoute } from '../../compat/routes.js';
import { appRouter } from '../../routers/_app.js';
import type { Answer, Json } from '../support/http.js';

const HELLO = [{ role: 'user', content: 'hi' }];

/** A valid body per route that reads JSON, answered 2xx as it is. */
export const JSON_BASELINES: Record<string, Json> = {
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

/** A valid form per route that reads multipart: its text fields, and its file fields by the fixture they carry. */
export const MULTIPART_BASELINES: Record<string, { fields: Record<string, string>; files: Record<string, 'wav' | 'png'> }> = {
  'POST /v1/audio/transcriptions': { fields: { model: 'mock-whisper' }, files: { file: 'wav' } },
  'POST /v1/audio/translations': { fields: { model: 'mock-whisper' }, files: { file: 'wav' } },
  'POST /v1/images/edits': { fields: { model: 'mock-image', prompt: 'make it night', size: '256x256' }, files: { image: 'png' } },
  'POST /v1/videos': { fields: { model: 'mock-video', prompt: 'a lighthouse', size: '640x360' }, files: {} },
};

/**
 * Routes without a body whose query the fuzz sends values to: the numeric
 * parameters of the procedure's schema, plus `extra` ones read as numbers
 * although the schema takes text (dates, a link's expiry).
 */
export const QUERY_ROUTES: Record<string, { path: string; extra: string[]; base?: Record<string, string> }> = {
  'GET /v1/usage': { path: '/v1/usage', extra: ['from', 'to'] },
  'GET /v1/videos': { path: '/v1/videos', extra: [] },
  'GET /v1/images/files/:id': { path: '/v1/images/files/img_fuzz', extra: ['expires'], base: { expires: '4102444800', signature: 'AAAA' } },
};

/** Routes the fuzz sends nothing to, and why (the coverage test checks that none of them takes a number). */
export const NOT_FUZZED: Record<string, string> = {
  'GET /v1/models': 'no body and no query',
  'GET /v1/models/:id': 'no body; the only input is the id in the path',
  'GET /v1/credits': 'no body and no query',
  'GET /v1/discounts/my-discounts': 'no body and no query',
  'GET /v1/videos/:id': 'no body; the only input is the id in the path',
  'GET /v1/videos/:id/content': 'no body; the id in the path and `variant`, an enum of words',
  'DELETE /v1/videos/:id': 'no body; the only input is the id in the path',
};

/** Bad numbers as JSON values: fractions, negatives, zero, huge, past 2^53, and every other JSON type. */
export const VALUES: unknown[] = [3.5, -1, 0, 1e308, -1e308, 2 ** 53 + 1, '7', 'seven', true, null, [], [1], {}];

/** Bad numbers as a form or a query carries them: text that is no number, or one out of every range. */
export const TEXT_VALUES: string[] = ['3.5', '-1', '0', '1e308', '1e309', '-1e309', 'NaN', 'Infinity', '9007199254740993', '99999999999999999999999', '0x10', 'abc', 'true', '', ' ', '[]'];

export function routeName(route: CompatRoute): string {
  return `${route.method} ${route.path}`;
}

export function routeOf(name: string): CompatRoute {
  const row = ROUTES.find((route) => routeName(route) === name);
  if (!row) throw new Error(`no route ${name} in the route table`);
  return row;
}

type JsonSchema = Record<string, unknown>;

/** Every procedure of the app, by its dotted path. */
export const PROCEDURES = (appRouter._def as unknown as { procedures: Record<string, { _def: { type: string; inputs: z.ZodType[] } }> }).procedures;

/** The input schema of a procedure as JSON schema (what a client sends), or undefined when it takes none. */
export function inputJsonSchema(procedure: string): JsonSchema | undefined {
  const inputs = PROCEDURES[procedure]!._def.inputs;
  if (inputs.length > 1) throw new Error(`${procedure} merges ${inputs.length} input schemas: read each`);
  return inputs[0] ? (z.toJSONSchema(inputs[0], { unrepresentable: 'any', io: 'input' }) as JsonSchema) : undefined;
}

/** Paths (property names, `[]` for an array item) of every number or integer in a JSON schema. */
export function numericPaths(schema: JsonSchema | undefined, root = schema, prefix: string[] = [], found: string[][] = [], visiting = new Set<JsonSchema>()): string[][] {
  if (typeof schema !== 'object' || schema === null || prefix.length > 4) return found;
  if (typeof schema.$ref === 'string') {
    const target = (root?.$defs as Record<string, JsonSchema> | undefined)?.[schema.$ref.split('/').pop()!];
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

/** The numeric fields of the procedure behind a route. */
export function routeNumericPaths(name: string): string[][] {
  return numericPaths(inputJsonSchema(routeOf(name).procedure));
}

/** The baseline with `value` at `path`: objects on the way are kept and extended, `[]` wraps in an array. */
export function withValue(base: unknown, path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [head, ...rest] = path;
  if (head === '[]') return [withValue(undefined, rest, value)];
  const object = typeof base === 'object' && base !== null && !Array.isArray(base) ? (base as Json) : {};
  const extended = head === 'thinking' ? { type: 'enabled', ...((object[head] as Json | undefined) ?? {}) } : object[head!];
  return { ...object, [head!]: withValue(extended, rest, value) };
}

export function describeValue(value: unknown): string {
  return typeof value === 'number' && !Number.isSafeInteger(value) ? String(value) : JSON.stringify(value);
}

/** Why an answer is not acceptable (a 5xx, or a 4xx outside the route's error shape), or undefined. */
export function problemOf(answer: Answer, anthropicFamily: boolean): string | undefined {
  if (answer.status >= 500) return `${answer.status} ${answer.text.slice(0, 300)}`;
  if (answer.status < 400) return undefined;
  const error = answer.body.error as Json | undefined;
  if (typeof error?.message !== 'string' || typeof error.type !== 'string') return `${answer.status} not in the error shape: ${answer.text.slice(0, 300)}`;
  if (anthropicFamily && answer.body.type !== 'error') return `${answer.status} not in Anthropic's shape: ${answer.text.slice(0, 300)}`;
  if (!anthropicFamily && typeof error.code !== 'string') return `${answer.status} without an OpenAI error code: ${answer.text.slice(0, 300)}`;
  return undefined;
}
