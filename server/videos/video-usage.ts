import type { Video as VideoRow } from '../../db/schema.js';
import type { UsageRecord } from '../billing/billing.js';
import type { CatalogModel } from '../catalog/catalog.js';
import { buildUsageEntry, type MeteredUsage } from '../generation/metering.js';

/** How a video's job ended, for its one usage row. */
export interface VideoOutcome {
  usage: MeteredUsage;
  /** 200 completed; 502 failed; 499 deleted before it completed. */
  status: number;
  errorCode: string | null;
  /** Micro-credits, after discount. */
  cost: number;
  held: number;
  provider: string | null;
}

const NO_PRICE = { inputPerMillion: 0, outputPerMillion: 0, cachedInputPerMillion: 0, image: 0, second: 0, character: 0, request: 0 };

/** A video's one usage row (its request id is the video id), built by the one usage-row builder. */
export function buildVideoUsageEntry(job: VideoRow, model: CatalogModel | undefined, outcome: VideoOutcome): UsageRecord {
  return buildUsageEntry({
    requestId: job.id,
    accountId: job.account_id,
    keyId: job.key_id,
    // A model taken out of the catalog since is recorded by its id, at no price.
    model: model ?? { id: job.model, price: NO_PRICE },
    endpoint: '/v1/videos',
    stream: false,
    latencyMs: Date.now() - new Date(job.created_at).getTime(),
    settlement: { usage: outcome.usage, status: outcome.status, errorCode: outcome.errorCode, aborted: false, provider: outcome.provider },
    cost: outcome.cost,
    discountPercentage: job.discount_percentage,
    heldAmount: outcome.held,
  });
}
