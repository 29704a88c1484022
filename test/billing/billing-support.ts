/**
 * Helpers of the billing suites ("Credits that are never wrong"): a catalog
 * whose prices make holds and charges easy to predict, plain-fetch calls of
 * the public routes and of /trpc, readers of balances, holds and usage rows,
 * and the ledger invariant as the operator sees it (`admin.billing.checkLedger`).
 */
import { sql } from 'kysely';
import { expect } from 'vitest';
import type { UsageRow } from '../../db/schema.js';
import type { CatalogFile, ModelEntry, ProviderEntry } from '../../server/catalog/catalog.schema.js';
import type { TestGateway } from '../support/gateway.js';

export type Json = Record<string, unknown>;

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

export interface Answer {
  status: number;
  headers: Headers;
  body: Json;
  text: string;
}

async function toAnswer(response: Response): Promise<Answer> {
  const text = await response.text();
  let body: Json = {};
  try {
    body = JSON.parse(text) as Json;
  } catch {
    // Not JSON: assertions on `body` say so.
  }
  return { status: response.status, headers: response.headers, body, text };
}

export function bearer(key: string): Record<string, string> {
  return { authorization: `Bearer ${key}` };
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return toAnswer(await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }));
}

export async function getJson(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return toAnswer(await fetch(url, { headers }));
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

/** Writes every queued usage row and charge of these instances. */
export async function flushAll(...gateways: TestGateway[]): Promise<void> {
  for (const gateway of gateways) await gateway.gateway.services.billing.flush();
}

export interface Balances {
  current: number;
  vault: number;
  held: number;
  cycleSpent: number;
  /** Σ credit_holds of the account, every instance. */
  holds: number;
}

/** One statement, so balances and holds are read from one snapshot even while requests run. */
export async function balancesOf(gateway: TestGateway, accountId: string): Promise<Balances> {
  const { rows } = await sql<{ current_credits: number; vault_credits: number; held: number; cycle_spent: number; holds: number | null }>`
    SELECT current_credits, vault_credits, held, cycle_spent,
      (SELECT SUM(amount) FROM credit_holds h WHERE h.account_id = a.id) AS holds
    FROM accounts a WHERE a.id = ${accountId}`.execute(gateway.gateway.services.db);
  const account = rows[0];
  if (!account) throw new Error(`no account ${accountId}`);
  return {
    current: Number(account.current_credits),
    vault: Number(account.vault_credits),
    held: Number(account.held),
    cycleSpent: Number(account.cycle_spent),
    holds: Number(account.holds ?? 0),
  };
}

export async function usageRowsOf(gateway: TestGateway, accountId: string): Promise<UsageRow[]> {
  return gateway.gateway.services.db.selectFrom('usage').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Calls `probe` until it answers something `done` accepts, every 20 ms, for at most `timeoutMs`. */
export async function pollUntil<T>(probe: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 5_000, what = 'the condition'): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (true) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not hold within ${timeoutMs} ms; last value ${JSON.stringify(value)}`);
    await sleep(20);
  }
}

/** The usage row of one request, flushing the instance until billing has written it. */
export function usageRowOf(gateway: TestGateway, requestId: string, timeoutMs = 5_000): Promise<UsageRow> {
  const { db, billing } = gateway.gateway.services;
  return pollUntil(
    async () => {
      await billing.flush();
      return db.selectFrom('usage').selectAll().where('request_id', '=', requestId).executeTakeFirst();
    },
    (row) => row !== undefined,
    timeoutMs,
    `the usage row of ${requestId}`,
  ) as Promise<UsageRow>;
}
