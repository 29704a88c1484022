/**
 * Metering, shared by every billed operation: the hold for a request's
 * maximum cost before any provider is called, and exactly one usage record
 * (with its charge) however the request ends — answered, failed, aborted or
 * abandoned.
 */
import type { AuthContext } from '../auth/authenticate.js';
import type { UsageRecord } from '../billing/billing.js';
import { applyDiscount, computeCost, type BillableUsage, type MicroPrice } from '../billing/money.js';
import type { CatalogModel } from '../catalog/catalog.js';
import type { Endpoint } from '../catalog/catalog.schema.js';
import { ClientAbortedError, GatewayError, toGatewayError } from '../errors.js';
import type { Billing } from '../billing/billing.js';
import type { Observability } from '../observability/observability.js';
import type { DiscountSource } from '../billing/discount-settings.js';
import { redactError } from './redaction.js';
import type { RequestObservation } from '../observability/observation.js';

/** What a request used, in the units its model is priced in. */
export type MeteredUsage = BillableUsage;

/** What a meter uses: today's discounts, the credit holds and the usage queue, and their metrics. */
export interface MeterDeps {
  discounts: DiscountSource;
  billing: Pick<Billing, 'hold' | 'record'>;
  observability: Pick<Observability, 'hold' | 'usage'>;
}

export interface MeterOptions {
  deps: MeterDeps;
  auth: AuthContext;
  requestId: string;
  /** `performance.now()` when the request arrived. */
  receivedAt: number;
  model: CatalogModel;
  endpoint: Endpoint;
  stream: boolean;
  /** The request's observation (metrics, access log, spans); absent for background jobs. */
  observation?: RequestObservation;
}

export interface Settlement {
  usage: MeteredUsage;
  /** The status the client saw (200 for a stream that started). */
  status: number;
  errorCode: string | null;
  aborted: boolean;
  provider: string | null;
}

const NOTHING_USED: MeteredUsage = { inputTokens: 0, outputTokens: 0 };

/** The media units of a usage row: images, characters, or milliseconds of audio/video. */
function unitsOf(usage: MeteredUsage): number {
  if (usage.images) return usage.images;
  if (usage.characters) return usage.characters;
  if (usage.seconds) return Math.ceil(usage.seconds * 1000);
  return 0;
}

/** The one pricing rule of requests and jobs: a usage at a model's price, after the discount, micro-credits. */
export function priceOf(price: MicroPrice, usage: MeteredUsage, discountPercentage: number): number {
  return applyDiscount(computeCost(price, usage), discountPercentage);
}

/**
 * One request's money: `hold()` once before the provider is called,
 * `settle()` once when it ends (later calls are ignored), so no path can
 * charge twice or strand a hold.
 */
export class Meter {
  readonly discountPercentage: number;
  private held = 0;
  private settledWith: Settlement | undefined;

  constructor(private readonly options: MeterOptions) {
    this.discountPercentage = options.deps.discounts.percentageFor(options.auth.account.id, options.model.id, new Date());
  }

  /** The discounted cost of a usage at the model's price, micro-credits. */
  costOf(usage: MeteredUsage): number {
    return priceOf(this.options.model.price, usage, this.discountPercentage);
  }

  get holdAmount(): number {
    return this.held;
  }

  get settled(): boolean {
    return this.settledWith !== undefined;
  }

  /** Holds the cost of the most the request can use (402 when the balance cannot cover it). */
  async hold(maximum: MeteredUsage): Promise<void> {
    const amount = this.costOf(maximum);
    await this.options.deps.observability.hold(this.options.observation, amount, () => this.options.deps.billing.hold(this.options.auth.account.id, amount));
    this.held = amount;
  }

  /** Records the request's one usage row; the charge is its cost when it was served (or cut off), nothing otherwise. */
  settle(settlement: Settlement): void {
    if (this.settledWith) return;
    this.settledWith = settlement;
    const { deps, auth, model } = this.options;
    const charged = settlement.status === 200 || settlement.aborted;
    const entry = buildUsageEntry({
      requestId: this.options.requestId,
      accountId: auth.account.id,
      keyId: auth.key.id,
      model,
      endpoint: this.options.endpoint,
      stream: this.options.stream,
      latencyMs: performance.now() - this.options.receivedAt,
      settlement,
      cost: charged ? this.costOf(settlement.usage) : 0,
      discountPercentage: this.discountPercentage,
      heldAmount: this.held,
    });
    deps.billing.record(entry);
    deps.observability.usage(this.options.observation, entry, this.held > 0);
  }

  /**
   * Settles a request that ended in an error before any answer went out,
   * and answers the error to throw (provider secrets removed).
   */
  fail(error: unknown): GatewayError {
    const aborted = error instanceof ClientAbortedError;
    const gatewayError = aborted
      ? new GatewayError('INVALID_REQUEST', 'client closed request', { status: 499 })
      : redactError(toGatewayError(error), this.options.model.secrets);
    this.settle({ usage: NOTHING_USED, status: gatewayError.status, errorCode: aborted ? 'CLIENT_ABORTED' : gatewayError.code, aborted, provider: null });
    return gatewayError;
  }
}

export interface UsageEntryFields {
  requestId: string;
  accountId: string;
  /** Null for a job whose key was deleted since. */
  keyId: string | null;
  /** The model's id and price (a background job may outlive the model's catalog entry). */
  model: Pick<CatalogModel, 'id' | 'price'>;
  endpoint: Endpoint;
  stream: boolean;
  latencyMs: number;
  settlement: Settlement;
  cost: number;
  discountPercentage: number;
  heldAmount: number;
}

/** The one builder of a usage row (billing writes it with its charge in the next batch). */
export function buildUsageEntry(fields: UsageEntryFields): UsageRecord {
  const { usage } = fields.settlement;
  return {
    requestId: fields.requestId,
    accountId: fields.accountId,
    keyId: fields.keyId,
    model: fields.model.id,
    endpoint: fields.endpoint,
    provider: fields.settlement.provider,
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cachedInputTokens: usage.cachedInputTokens ?? 0,
    units: unitsOf(usage),
    status: fields.settlement.status,
    errorCode: fields.settlement.errorCode,
    stream: fields.stream,
    aborted: fields.settlement.aborted,
    latencyMs: fields.latencyMs,
    cost: fields.cost,
    price: fields.model.price,
    discountPercentage: fields.discountPercentage,
    heldAmount: fields.heldAmount,
    createdAt: new Date(),
  };
}
