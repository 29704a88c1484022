import { randomUUID } from 'node:crypto';
import os from 'node:os';
import type { Server } from 'node:http';
import { createServer } from 'node:http';
import { migrateToLatest, notify, openDatabase, type DatabaseHandle } from '../db/client.js';
import { createApp, type AppState } from '../compat/app.js';
import { BodyBudget } from '../compat/body-budget.js';
import { AuthCache, CACHE_CHANNEL, type CacheInvalidation } from './auth/auth-cache.js';
import { KeyUsageTracker } from './auth/key-usage.js';
import { AuthFailureLimiter } from './auth/auth-failures.js';
import { Billing, BILLING_CHANNEL } from './billing/billing.js';
import { ensureAdminToken, followAdminToken } from './admin-token.js';
import { ensureBootstrapKey, ensureDemoAccountWithSignIn, type DemoAccount } from './bootstrap.js';
import { applyCatalog, Catalog, findUnsetSecrets, loadCatalogSource } from './catalog/catalog.js';
import { findAccountsOnUnknownPlans } from './accounts/accounts.service.js';
import type { CatalogFile } from './catalog/catalog.schema.js';
import { listenOrigin, type GatewayConfig } from './config.js';
import { createLogger, type Logger } from './logger.js';
import type { Services } from './services.js';
import { UpstreamClient } from './upstream/upstream-client.js';
import { DiscountSettings, SETTINGS_CHANNEL } from './billing/discount-settings.js';
import { createRateLimiter } from './ratelimit/create-rate-limiter.js';
import { IpAllowlist } from './auth/ip-allowlist.js';
import { UploadStore } from './uploads/upload-store.js';
import { removeStaleScratchFolders } from './scratch-folders.js';
import { openVideoStorage } from './videos/open-video-storage.js';
import { VideoWorker } from './videos/video-worker.js';
import { GeneratedImageStore } from './images/generated-image-store.js';
import { RestrictedFamilies } from './restricted/families.js';
import { ProviderHealth } from './providers/provider-health.js';
import { Observability } from './observability/observability.js';
import { onVertexAccessToken } from './providers/gemini/vertex-auth.js';
import { CATALOG_CHANNEL, followCatalog, followSwap } from './catalog-reload.js';

export interface RunningGateway {
  services: Services;
  server: Server;
  url: string;
  /** The demo key, printed once on a first start. */
  demoKey?: string;
  /** The demo account owner's dashboard sign-in, printed once with the key. */
  demoSignIn?: DemoAccount['signIn'];
  /** Requests being answered (graceful shutdown waits for them). */
  requestsInFlight(): number;
  /** Bytes of request bodies held in memory now (of BODY_BUDGET_BYTES). */
  bodyBytesHeld(): number;
  /** Stops accepting, finishes in-flight work up to the grace period, flushes, closes the database, removes its scratch folders. */
  stop(): Promise<void>;
}

export interface StartOptions {
  logger?: Logger;
  env?: NodeJS.ProcessEnv;
  /** In-memory PGlite only: start from this migrated dump (tests). */
  pgliteSnapshot?: Blob;
  /**
   * The admin CLI's `--direct`: works on the database as it is. It leaves the
   * catalog in the database (GATEWAY_CONFIG only names the restricted
   * families), and the admin token alone (the CLI brings a one-time token of its own).
   */
  asAdminTool?: boolean;
  /**
   * An open database to share with other instances of this process (tests of
   * several instances on one PGlite); it stays open when this instance stops.
   */
  database?: DatabaseHandle;
}

export async function buildServices(config: GatewayConfig, options: StartOptions = {}): Promise<Services> {
  const log = options.logger ?? createLogger(config.logLevel);
  const database: DatabaseHandle = options.database ? { ...options.database, close: async () => {} } : await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    log: (event, fields) => log.warn(event, fields),
    pgliteSnapshot: options.pgliteSnapshot,
  });
  const db = database.db;
  await migrateToLatest(db);
  const catalogSource = loadCatalogSource(config.catalogFile);
  if (!options.asAdminTool) {
    await applyCatalog(db, catalogSource);
    // Instances already running serve what the database holds: this start's file, like a reload's.
    await notify(db, CATALOG_CHANNEL, 'start');
  }
  const catalog = new Catalog(options.env ?? process.env);
  await catalog.load(db);
  // Provider secrets are masked in every log line, wherever a provider echoes them.
  log.addSecrets(catalog.list().flatMap((model) => model.secrets));
  if (!options.asAdminTool) await warnOfStartProblems(db, config, catalogSource, options.env ?? process.env, log);
  const authCache = new AuthCache(db);
  await database.listen(
    CACHE_CHANNEL,
    (payload) => {
      try {
        authCache.invalidate(JSON.parse(payload) as CacheInvalidation);
      } catch {
        authCache.invalidate({ type: 'all' });
      }
    },
    () => authCache.invalidate({ type: 'all' }),
  );
  const discounts = new DiscountSettings(db);
  await discounts.load();
  await database.listen(SETTINGS_CHANNEL, () => {
    discounts.load().catch((error: Error) => log.warn('settings.reload_failed', { message: error.message }));
  });
  const rateLimiter = createRateLimiter({
    redisUrl: config.redisUrl,
    db,
    log: (event, fields) => log.warn(event, fields),
    failMode: config.rateLimitFailMode,
    breakerOpenMs: config.rateLimitBreakerOpenMs,
  });
  const adminTokenHash = options.asAdminTool ? '' : await ensureAdminToken(db, config, log);
  await ensureBootstrapKey(db, config, log);
  const instanceId = `gw_${randomUUID()}`;
  const billing = new Billing(db, { instanceId, flushIntervalMs: config.usageFlushMs, log });
  await billing.start();
  await database.listen(BILLING_CHANNEL, (accountId) => {
    billing.onPressure(accountId).catch((error: Error) => log.warn('billing.pressure_failed', { message: error.message }));
  });
  const keyUsage = new KeyUsageTracker(db);
  keyUsage.start();
  if (config.videos.s3.secretAccessKey) log.addSecrets([config.videos.s3.secretAccessKey]);
  const videoStorage = await openVideoStorage(config.videos, config.dataDir);
  const generatedImages = new GeneratedImageStore(db, { ttlSeconds: config.imageUrlTtlSeconds, origin: config.publicBaseUrl ?? listenOrigin(config.host, config.port), log });
  if (!config.publicBaseUrl && config.trustedProxies.length > 0) {
    // Behind a proxy the listen address is not where clients are: image links would point at it.
    log.warn('images.public_base_url_missing', { message: 'TRUSTED_PROXIES is set but PUBLIC_BASE_URL is not: image links use the listen address; set PUBLIC_BASE_URL to the address clients use.' });
  }
  await generatedImages.start();
  const providerHealth = new ProviderHealth(config.providerHealth);
  // Scratch folders of processes of this machine that are gone (a crash, a kill): never a live one's.
  const stale = await removeStaleScratchFolders([os.tmpdir(), config.uploadDir]);
  if (stale.length > 0) log.info('scratch.stale_removed', { folders: stale.length });
  const upstream = new UpstreamClient(log);
  const observability = new Observability({
    config: config.observability,
    log,
    instanceId,
    sources: { providerHealth, pendingUsageRows: () => billing.pending, poolStats: database.poolStats },
  });
  const videos = new VideoWorker({ db, instanceId, config, catalog, log, upstream, providerHealth, observability, billing, discounts }, videoStorage);
  const services: Services = {
    config,
    database,
    db,
    catalog,
    authCache,
    authFailures: new AuthFailureLimiter(config.limits.authFailuresPerMinute),
    keyUsage,
    billing,
    upstream,
    discounts,
    rateLimiter,
    uploads: UploadStore.open(config.uploadDir, config.uploadBudgetBytes),
    generatedImages,
    log,
    adminTokenHash,
    instanceId,
    videos,
    videoStorage,
    // The admin tool leaves the database's catalog alone and takes the families from its own file.
    restricted: options.asAdminTool ? new RestrictedFamilies(catalogSource) : catalog.snapshot.restricted,
    providerHealth,
    observability,
  };
  // Vertex AI access tokens are secrets too; each new one is masked in the logs from when it is issued.
  stopTokenMasking.set(services, onVertexAccessToken((token) => log.addSecrets([token])));
  // Every instance checks the database's admin token, and follows it when another one rotates it.
  if (!options.asAdminTool) await followAdminToken(database, services, log);
  if (!options.asAdminTool) {
    // A reload on any instance (SIGHUP, admin.catalog.reload) reaches this one through the database.
    catalog.onSwap((previous, next) => followSwap(services, catalog, previous, next));
    await followCatalog(database, catalog, log);
  }
  videos.start();
  return services;
}

/** What would otherwise fail silently later: a provider without its secret, accounts on a plan RATE_LIMITS no longer has. */
async function warnOfStartProblems(db: Services['db'], config: GatewayConfig, catalog: CatalogFile, env: NodeJS.ProcessEnv, log: Logger): Promise<void> {
  for (const { provider, variable } of findUnsetSecrets(catalog, env)) {
    log.warn('catalog.secret_unset', { provider, variable, message: `Provider "${provider}" references env:${variable}, which is not set: its calls will fail.` });
  }
  for (const { plan, accounts } of await findAccountsOnUnknownPlans(db, config.rateLimits)) {
    log.warn('accounts.unknown_plan', { plan, accounts, message: `Plan "${plan}" is not in RATE_LIMITS: these accounts get the pro limit.` });
  }
}

/** Each instance's subscription to new Vertex access tokens, ended when it closes. */
const stopTokenMasking = new WeakMap<Services, () => void>();

export async function closeServices(services: Services): Promise<void> {
  stopTokenMasking.get(services)?.();
  // Video jobs first: they hand their leases back and settle through billing and the database.
  await services.videos.stop().catch((error: Error) => services.log.error('videos.stop_failed', { message: error.message }));
  await services.billing.stop().catch((error: Error) => services.log.error('billing.stop_failed', { message: error.message }));
  await services.keyUsage.stop().catch(() => undefined);
  await services.generatedImages.stop().catch(() => undefined);
  await services.uploads.close().catch((error: Error) => services.log.error('uploads.close_failed', { message: error.message }));
  await services.upstream.close();
  await services.rateLimiter.close().catch(() => undefined);
  await services.observability.close();
  await services.database.close();
}

/**
 * Caps the open connections of one client address (idle keep-alive sockets
 * included), so one client cannot take every descriptor. Trusted proxies
 * carry many clients and are exempt.
 */
function limitConnectionsPerAddress(server: Server, perAddress: number, trusted: IpAllowlist | null): void {
  if (perAddress <= 0) return;
  const open = new Map<string, number>();
  server.on('connection', (socket) => {
    const address = socket.remoteAddress ?? '';
    if (trusted?.allows(address)) return;
    const count = (open.get(address) ?? 0) + 1;
    if (count > perAddress) {
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

export async function startGateway(config: GatewayConfig, options: StartOptions = {}): Promise<RunningGateway> {
  const services = await buildServices(config, options);
  const demo = await ensureDemoAccountWithSignIn(services.db, config);
  const demoKey = demo?.key;
  const state: AppState = { inFlight: 0, draining: false, bodyBudget: new BodyBudget(config.limits.bodyBudgetBytes) };
  const app = createApp(services, state);
  const { limits } = config;
  const server = createServer({ headersTimeout: limits.headersTimeoutMs, requestTimeout: limits.requestTimeoutMs, keepAliveTimeout: limits.keepAliveTimeoutMs }, app.callback());
  server.maxConnections = limits.maxConnections;
  limitConnectionsPerAddress(server, limits.maxConnectionsPerAddress, config.trustedProxies.length ? new IpAllowlist(config.trustedProxies) : null);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const address = server.address();
  const url = listenOrigin(config.host, typeof address === 'object' && address ? address.port : config.port);
  if (!config.publicBaseUrl) services.generatedImages.useListenOrigin(url);
  const metricsUrl = await services.observability.listen(config.host);
  if (metricsUrl) services.log.info('metrics.listening', { url: metricsUrl });
  services.log.info('gateway.started', { url, database: services.database.kind, models: services.catalog.list().length, instance: services.instanceId });

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      state.draining = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const deadline = Date.now() + config.shutdownGraceMs;
      while (state.inFlight > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
      server.closeAllConnections();
      await closed;
      await closeServices(services);
      services.log.info('gateway.stopped', { instance: services.instanceId });
    })());
  return { services, server, url, demoKey, demoSignIn: demo?.signIn, requestsInFlight: () => state.inFlight, bodyBytesHeld: () => state.bodyBudget.usedBytes, stop };
}
