/**
 * The meter of a background job (a video; later a batch), which outlives
 * its request and its instance: priced by the same rule as a request's meter
 * (`priceOf`), held for the job in the transaction that records it, and
 * ended by exactly one usage row — charged when the job completes (at the
 * discount of the day it was created, never more than was held), uncharged
 * when it fails or is deleted. The hold and the row are the job's, in
 * `job_holds` (see billing/job-billing.ts).
 */
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { AuthContext } from '../auth/authenticate.js';
import type { Billing, UsageRecord } from '../billing/billing.js';
import type { CatalogModel } from '../catalog/catalog.js';
import type { Endpoint } from '../catalog/catalog.schema.js';
import { buildUsageEntry, priceOf, type MeteredUsage } from './metering.js';
import type { DiscountSource } from '../billing/discount-settings.js';

/** What a job meter uses: today's discounts and the job holds. */
export interface JobMeterDeps {
  discounts: DiscountSource;
  billing: Pick<Billing, 'holdForJob' | 'heldForJob' | 'settleJob' | 'releaseJob'>;
}

/** A job as its meter needs it (a video row has these columns). */
export interface MeteredJob {
  id: string;
  account_id: string;
  key_id: string | null;
  /** The model's id (the model may have left the catalog since). */
  model: string;
  created_at: Date | string;
  /** The discount of the day the job was created, kept with the job. */
  discount_percentage: number;
}

/** What a job is held for, priced when it is created. */
export interface JobQuote {
  discountPercentage: number;
  /** Micro-credits held. */
  amount: number;
}

/** A job that stopped short of its result, for its uncharged row. */
export interface JobFailure {
  /** 502 failed; 499 deleted before it completed. */
  status: number;
  errorCode: string;
  provider: string | null;
}

type Guard = (trx: Transaction<Database>) => Promise<boolean>;

const NOTHING_USED: MeteredUsage = { inputTokens: 0, outputTokens: 0 };
const NO_PRICE = { inputPerMillion: 0, outputPerMillion: 0, cachedInputPerMillion: 0, image: 0, second: 0, character: 0, request: 0 };

export class JobMeter {
  constructor(
    private readonly deps: JobMeterDeps,
    private readonly endpoint: Endpoint,
  ) {}

  /** The most a job can cost at today's discount (the amount to hold). */
  quote(auth: AuthContext, model: CatalogModel, maximum: MeteredUsage): JobQuote {
    const discountPercentage = this.deps.discounts.percentageFor(auth.account.id, model.id, new Date());
    return { discountPercentage, amount: priceOf(model.price, maximum, discountPercentage) };
  }

  /** Holds the quote for the job; `within` records the job in the same transaction. 402 when the account cannot cover it. */
  hold(auth: AuthContext, jobId: string, quote: JobQuote, within: (trx: Transaction<Database>) => Promise<void>): Promise<void> {
    return this.deps.billing.holdForJob(auth.account.id, quote.amount, jobId, within);
  }

  /**
   * Charges a completed job its usage and releases its hold, with `guard`
   * (the job's own state change) in the same transaction. Answers the cost,
   * or undefined when the job was not this call's to settle.
   */
  async settle(job: MeteredJob, model: CatalogModel, usage: MeteredUsage, provider: string, guard: Guard): Promise<number | undefined> {
    const held = await this.deps.billing.heldForJob(job.id);
    const cost = Math.min(held, priceOf(model.price, usage, job.discount_percentage));
    const record = this.recordOf(job, model, { usage, status: 200, errorCode: null, provider }, cost, held);
    return (await this.deps.billing.settleJob(job.id, record, guard)) ? cost : undefined;
  }

  /** Ends a job that failed or was deleted: an uncharged row and the hold released, with `guard` in the same transaction. */
  release(job: MeteredJob, model: CatalogModel | undefined, failure: JobFailure, guard: Guard): Promise<boolean> {
    return this.deps.billing.releaseJob(job.id, this.recordOf(job, model, { usage: NOTHING_USED, ...failure }, 0, 0), guard);
  }

  /** The job's one usage row (its request id is the job id). */
  private recordOf(
    job: MeteredJob,
    model: CatalogModel | undefined,
    outcome: { usage: MeteredUsage; status: number; errorCode: string | null; provider: string | null },
    cost: number,
    held: number,
  ): UsageRecord {
    return buildUsageEntry({
      requestId: job.id,
      accountId: job.account_id,
      keyId: job.key_id,
      // A model taken out of the catalog since is recorded by its id, at no price.
      model: model ?? { id: job.model, price: NO_PRICE },
      endpoint: this.endpoint,
      stream: false,
      latencyMs: Date.now() - new Date(job.created_at).getTime(),
      settlement: { ...outcome, aborted: false },
      cost,
      discountPercentage: job.discount_percentage,
      heldAmount: held,
    });
  }
}
