import type { SettlementRow, UsageColumns } from '../../db/queries/settlement.queries.js';
import type { MicroPrice } from './money.js';

/**
 * A finished request, as it will be written: its one usage row (the `usage`
 * table's columns, see `UsageColumns`) with the price as an object, and the
 * hold it releases. The cost is the usage row's, charged in full as far as
 * the balance goes, by the same transaction that releases the hold.
 */
export interface UsageRecord extends UsageColumns {
  price: MicroPrice | Record<string, never>;
  /** The hold taken for this request. */
  heldAmount: number;
}

/** The name billing's callers have long used for a usage record. */
export type UsageEntry = UsageRecord;

/** A hold handed back without a usage row (a request refused before it reached a provider, unused headroom). */
export interface HoldRelease {
  kind: 'release';
  /** Names the release in the ledger's batch (never a usage row). */
  requestId: string;
  accountId: string;
  amount: number;
}

/** What settlement writes: a usage record, or a hold release. */
export type SettlementEntry = UsageRecord | HoldRelease;

export function isHoldRelease(entry: SettlementEntry): entry is HoldRelease {
  return 'kind' in entry && entry.kind === 'release';
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

const NO_PRICE = {};

/** The one mapping of what settlement writes to its row, under `requestId` (the entry's own or one derived from it). */
export function toSettlementRow(entry: SettlementEntry, requestId = entry.requestId): SettlementRow {
  if (isHoldRelease(entry)) {
    return {
      requestId,
      accountId: entry.accountId,
      keyId: null,
      model: '',
      endpoint: '',
      provider: null,
      inputTokens: 0,
      outputTokens: 0,
      cachedInputTokens: 0,
      units: 0,
      status: 0,
      errorCode: null,
      stream: false,
      aborted: false,
      latencyMs: 0,
      cost: 0,
      priceJson: priceJson(NO_PRICE),
      discountPercentage: 0,
      createdAt: new Date(),
      heldAmount: entry.amount,
      billable: false,
    };
  }
  const { price, ...columns } = entry;
  return { ...columns, requestId, priceJson: priceJson(price), billable: true };
}
