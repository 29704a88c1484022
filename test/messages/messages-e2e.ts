/**
 * Helpers of the `/v1/messages` end-to-end suites: a catalog with one model per
 * provider kind (Anthropic-format upstream = pass-through, OpenAI-format
 * upstream = bridge, built-in mock) and the gateway in front of both upstream
 * test servers, an official `@anthropic-ai/sdk` client that remembers the
 * gateway's `request-id` of every answer, a raw SSE reader, and the balance
 * assertions of the suites (readers in ../support/usage.ts).
 */
import Anthropic, { type APIError } from '@anthropic-ai/sdk';
import { expect } from 'vitest';
import { MICRO_PER_CREDIT } from '../../server/billing/money.js';
import type { CatalogFile, ModelEntry, ProviderEntry } from '../../server/catalog/catalog.schema.js';
import { recordAnswers, startUpstreamWorld, type AnswerRecorder, type UpstreamWorld } from '../support/e2e.js';
import type { TestGateway } from '../support/gateway.js';
import { balancesOf, flushAll, usageRowsOf } from '../support/usage.js';
import type { AnthropicUpstreamOptions } from '../upstreams/anthropic-upstream.js';
import type { OpenAIUpstreamOptions } from '../upstreams/openai-upstream.js';
import type { RecordedRequest, UpstreamServer } from '../upstreams/upstream-server.js';

/** Provider keys the gateway reads from its environment. */
export const OPENAI_SECRET = 'sk-upstream-openai-messages-e2e-SECRET';
export const ANTHROPIC_SECRET = 'sk-ant-upstream-messages-e2e-SECRET';
export const SECRET_ENV: Record<string, string> = {
  UMG_MESSAGES_OPENAI_KEY: OPENAI_SECRET,
  UMG_MESSAGES_ANTHROPIC_KEY: ANTHROPIC_SECRET,
};

export const MESSAGES_ENDPOINTS: ModelEntry['endpoints'] = ['/v1/messages', '/v1/messages/count_tokens'];
/** Credits per million tokens: small requests still cost a few micro-credits. */
export const PRICING = { input: 1, output: 2 };
export const INITIAL_CREDITS = 100;

/** The three provider kinds every scenario runs on; `model` is the catalog id the client sends. */
export const KINDS = [
  { kind: 'anthropic', model: 'claude-msg', upstreamModel: 'claude-sonnet-4-5' },
  { kind: 'openai', model: 'gpt-msg', upstreamModel: 'gpt-4o-mini' },
  { kind: 'mock', model: 'mock-chat', upstreamModel: 'mock-chat' },
] as const;
export type Kind = (typeof KINDS)[number]['kind'];

export function messagesModel(id: string, provider: string, upstreamModel: string, extra: Partial<ModelEntry> = {}): ModelEntry {
  return { id, ownedBy: 'e2e', provider, upstreamModel, endpoints: MESSAGES_ENDPOINTS, pricing: PRICING, ...extra };
}

/** A catalog with the three kinds, on these upstream base URLs (with `/v1`). */
export function messagesCatalog(urls: { openai: string; anthropic: string }, extra: { providers?: ProviderEntry[]; models?: ModelEntry[] } = {}): CatalogFile {
  return {
    providers: [
      { id: 'openai-up', kind: 'openai', baseUrl: urls.openai, apiKey: 'env:UMG_MESSAGES_OPENAI_KEY' },
      // No allowedBetas: every beta reaches this provider by default (the suites check they are forwarded as sent).
      { id: 'anthropic-up', kind: 'anthropic', baseUrl: urls.anthropic, apiKey: 'env:UMG_MESSAGES_ANTHROPIC_KEY' },
      { id: 'mock', kind: 'mock' },
      ...(extra.providers ?? []),
    ],
    models: [
      messagesModel('claude-msg', 'anthropic-up', 'claude-sonnet-4-5'),
      messagesModel('gpt-msg', 'openai-up', 'gpt-4o-mini'),
      messagesModel('mock-chat', 'mock', 'mock-chat'),
      ...(extra.models ?? []),
    ],
  };
}

/** The gateway in front of both upstream test servers, with the catalog of the three kinds. */
export interface MessagesWorld extends UpstreamWorld {
  /** The upstream test server behind a provider kind (none behind the mock). */
  upstreamOf(kind: Kind): UpstreamServer | undefined;
  /** The upstream requests a call made, by running it between two looks at the recordings. */
  requestsDuring<T>(kind: Kind, call: () => Promise<T>): Promise<{ result: T; requests: RecordedRequest[] }>;
}

/** Both upstream test servers (expecting the suites' provider keys) and a gateway on {@link messagesCatalog}. */
export async function startMessagesWorld(options: { openai?: OpenAIUpstreamOptions; anthropic?: AnthropicUpstreamOptions } = {}): Promise<MessagesWorld> {
  const world = await startUpstreamWorld({
    openai: { expectedApiKey: OPENAI_SECRET, ...options.openai },
    anthropic: { expectedApiKey: ANTHROPIC_SECRET, ...options.anthropic },
    env: SECRET_ENV,
    catalog: (urls) => messagesCatalog(urls),
  });
  const upstreamOf = (kind: Kind): UpstreamServer | undefined => {
    if (kind === 'anthropic') return world.anthropicUpstream;
    if (kind === 'openai') return world.openaiUpstream;
    return undefined;
  };
  return {
    ...world,
    upstreamOf,
    async requestsDuring(kind, call) {
      const upstream = upstreamOf(kind);
      const before = upstream?.requests.length ?? 0;
      const result = await call();
      return { result, requests: upstream ? upstream.requests.slice(before) : [] };
    },
  };
}

/** An official client on the gateway that records every answer's headers. */
export interface RecordingClient extends Omit<AnswerRecorder, 'fetch'> {
  client: Anthropic;
  /** What the SDK sent, in order: URL, headers and the JSON body. */
  sent: { url: string; headers: Headers; body: unknown }[];
}

/**
 * `new Anthropic({ baseURL: gateway.url, apiKey })`. SDK 1.12 sends `apiKey`
 * as `Authorization: Bearer`; with `auth: 'x-api-key'` the key is moved to
 * the `x-api-key` header the older SDKs and curl examples use.
 */
export function createClient(gateway: TestGateway, key: string, options: { auth?: 'bearer' | 'x-api-key' } = {}): RecordingClient {
  const sent: RecordingClient['sent'] = [];
  const { fetch, ...recorder } = recordAnswers('request-id', (input, init) => {
    let requestInit = init;
    if (options.auth === 'x-api-key') {
      const headers = new Headers(init?.headers);
      const authorization = headers.get('authorization');
      headers.delete('authorization');
      if (authorization) headers.set('x-api-key', authorization.replace(/^Bearer /, ''));
      requestInit = { ...init, headers };
    }
    const body = typeof requestInit?.body === 'string' ? (JSON.parse(requestInit.body) as unknown) : undefined;
    sent.push({ url: String(input instanceof Request ? input.url : input), headers: new Headers(requestInit?.headers), body });
    return requestInit;
  });
  return { client: new Anthropic({ baseURL: gateway.url, apiKey: key, maxRetries: 0, fetch }), sent, ...recorder };
}

/**
 * Asserts an SDK error of this class with the Anthropic body shape
 * (`{type:"error", error:{type, message, code}}`) and a `request-id`; returns it.
 */
export function expectAnthropicError<T extends abstract new (...args: never[]) => APIError>(
  error: unknown,
  errorClass: T,
  expected: { status: number; type: string; code?: string },
): APIError {
  expect(error, String(error)).toBeInstanceOf(errorClass);
  const apiError = error as APIError;
  expect(apiError.status).toBe(expected.status);
  expect(apiError.type).toBe(expected.type);
  const body = apiError.error as { type?: string; error?: { type?: string; message?: string; code?: string } };
  expect(body.type).toBe('error');
  expect(body.error?.type).toBe(expected.type);
  expect(body.error?.message).toMatch(/\S/);
  if (expected.code !== undefined) expect(body.error?.code).toBe(expected.code);
  expect(apiError.requestID).toMatch(/\S/);
  expect(apiError.headers?.get('request-id')).toBe(apiError.requestID);
  return apiError;
}

export interface RawSseEvent {
  event: string | undefined;
  data: Record<string, unknown>;
}

/** Parses a whole SSE body (named events, `:` comments skipped). */
export function parseSse(text: string): RawSseEvent[] {
  const events: RawSseEvent[] = [];
  for (const frame of text.split(/\r?\n\r?\n/)) {
    let event: string | undefined;
    const data: string[] = [];
    for (const line of frame.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length === 0) continue;
    events.push({ event, data: JSON.parse(data.join('\n')) as Record<string, unknown> });
  }
  return events;
}

/** A raw `POST` to the gateway (for bodies and headers the SDK would not send). */
export async function postRaw(
  gateway: TestGateway,
  path: string,
  body: unknown,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Headers; text: string; json: () => Record<string, unknown> }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: () => JSON.parse(text) as Record<string, unknown> };
}

/** Balance (regular + vault) and open holds of an account, in micro-credits, once billing wrote what it queued. */
export async function balanceOf(gateway: TestGateway, accountId: string): Promise<{ total: number; held: number }> {
  await flushAll(gateway);
  const balances = await balancesOf(gateway, accountId);
  return { total: balances.current + balances.vault, held: balances.held };
}

/** After everything settled: no hold left, and balance = initial − Σ usage costs. */
export async function expectBalanceSettled(gateway: TestGateway, accountId: string, initialCredits = INITIAL_CREDITS): Promise<void> {
  await flushAll(gateway);
  const rows = await usageRowsOf(gateway, accountId);
  const spent = rows.reduce((sum, row) => sum + Number(row.cost), 0);
  const balance = await balanceOf(gateway, accountId);
  expect(balance.held).toBe(0);
  expect(balance.total).toBe(initialCredits * MICRO_PER_CREDIT - spent);
}
