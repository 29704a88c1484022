/**
 * HTTP helpers of the foundation suites: the two error shapes of GAPS.md
 * "Errors", raw tRPC calls, and requests the plain readers of
 * ../support/http.ts do not send.
 */
import { expect } from 'vitest';
import { ROUTES } from '../../compat/routes.js';
import { bearer, getJson, postJson, toAnswer, type Answer, type Json } from '../support/http.js';

/** The smallest chat completion the demo catalog's mock model answers. */
export const CHAT_BODY = { model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] };
/** The smallest Anthropic messages request for the same model. */
export const MESSAGES_BODY = { model: 'mock-chat', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** True when compat/routes.ts serves this method and path (checked at run time, the table is growing). */
export function routeExists(method: string, path: string): boolean {
  return ROUTES.some((route) => route.method === method && matchesPattern(route.path, path));
}

function matchesPattern(pattern: string, path: string): boolean {
  const source = pattern
    .replace(/[.]/g, '\\.')
    .replace(/\{\*\w+\}|\*\w+/g, '.+')
    .replace(/:\w+/g, '[^/]+');
  return new RegExp(`^${source}/?$`).test(path);
}

/** The same gateway reached over another loopback address (it listens on `::`). */
export function onHost(url: string, host: '127.0.0.1' | '[::1]'): string {
  const parsed = new URL(url);
  return `http://${host}:${parsed.port}`;
}

/** Any request, its answer read whole. */
export async function send(url: string, init: RequestInit): Promise<Answer> {
  return toAnswer(await fetch(url, init));
}

/** An OpenAI-shape error: exact status, code and the fields GAPS.md requires. */
export function expectOpenAIError(answer: Answer, status: number, code: string): Json {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  const requestId = answer.headers.get('x-request-id');
  expect(requestId).toBeTruthy();
  const error = answer.body.error as Json;
  expect(error, answer.text).toBeTypeOf('object');
  expect(error.code).toBe(code);
  expect(error.message).toBeTypeOf('string');
  expect((error.message as string).length).toBeGreaterThan(0);
  expect(error.type).toBeTypeOf('string');
  expect(error).toHaveProperty('param');
  return error;
}

/** An OpenAI-shape authentication error: also `reference_id` (= x-request-id) and an ISO 8601 `timestamp`. */
export function expectOpenAIAuthError(answer: Answer, status: number, code: string): Json {
  const error = expectOpenAIError(answer, status, code);
  expect(Object.keys(error).sort()).toEqual(['code', 'message', 'param', 'reference_id', 'timestamp', 'type']);
  expect(error.reference_id).toBe(answer.headers.get('x-request-id'));
  expectRecentIsoTimestamp(error.timestamp);
  expect(error.type).toBe(status === 401 ? 'authentication_error' : 'permission_error');
  return error;
}

/** An Anthropic-shape error of the messages family, with its `request-id` header. */
export function expectAnthropicError(answer: Answer, status: number, code: string, type: string): Json {
  expect(answer.status, answer.text).toBe(status);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  const requestId = answer.headers.get('x-request-id');
  expect(requestId).toBeTruthy();
  expect(answer.headers.get('request-id')).toBe(requestId);
  expect(answer.body.type).toBe('error');
  expect(answer.body.request_id).toBe(requestId);
  const error = answer.body.error as Json;
  expect(error, answer.text).toBeTypeOf('object');
  expect(error.type).toBe(type);
  expect(error.code).toBe(code);
  expect(error.message).toBeTypeOf('string');
  expect((error.message as string).length).toBeGreaterThan(0);
  return error;
}

/** An Anthropic-shape authentication error: also `reference_id` (= the request id) and an ISO 8601 `timestamp`. */
export function expectAnthropicAuthError(answer: Answer, status: number, code: string): Json {
  const error = expectAnthropicError(answer, status, code, status === 401 ? 'authentication_error' : 'permission_error');
  expect(error.reference_id).toBe(answer.headers.get('x-request-id'));
  expectRecentIsoTimestamp(error.timestamp);
  return error;
}

function expectRecentIsoTimestamp(value: unknown): void {
  expect(value).toBeTypeOf('string');
  expect(value as string).toMatch(ISO_8601);
  const age = Date.now() - Date.parse(value as string);
  expect(Math.abs(age)).toBeLessThan(60_000);
}

export interface TrpcAnswer extends Answer {
  data: unknown;
  error: { message: string; code: number; data: { code: string; httpStatus: number; path: string; gatewayCode: string | null } } | undefined;
}

function toTrpcAnswer(answer: Answer): TrpcAnswer {
  const result = answer.body.result as { data?: unknown } | undefined;
  return { ...answer, data: result?.data, error: answer.body.error as TrpcAnswer['error'] };
}

/** A tRPC query over HTTP (GET /trpc/<path>?input=<json>), as @trpc/client's httpLink sends it. */
export async function trpcQuery(baseUrl: string, path: string, input: unknown, token?: string): Promise<TrpcAnswer> {
  const query = input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  return toTrpcAnswer(await getJson(`${baseUrl}/trpc/${path}${query}`, token ? bearer(token) : {}));
}

/** A tRPC mutation over HTTP (POST /trpc/<path> with the JSON input as the body). */
export async function trpcMutation(baseUrl: string, path: string, input: unknown, token?: string): Promise<TrpcAnswer> {
  return toTrpcAnswer(await postJson(`${baseUrl}/trpc/${path}`, input, token ? bearer(token) : {}));
}

/** The data of a successful tRPC call, failing with the error body otherwise. */
export function dataOf<T = Json>(answer: TrpcAnswer): T {
  expect(answer.error, answer.text).toBeUndefined();
  return answer.data as T;
}

/** A failed tRPC call with the gateway's code and status in `error.data`. */
export function expectTrpcError(answer: TrpcAnswer, httpStatus: number, gatewayCode: string): NonNullable<TrpcAnswer['error']> {
  expect(answer.error, answer.text).toBeDefined();
  expect(answer.error!.data.httpStatus).toBe(httpStatus);
  expect(answer.error!.data.gatewayCode).toBe(gatewayCode);
  return answer.error!;
}
