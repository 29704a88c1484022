/**
 * Helpers of the `/v1/responses` end-to-end suites: one catalog with a model
 * per provider kind (an OpenAI-format upstream that speaks Responses, an
 * Anthropic-format upstream, the built-in mock), an official `openai` client
 * that records the gateway's answer headers, and readers of raw named-event
 * streams.
 */
import OpenAI, { APIError } from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { expect } from 'vitest';
import type { CatalogFile, ModelEntry } from '../../server/catalog/catalog.schema.js';
import { FAST_UPSTREAM, recordAnswers, startUpstreamWorld, type AnswerRecorder, type UpstreamWorld } from '../support/e2e.js';
import type { TestGateway } from '../support/gateway.js';
import type { AnthropicUpstreamOptions } from '../upstreams/anthropic-upstream.js';
import type { OpenAIUpstreamOptions } from '../upstreams/openai-upstream.js';
import type { RecordedRequest, UpstreamServer } from '../upstreams/upstream-server.js';

export const RESPONSES_ENDPOINT = '/v1/responses';
export const COMPACT_ENDPOINT = '/v1/responses/compact';

/** Provider keys the gateway reads from its environment. */
export const OPENAI_SECRET = 'sk-upstream-openai-responses-SECRET';
export const ANTHROPIC_SECRET = 'sk-ant-upstream-responses-SECRET';

/** Credits per million tokens: every request costs a few micro-credits. */
export const PRICING = { input: 1, output: 2 };

/** The suites' small timeouts, and no retries, so that faults resolve at once. */
const FAST_UPSTREAM_NO_RETRIES = { ...FAST_UPSTREAM, maxRetries: 0 };

/** Model ids of the suite's catalog. */
export const MODELS = {
  /** OpenAI-format upstream: Responses passed through to its `/v1/responses`. */
  openai: 'gpt-resp',
  /** Anthropic-format upstream: bridged to `/v1/messages`. */
  anthropic: 'claude-resp',
  /** The built-in offline provider. */
  mock: 'mock-chat',
  /** OpenAI-format upstream that does not advertise `/v1/responses`. */
  chatOnly: 'gpt-chat-only',
} as const;

function model(id: string, provider: string, upstreamModel: string, endpoints: ModelEntry['endpoints']): ModelEntry {
  return { id, ownedBy: 'e2e', provider, upstreamModel, endpoints, pricing: PRICING };
}

export function responsesCatalog(openaiUrl: string, anthropicUrl: string): CatalogFile {
  const both: ModelEntry['endpoints'] = [RESPONSES_ENDPOINT, COMPACT_ENDPOINT, '/v1/chat/completions'];
  return {
    providers: [
      { id: 'openai-up', kind: 'openai', baseUrl: openaiUrl, apiKey: 'env:UMG_RESP_OPENAI_KEY' },
      { id: 'anthropic-up', kind: 'anthropic', baseUrl: anthropicUrl, apiKey: 'env:UMG_RESP_ANTHROPIC_KEY' },
      { id: 'mock', kind: 'mock' },
    ],
    models: [
      model(MODELS.openai, 'openai-up', 'gpt-4o-mini', both),
      model(MODELS.anthropic, 'anthropic-up', 'claude-sonnet-4-5', both),
      model(MODELS.mock, 'mock', 'mock-chat', both),
      model(MODELS.chatOnly, 'openai-up', 'gpt-4o', ['/v1/chat/completions']),
    ],
  };
}

export type ResponsesWorld = UpstreamWorld;

/** Both upstream test servers and a gateway whose catalog points at them. */
export function startResponsesWorld(options: { openai?: OpenAIUpstreamOptions; anthropic?: AnthropicUpstreamOptions } = {}): Promise<ResponsesWorld> {
  return startUpstreamWorld({
    openai: { expectedApiKey: OPENAI_SECRET, ...options.openai },
    anthropic: { expectedApiKey: ANTHROPIC_SECRET, ...options.anthropic },
    env: { UMG_RESP_OPENAI_KEY: OPENAI_SECRET, UMG_RESP_ANTHROPIC_KEY: ANTHROPIC_SECRET },
    upstream: FAST_UPSTREAM_NO_RETRIES,
    catalog: (urls) => responsesCatalog(urls.openai, urls.anthropic),
  });
}

/** An official client on the gateway that keeps the headers of every answer it got. */
export interface RecordingClient extends Omit<AnswerRecorder, 'fetch'> {
  client: OpenAI;
}

export function createClient(gateway: TestGateway, key: string, defaultHeaders?: Record<string, string>): RecordingClient {
  const { fetch, ...recorder } = recordAnswers('x-request-id');
  return { client: new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0, defaultHeaders, fetch }), ...recorder };
}

/** Asserts an SDK APIError with the gateway's status, code and (when given) param. */
export function expectApiError(error: unknown, expected: { status: number; code: string; param?: string | null }): APIError {
  expect(error, String(error)).toBeInstanceOf(APIError);
  const apiError = error as APIError;
  expect({ status: apiError.status, code: apiError.code }).toEqual({ status: expected.status, code: expected.code });
  if (expected.param !== undefined) expect(apiError.param).toBe(expected.param);
  return apiError;
}

/** Reads a whole SDK event stream, keeping what arrived before a failure. */
export async function collectEvents(stream: AsyncIterable<ResponseStreamEvent>): Promise<{ events: ResponseStreamEvent[]; error: unknown }> {
  const events: ResponseStreamEvent[] = [];
  let error: unknown;
  try {
    for await (const event of stream) events.push(event);
  } catch (caught) {
    error = caught;
  }
  return { events, error };
}

/** Asserts the Responses stream invariants: numbered from 0 by 1, `response.created` first, one terminal event last. */
export function expectWellFormedStream(events: readonly { type: string; sequence_number: number }[], terminal = 'response.completed'): void {
  expect(events.length).toBeGreaterThan(2);
  expect(events.map((event) => event.sequence_number)).toEqual(events.map((_event, index) => index));
  expect(events[0]!.type).toBe('response.created');
  expect(events[1]!.type).toBe('response.in_progress');
  expect(events.at(-1)!.type).toBe(terminal);
  const terminals = events.filter((event) => ['response.completed', 'response.incomplete', 'response.failed'].includes(event.type));
  expect(terminals).toHaveLength(1);
}

export interface RawFrame {
  event: string | undefined;
  data: unknown;
}

/** POSTs JSON with plain fetch; a stream's frames are parsed, `event:` lines kept. */
export async function postRaw(
  gateway: TestGateway,
  key: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; text: string; json: unknown; frames: RawFrame[] }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const isJson = (response.headers.get('content-type') ?? '').includes('application/json');
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: isJson ? (JSON.parse(text) as unknown) : undefined,
    frames: isJson ? [] : parseFrames(text),
  };
}

export function parseFrames(text: string): RawFrame[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.trim() !== '' && !frame.startsWith(':'))
    .map((frame) => {
      let event: string | undefined;
      const data: string[] = [];
      for (const line of frame.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      const joined = data.join('\n');
      return { event, data: joined === '[DONE]' ? joined : (JSON.parse(joined) as unknown) };
    });
}

/** The body the upstream received (parsed JSON). */
export function bodyOf(request: { body: unknown } | undefined): Record<string, unknown> {
  expect(request, 'the upstream received no request').toBeDefined();
  return request!.body as Record<string, unknown>;
}

/**
 * The requests an upstream receives from now on. Unlike `reset()` this keeps
 * the server's counter, so the ids it generates (`resp_<n>`) stay unique.
 */
export function watchRequests(upstream: UpstreamServer): () => RecordedRequest[] {
  const start = upstream.requests.length;
  return () => upstream.requests.slice(start);
}
