/**
 * Helpers of the chat completions end-to-end suites: catalogs pointing at the
 * upstream test servers, an official `openai` client that remembers the
 * gateway's `x-request-id` of every answer, and the assertions on the usage
 * rows, balances and ledger that billing wrote (readers in ../support/usage.ts).
 */
import OpenAI, { type APIError } from 'openai';
import type { ChatCompletionChunk, ChatCompletionCreateParamsNonStreaming, ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { expect } from 'vitest';
import type { UsageRow } from '../../db/schema.js';
import { MICRO_PER_CREDIT } from '../../server/billing/money.js';
import type { ModelEntry, ProviderEntry } from '../../server/catalog/catalog.schema.js';
import { recordAnswers, type AnswerRecorder } from '../support/e2e.js';
import type { TestGateway } from '../support/gateway.js';
import { balancesOf, flushAll, ledgerSumsOf, usageRowOf, usageRowsOf } from '../support/usage.js';

/** Provider keys the gateway reads from its environment; they must never reach a client. */
export const OPENAI_SECRET = 'sk-upstream-openai-0123456789abcdefSECRET';
export const ANTHROPIC_SECRET = 'sk-ant-upstream-0123456789abcdefSECRET';
export const SECRET_ENV: Record<string, string> = {
  UMG_E2E_OPENAI_KEY: OPENAI_SECRET,
  UMG_E2E_ANTHROPIC_KEY: ANTHROPIC_SECRET,
};

export const CHAT_ENDPOINT = '/v1/chat/completions';
/** Credits per million tokens: small requests still cost a few micro-credits. */
export const PRICING = { input: 1, output: 2 };
export const INITIAL_CREDITS = 100;

export function openAIProvider(id: string, baseUrl: string, extra: Partial<ProviderEntry> = {}): ProviderEntry {
  return { id, kind: 'openai', baseUrl, apiKey: 'env:UMG_E2E_OPENAI_KEY', ...extra };
}

export function anthropicProvider(id: string, baseUrl: string, extra: Partial<ProviderEntry> = {}): ProviderEntry {
  return { id, kind: 'anthropic', baseUrl, apiKey: 'env:UMG_E2E_ANTHROPIC_KEY', ...extra };
}

export function chatModel(id: string, provider: string, upstreamModel: string, extra: Partial<ModelEntry> = {}): ModelEntry {
  return { id, ownedBy: 'e2e', provider, upstreamModel, endpoints: [CHAT_ENDPOINT], pricing: PRICING, ...extra };
}

/** An official client on the gateway that records the headers (and so the `x-request-id`) of every answer it got. */
export interface RecordingClient extends Omit<AnswerRecorder, 'fetch'> {
  client: OpenAI;
}

export function createClient(gateway: TestGateway, key: string): RecordingClient {
  const { fetch, ...recorder } = recordAnswers('x-request-id');
  return { client: new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0, fetch }), ...recorder };
}

export type NonStreamBody = ChatCompletionCreateParamsNonStreaming;
export type StreamBody = ChatCompletionCreateParamsStreaming;
/** A body for either kind of call (and for the SDK's stream() helper). */
export type BaseBody = Omit<NonStreamBody, 'stream'>;

/** A body the SDK's types refuse (the gateway must still answer it properly). */
export function untyped(body: Record<string, unknown>): NonStreamBody {
  return body as unknown as NonStreamBody;
}

export interface CollectedStream {
  chunks: ChatCompletionChunk[];
  text: string;
  /** What the stream threw, or undefined when it ended cleanly. */
  error: unknown;
}

/** Reads a whole SDK stream, keeping what arrived before a failure. */
export async function collectStream(stream: AsyncIterable<ChatCompletionChunk>): Promise<CollectedStream> {
  const chunks: ChatCompletionChunk[] = [];
  let error: unknown;
  try {
    for await (const chunk of stream) chunks.push(chunk);
  } catch (caught) {
    error = caught;
  }
  return { chunks, text: textOf(chunks), error };
}

export function textOf(chunks: readonly ChatCompletionChunk[]): string {
  return chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('');
}

/** Asserts an SDK error of this class with the gateway's status, code and param; returns it. */
export function expectApiError<E extends APIError>(
  error: unknown,
  errorClass: abstract new (...args: never[]) => E,
  expected: { status: number; code: string; param?: string | null },
): E {
  expect(error, String(error)).toBeInstanceOf(errorClass);
  const apiError = error as E;
  expect(apiError.status).toBe(expected.status);
  expect(apiError.code).toBe(expected.code);
  if (expected.param !== undefined) expect(apiError.param).toBe(expected.param);
  expect(apiError.requestID).toMatch(/\S/);
  return apiError;
}

export function expectNoSecrets(text: string): void {
  for (const secret of [OPENAI_SECRET, ANTHROPIC_SECRET, 'SECRET']) expect(text).not.toContain(secret);
}

/** Raw SSE of a streamed chat completion, read with plain fetch. */
export async function postRawStream(
  gateway: TestGateway,
  key: string,
  body: Record<string, unknown>,
): Promise<{ status: number; headers: Headers; text: string }> {
  const response = await fetch(`${gateway.url}${CHAT_ENDPOINT}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ ...body, stream: true }),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The JSON payloads of a raw chat stream, `[DONE]` kept as the string. */
export function ssePayloads(text: string): unknown[] {
  return text
    .split('\n\n')
    .filter((frame) => frame.trim() !== '')
    .map((frame) => {
      const data = frame
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .join('\n');
      return data === '[DONE]' ? data : (JSON.parse(data) as unknown);
    });
}

export interface ExpectedUsage {
  accountId: string;
  keyId: string;
  model: string;
  status: number;
  stream: boolean;
  inputTokens?: number;
  outputTokens?: number;
  errorCode?: string | null;
  aborted?: boolean;
  provider?: string | null;
}

/** Asserts the one usage row of a request; charged when the client got an answer (or part of one). */
export async function expectUsageRow(gateway: TestGateway, requestId: string, expected: ExpectedUsage): Promise<UsageRow> {
  const row = await usageRowOf(gateway, requestId);
  expect(row).toMatchObject({
    request_id: requestId,
    account_id: expected.accountId,
    key_id: expected.keyId,
    model: expected.model,
    endpoint: CHAT_ENDPOINT,
    status: expected.status,
    stream: expected.stream,
    aborted: expected.aborted ?? false,
  });
  if (expected.errorCode !== undefined) expect(row.error_code).toBe(expected.errorCode);
  if (expected.provider !== undefined) expect(row.provider).toBe(expected.provider);
  if (expected.inputTokens !== undefined) expect(row.input_tokens).toBe(expected.inputTokens);
  if (expected.outputTokens !== undefined) expect(row.output_tokens).toBe(expected.outputTokens);
  expect(Number.isInteger(row.latency_ms) && row.latency_ms >= 0).toBe(true);
  if (expected.status === 200) {
    expect(Number(row.cost)).toBeGreaterThan(0);
  } else {
    expect(Number(row.cost)).toBe(0);
    expect(row.input_tokens + row.output_tokens).toBe(0);
  }
  return row;
}

/**
 * After everything settled: no hold left, balance = initial − Σ usage costs,
 * and the ledger's deltas sum to the balance. Answers the number of usage rows.
 */
export async function expectBalanceSettled(gateway: TestGateway, accountId: string, initialCredits = INITIAL_CREDITS): Promise<number> {
  await flushAll(gateway);
  const balances = await balancesOf(gateway, accountId);
  const rows = await usageRowsOf(gateway, accountId);
  const ledger = await ledgerSumsOf(gateway, accountId);
  const spent = rows.reduce((sum, row) => sum + Number(row.cost), 0);
  expect(balances.held).toBe(0);
  expect(spent).toBeGreaterThan(0);
  expect(balances.current + balances.vault).toBe(initialCredits * MICRO_PER_CREDIT - spent);
  expect(ledger.current).toBe(balances.current);
  expect(ledger.vault).toBe(balances.vault);
  return rows.length;
}

/** The account's `held`, once billing wrote everything queued. */
export async function heldOf(gateway: TestGateway, accountId: string): Promise<number> {
  await flushAll(gateway);
  return (await balancesOf(gateway, accountId)).held;
}
