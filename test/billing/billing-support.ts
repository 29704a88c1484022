/**
 * Helpers of the billing suites ("Credits that are never wrong"): a catalog
 * whose prices make holds and charges easy to predict, plain-fetch calls of
 * the public routes and of /trpc, polling, and the ledger invariant as the
 * operator sees it (`admin.billing.checkLedger`). Readers of balances, holds
 * and usage rows are in ../support/usage.ts.
 */
import { expect } from 'vitest';
import type { CatalogFile, ModelEntry, ProviderEntry } from '../../server/catalog/catalog.schema.js';
import type { TestGateway } from '../support/gateway.js';
import { bearer, getJson, postJson, type Answer, type Json } from '../support/http.js';
import { waitFor } from '../support/wait.js';

export const CHAT_ENDPOINT = '/v1/chat/completions';
/** Flat 0.01 credits per request and nothing per token: the hold equals the charge exactly. */
export const FLAT_MODEL = 'mock-flat';
export const FLAT_PRICE_MICRO = 10_000;
/** Priced per token (credits per million), so costs have odd micro-credit amounts. */
export const TOKEN_MODEL = 'mock-chat';
export const TOKEN_PRICING = { input: 3, output: 15 };

/** Paid plans without a per-minute limit, so the limiter stays out of the way; `free` keeps its 20/min. */
export const UNLIMITED_PRO_ENV: Record<string, string> = { RATE_LIMITS: 'pro=0' };

const CHAT_ENDPOINTS: ModelEntry['endpoints'] = ['/v1/chat/completions', '/v1/messages', '/v1/responses'];

export function mockModel(id: string, pricing: ModelEntry['pricing']): ModelEntry {
  return { id, ownedBy: 'umg', provider: 'mock', upstreamModel: id, endpoints: CHAT_ENDPOINTS, pricing };
}

export function openAIModel(id: string, provider: string, pricing: ModelEntry['pricing'] = TOKEN_PRICING): ModelEntry {
  return { id, ownedBy: 'umg', provider, upstreamModel: 'gpt-4o-mini', endpoints: [CHAT_ENDPOINT], pricing };
}

/** The offline mock provider with the flat and the per-token model, plus whatever a suite adds. */
export function billingCatalog(extra: { providers?: ProviderEntry[]; models?: ModelEntry[] } = {}): CatalogFile {
  return {
    providers: [{ id: 'mock', kind: 'mock' }, ...(extra.providers ?? [])],
    models: [mockModel(FLAT_MODEL, { input: 0, output: 0, request: 0.01 }), mockModel(TOKEN_MODEL, TOKEN_PRICING), ...(extra.models ?? [])],
  };
}

export function chatBody(model: string, content = 'hi', extra: Json = {}): Json {
  return { model, messages: [{ role: 'user', content }], ...extra };
}

export function postChat(gateway: TestGateway, key: string, body: Json = chatBody(FLAT_MODEL)): Promise<Answer> {
  return postJson(`${gateway.url}${CHAT_ENDPOINT}`, body, bearer(key));
}

export function getCredits(gateway: TestGateway, key: string): Promise<Answer> {
  return getJson(`${gateway.url}/v1/credits`, bearer(key));
}

export function errorCodeOf(answer: Answer): string | undefined {
  return (answer.body.error as { code?: string } | undefined)?.code;
}

/** The data of a tRPC call over HTTP, as @trpc/client's httpLink sends it, or a failure showing the body. */
function trpcData<T>(answer: Answer): T {
  expect(answer.body.error, answer.text).toBeUndefined();
  expect(answer.status, answer.text).toBe(200);
  return (answer.body.result as { data: T }).data;
}

export async function trpcQuery<T>(gateway: TestGateway, path: string, input: unknown): Promise<T> {
  const query = input === undefined ? '' : `?input=${encodeURIComponent(JSON.stringify(input))}`;
  return trpcData<T>(await getJson(`${gateway.url}/trpc/${path}${query}`, bearer(gateway.adminToken)));
}

export async function trpcMutation<T>(gateway: TestGateway, path: string, input: unknown): Promise<T> {
  return trpcData<T>(await postJson(`${gateway.url}/trpc/${path}`, input, bearer(gateway.adminToken)));
}

interface LedgerCheck {
  ok: boolean;
  accounts: Array<{ account_id: string; ok: boolean } & Record<string, unknown>>;
}

/**
 * The invariant through the operator's procedure: every account of the
 * database (or just one) has ledger = balances, Σ holds = held, Σ usage costs
 * = Σ charges, nothing negative.
 */
export async function expectLedgerOk(gateway: TestGateway, accountId?: string): Promise<LedgerCheck> {
  const check = await trpcQuery<LedgerCheck>(gateway, 'admin.billing.checkLedger', accountId ? { account_id: accountId } : {});
  expect(
    check.accounts.filter((account) => !account.ok),
    'accounts whose books disagree',
  ).toEqual([]);
  expect(check.ok).toBe(true);
  if (accountId) expect(check.accounts.map((account) => account.account_id)).toEqual([accountId]);
  return check;
}

/**
 * How long a condition that holds within milliseconds on an idle machine
 * (a row written, a hold released) may take on a busy one before a test fails.
 */
export const CONDITION_BUDGET_MS = 15_000;

/**
 * Calls `probe` until it answers something `done` accepts, every 20 ms, for at
 * most `timeoutMs`; answers that value. Fails naming the last value seen.
 */
export async function pollUntil<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = CONDITION_BUDGET_MS, what = 'the condition'): Promise<T> {
  let last: { value: T } | undefined;
  let probeFailed = false;
  const check = async (): Promise<boolean> => {
    try {
      last = { value: await probe() };
      return done(last.value);
    } catch (error) {
      probeFailed = true;
      throw error;
    }
  };
  await waitFor(check, { timeoutMs, intervalMs: 20, message: what }).catch((error: unknown) => {
    // A probe that threw ends the wait with its own error; a deadline names the last value seen.
    if (probeFailed || last === undefined) throw error;
    throw new Error(`${what} did not hold within ${timeoutMs} ms; last value ${JSON.stringify(last.value)}`);
  });
  return last!.value;
}
