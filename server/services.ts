import type { Kysely } from 'kysely';
import type { DatabaseHandle } from '../db/client.js';
import type { Database } from '../db/schema.js';
import type { AuthCache } from './auth/auth-cache.js';
import type { AuthFailureLimiter } from './auth/auth-failures.js';
import type { KeyUsageTracker } from './auth/key-usage.js';
import type { Billing } from './billing/billing.js';
import type { Catalog } from './catalog/catalog.js';
import type { GatewayConfig } from './config.js';
import type { Logger } from './logger.js';
import type { UpstreamClient } from './upstream/upstream-client.js';
import type { DiscountSettings } from './billing/discount-settings.js';
import type { RateLimiter } from './ratelimit/rate-limiter.js';
import type { UploadStore } from './uploads/upload-store.js';
import type { VideoWorker } from './videos/video-worker.js';
import type { VideoStorage } from './videos/video-storage.js';
import type { GeneratedImageStore } from './images/generated-image-store.js';
import type { RestrictedFamilies } from './restricted/families.js';
import type { ProviderHealth } from './providers/provider-health.js';
import type { Observability } from './observability/observability.js';

/** Long-lived parts of one gateway instance, built once at start (server/gateway.ts); `catalog` and `restricted` follow reloads. */
export interface Services {
  config: GatewayConfig;
  database: DatabaseHandle;
  db: Kysely<Database>;
  catalog: Catalog;
  authCache: AuthCache;
  /** Failed authentications per client address (429 past the limit, before any lookup). */
  authFailures: AuthFailureLimiter;
  keyUsage: KeyUsageTracker;
  billing: Billing;
  upstream: UpstreamClient;
  log: Logger;
  /** Today's per-account discounts. */
  discounts: DiscountSettings;
  rateLimiter: RateLimiter;
  /** Multipart uploads on disk while their request runs. */
  uploads: UploadStore;
  /** Generated images behind signed links (`response_format: url`). */
  generatedImages: GeneratedImageStore;
  /** SHA-256 (hex) of the admin token. */
  adminTokenHash: string;
  instanceId: string;
  /** The background video jobs of this instance. */
  videos: VideoWorker;
  /** Where finished videos are kept (a directory, or an S3-compatible bucket). */
  videoStorage: VideoStorage;
  /** The catalog's restricted families and their usage-check policies (replaced with the catalog on a reload). */
  restricted: RestrictedFamilies;
  /** Deployments cooled down after repeated failures (this instance's view). */
  providerHealth: ProviderHealth;
  /** Metrics, traces and the access log. */
  observability: Observability;
}
