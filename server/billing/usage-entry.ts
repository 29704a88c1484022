import type { SettlementRow } from '../../db/queries/settlement.queries.js';
import type { MicroPrice } from './money.js';

/** A finished request, as it will be written: one usage row and, when it cost something, its charge. */
export interface UsageEntry {
  requestId: string;
  accountId: string;
  keyId: string | null;
  model: string;
  endpoint: string;
  provider: string | null;
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  units: number;
  status: number;
  errorCode: string | null;
  stream: boolean;
  aborted: boolean;
  latencyMs: number;
  /** Cost after discount, micro-credits: the usage row's cost, charged in full as far as the balance goes. */
  cost: number;
  price: MicroPrice | Record<string, never>;
  discountPercentage: number;
  /** The hold taken for this request, released by the same transaction that charges it. */
  heldAmount: number;
  createdAt: Date;
}

/** A hold handed back without a usage row (a request refused before it reached a provider, unused headroom). */
export function releaseEntry(accountId: string, amount: number, requestId: string): UsageEntry {
  return {
    requestId,
    accountId,
    keyId: null,
    model: '',
    endpoint: '',
    provider: null,
    inputTokens: 0,
    outputTokens: 0,
    cachedInputTokens: 0,
    units: 0,
    status: 0,
    errorCode: 'RELEASED',
    stream: false,
    aborted: false,
    latencyMs: 0,
    cost: 0,
    price: {},
    discountPercentage: 0,
    heldAmount: amount,
    createdAt: new Date(),
  };
}

/** Prices are shared per model: serialise each once. */
const priceJsonCache = new WeakMap<object, string>();
function priceJson(price: object): string {
  let json = priceJsonCache.get(price);
  if (json === undefined) {
    json = JSON.stringify(price);
    priceJsonCache.set(price, json);
  }
  return json;
}

/** The row settlement writes for an entry, under `requestId` (the entry's own or one derived from it). */
export function toSettlementRow(entry: UsageEntry, requestId = entry.requestId): SettlementRow {
  return {
    requestId,
    accountId: entry.accountId,
    keyId: entry.keyId,
    model: entry.model,
    endpoint: entry.endpoint,
    provider: entry.provider,
    inputTokens: entry.inputTokens,
    outputTokens: entry.outputTokens,
    cachedInputTokens: entry.cachedInputTokens,
    units: entry.units,
    status: entry.status,
    errorCode: entry.errorCode,
    stream: entry.stream,
    aborted: entry.aborted,
    latencyMs: entry.latencyMs,
    cost: entry.cost,
    priceJson: priceJson(entry.price),
    discountPercentage: entry.discountPercentage,
    createdAt: entry.createdAt,
    heldAmount: entry.heldAmount,
    billable: entry.status !== 0,
  };
}
