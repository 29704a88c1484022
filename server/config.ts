import os from 'node:os';
import path from 'node:path';

/** Process configuration, read once from the environment at start. */
export interface GatewayConfig {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  catalogFile: string | undefined;
  adminToken: string | undefined;
  bootstrapKey: string | undefined;
  bootstrapPlan: string;
  bootstrapCredits: number;
  /** CIDR ranges or addresses of proxies whose X-Forwarded-For is believed. */
  trustedProxies: string[];
  redisUrl: string | undefined;
  /** While the rate limit store fails: let requests through unlimited (`open`) or answer 503 (`closed`). */
  rateLimitFailMode: 'open' | 'closed';
  /** How long rate limit checks skip a failing store before trying it again, ms. */
  rateLimitBreakerOpenMs: number;
  /** PostgreSQL: longest wait for a pool connection before a request answers 503, ms. */
  databaseConnectTimeoutMs: number;
  bodyLimitBytes: number;
  /** Largest multipart body (uploads go to disk, not memory). */
  uploadLimitBytes: number;
  /** Where uploads are kept while their request runs: each instance in a scratch folder of its own in it (see scratch-folders.ts). */
  uploadDir: string;
  /** Most upload bytes held on disk at once across requests (503 past it). */
  uploadBudgetBytes: number;
  shutdownGraceMs: number;
  /** Limits on what one client can hold (see README "Running it in production"). */
  limits: ConnectionLimits;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Requests per minute per key, by plan. */
  rateLimits: Record<string, number>;
  upstream: UpstreamTimeouts;
  /** Flush interval of usage rows and charges, ms. */
  usageFlushMs: number;
  /** Print the demo account's key on first start (npm start); off under tests. */
  createDemoAccount: boolean;
  videos: VideoConfig;
  /** Lifetime of a generated image and of its signed `url`, seconds. */
  imageUrlTtlSeconds: number;
  /** The gateway's public origin for the links it hands out (`https://gw.example.com`); unset: from the request's Host header. */
  publicBaseUrl: string | undefined;
  /** The dashboard's sign-in (server/dashboard). */
  dashboard: DashboardConfig;
  /** When a failing deployment is cooled down (server/providers/provider-health.ts). */
  providerHealth: { failures: number; windowMs: number; cooldownMs: number };
  /** Metrics, traces and the access log (server/observability/). */
  observability: ObservabilityConfig;
}

export interface DashboardConfig {
  /** How long a session lasts after sign-in, hours. */
  sessionTtlHours: number;
  /** Sign-in attempts per minute for one email (every instance together). */
  loginAttemptsPerUser: number;
  /** Sign-in attempts per minute from one client address. */
  loginAttemptsPerAddress: number;
}

export interface ObservabilityConfig {
  /** Bearer token `/metrics` asks for; unset: open (bind it to a private network, or use `metricsPort`). */
  metricsToken: string | undefined;
  /** Serve `/metrics` on this port only (not on the main one); unset: on the main port. */
  metricsPort: number | undefined;
  /** Level of the `http.access` line per request; `off` writes none. */
  accessLog: 'info' | 'debug' | 'off';
  /** Where spans go over OTLP/HTTP (`OTEL_EXPORTER_OTLP_ENDPOINT` + `/v1/traces`); unset: tracing off. */
  otlpTracesUrl: string | undefined;
  /** `service.name` of the spans. */
  serviceName: string;
  /** Longest wait before a batch of spans is sent, ms (`OTEL_BSP_SCHEDULE_DELAY`). */
  traceBatchDelayMs: number;
}

/** Video generation: where finished videos are kept, and how the background jobs run. */
export interface VideoConfig {
  /** `local`: a directory (one instance, or a shared volume); `s3`: an S3-compatible bucket (several instances). */
  storage: 'local' | 's3';
  /** The local storage's directory; unset: `DATA_DIR/videos` (a temporary directory for an in-memory database). */
  storageDir: string | undefined;
  s3: {
    endpoint: string | undefined;
    bucket: string | undefined;
    region: string;
    accessKeyId: string | undefined;
    secretAccessKey: string | undefined;
    /** Path-style URLs (`endpoint/bucket/key`), which most self-hosted S3-compatible servers need. */
    forcePathStyle: boolean;
  };
  /** How long the mock provider takes to "generate" a video, ms. */
  mockDelayMs: number;
  /** First and longest wait between two polls of a provider's generation, ms (the wait doubles from the first to the longest). */
  pollMinMs: number;
  pollMaxMs: number;
  /** How often an instance looks for due jobs, ms. */
  workerIntervalMs: number;
  /** How long a job stays with an instance that stopped renewing its lease (crashed), ms. */
  leaseMs: number;
  /** Jobs one instance works on at once. */
  concurrency: number;
  /** Tries of a job whose provider calls fail (network, 5xx) before it is failed. */
  maxAttempts: number;
  /** Largest file downloaded from a provider (video, thumbnail, spritesheet), bytes. */
  maxAssetBytes: number;
  /** Jobs of one account at the provider at once (every instance together); its further jobs wait their turn. */
  maxRunningPerAccount: number;
  /** Unfinished videos (pending or processing) one account may have; a create past it answers 429. */
  maxQueuedPerAccount: number;
  /** How long a finished video's files are kept, ms; 0: for ever. */
  retentionMs: number;
  /** How often an instance looks for videos whose files have expired, ms. */
  retentionSweepMs: number;
}

export interface ConnectionLimits {
  /** Time to receive a request's headers. */
  headersTimeoutMs: number;
  /** Time to receive a whole request, body included. */
  requestTimeoutMs: number;
  /** Longest pause between two pieces of a body (408 past it). */
  bodyIdleTimeoutMs: number;
  /** Keep-alive connections idle longer than this are closed. */
  keepAliveTimeoutMs: number;
  /** Open connections at most (new ones are refused past it). */
  maxConnections: number;
  /** Open connections per client address at most (trusted proxies exempt). */
  maxConnectionsPerAddress: number;
  /** JSON bodies held in memory at once across requests (503 past it). */
  bodyBudgetBytes: number;
  /** Failed authentications per client address and minute before 429 (0: no limit). */
  authFailuresPerMinute: number;
  /** Deepest nesting of a JSON body (400 past it). */
  maxJsonDepth: number;
}

export interface UpstreamTimeouts {
  connectTimeoutMs: number;
  firstByteTimeoutMs: number;
  idleTimeoutMs: number;
  maxRetries: number;
  retryBaseDelayMs: number;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return value;
}

/**
 * The most MAX_JSON_DEPTH may be. Request JSON is walked recursively past the
 * body check (JSON.stringify to a provider, schema walks), and V8 overflows its
 * stack at some 3,000 levels: a third of that keeps every walk a 400, never a 500.
 */
export const MAX_JSON_DEPTH_LIMIT = 1000;

function jsonDepth(env: NodeJS.ProcessEnv): number {
  const value = integer(env, 'MAX_JSON_DEPTH', 100);
  if (!Number.isInteger(value) || value < 1 || value > MAX_JSON_DEPTH_LIMIT) {
    throw new Error(`MAX_JSON_DEPTH must be a whole number from 1 to ${MAX_JSON_DEPTH_LIMIT}, got "${env.MAX_JSON_DEPTH}"`);
  }
  return value;
}

function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

/** Parses `free=20,pro=600` into a record, on top of the defaults. */
function rateLimits(raw: string | undefined): Record<string, number> {
  const limits: Record<string, number> = { free: 20, pro: 600 };
  for (const item of list(raw)) {
    const [plan, value] = item.split('=');
    const perMinute = Number(value);
    if (!plan || !Number.isInteger(perMinute) || perMinute < 0) throw new Error(`RATE_LIMITS entry "${item}" is not plan=number`);
    limits[plan] = perMinute;
  }
  return limits;
}

function videoStorage(raw: string | undefined): VideoConfig['storage'] {
  if (raw === undefined || raw === '' || raw === 'local') return 'local';
  if (raw === 's3') return 's3';
  throw new Error(`VIDEO_STORAGE must be "local" or "s3", got "${raw}"`);
}

function flag(raw: string | undefined, fallback: boolean): boolean {
  if (raw === undefined || raw === '') return fallback;
  return raw === 'true' || raw === '1';
}

function readVideoConfig(env: NodeJS.ProcessEnv): VideoConfig {
  const storage = videoStorage(env.VIDEO_STORAGE);
  if (storage === 's3' && !env.S3_BUCKET) throw new Error('VIDEO_STORAGE=s3 needs S3_BUCKET');
  return {
    storage,
    storageDir: env.VIDEO_STORAGE_DIR ? path.resolve(env.VIDEO_STORAGE_DIR) : undefined,
    s3: {
      endpoint: env.S3_ENDPOINT || undefined,
      bucket: env.S3_BUCKET || undefined,
      region: env.S3_REGION || 'us-east-1',
      accessKeyId: env.S3_ACCESS_KEY_ID || undefined,
      secretAccessKey: env.S3_SECRET_ACCESS_KEY || undefined,
      forcePathStyle: flag(env.S3_FORCE_PATH_STYLE, false),
    },
    mockDelayMs: integer(env, 'MOCK_VIDEO_DELAY_MS', 3_000),
    pollMinMs: Math.max(1, integer(env, 'VIDEO_POLL_MIN_MS', 1_000)),
    pollMaxMs: Math.max(1, integer(env, 'VIDEO_POLL_MAX_MS', 15_000)),
    workerIntervalMs: Math.max(1, integer(env, 'VIDEO_WORKER_INTERVAL_MS', 500)),
    leaseMs: Math.max(1_000, integer(env, 'VIDEO_LEASE_MS', 30_000)),
    concurrency: Math.max(1, integer(env, 'VIDEO_CONCURRENCY', 4)),
    maxAttempts: Math.max(1, integer(env, 'VIDEO_MAX_ATTEMPTS', 5)),
    maxAssetBytes: integer(env, 'VIDEO_MAX_BYTES', 1024 * 1024 * 1024),
    maxRunningPerAccount: Math.max(1, integer(env, 'VIDEO_MAX_RUNNING_PER_ACCOUNT', 4)),
    maxQueuedPerAccount: Math.max(1, integer(env, 'VIDEO_MAX_QUEUED_PER_ACCOUNT', 100)),
    retentionMs: Math.round(integer(env, 'VIDEO_RETENTION_HOURS', 168) * 3_600_000),
    retentionSweepMs: Math.max(100, integer(env, 'VIDEO_RETENTION_SWEEP_MS', 60_000)),
  };
}

function failMode(raw: string | undefined): GatewayConfig['rateLimitFailMode'] {
  if (raw === undefined || raw === '') return 'open';
  if (raw === 'open' || raw === 'closed') return raw;
  throw new Error(`RATE_LIMIT_FAIL_MODE must be "open" or "closed", got "${raw}"`);
}

/** `http://host:port` of a listen address (a wildcard host is reached on the loopback). */
export function listenOrigin(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

function publicBaseUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`PUBLIC_BASE_URL must be an http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`PUBLIC_BASE_URL must be an http(s) URL, got "${raw}"`);
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
}

function accessLogLevel(raw: string | undefined): ObservabilityConfig['accessLog'] {
  if (raw === undefined || raw === '' || raw === 'info') return 'info';
  if (raw === 'debug' || raw === 'off') return raw;
  throw new Error(`ACCESS_LOG must be "info", "debug" or "off", got "${raw}"`);
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const logLevel = (env.LOG_LEVEL ?? 'info') as GatewayConfig['logLevel'];
  return {
    port: integer(env, 'PORT', 8080),
    host: env.HOST || '0.0.0.0',
    databaseUrl: env.DATABASE_URL || undefined,
    dataDir: path.resolve(env.DATA_DIR || './.data'),
    catalogFile: env.GATEWAY_CONFIG || undefined,
    adminToken: env.GATEWAY_ADMIN_TOKEN || undefined,
    bootstrapKey: env.GATEWAY_BOOTSTRAP_KEY || undefined,
    bootstrapPlan: env.GATEWAY_BOOTSTRAP_PLAN || 'pro',
    bootstrapCredits: integer(env, 'GATEWAY_BOOTSTRAP_CREDITS', 100),
    trustedProxies: list(env.TRUSTED_PROXIES),
    redisUrl: env.REDIS_URL || undefined,
    rateLimitFailMode: failMode(env.RATE_LIMIT_FAIL_MODE),
    rateLimitBreakerOpenMs: integer(env, 'RATE_LIMIT_BREAKER_OPEN_MS', 10_000),
    databaseConnectTimeoutMs: integer(env, 'DATABASE_CONNECT_TIMEOUT_MS', 5_000),
    bodyLimitBytes: integer(env, 'BODY_LIMIT_BYTES', 20 * 1024 * 1024),
    uploadLimitBytes: integer(env, 'UPLOAD_LIMIT_BYTES', 256 * 1024 * 1024),
    uploadDir: path.resolve(env.UPLOAD_DIR || os.tmpdir()),
    uploadBudgetBytes: integer(env, 'UPLOAD_BUDGET_BYTES', 2 * 1024 * 1024 * 1024),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 10_000),
    limits: {
      headersTimeoutMs: integer(env, 'HEADERS_TIMEOUT_MS', 20_000),
      requestTimeoutMs: integer(env, 'REQUEST_TIMEOUT_MS', 300_000),
      bodyIdleTimeoutMs: integer(env, 'BODY_IDLE_TIMEOUT_MS', 15_000),
      keepAliveTimeoutMs: integer(env, 'KEEP_ALIVE_TIMEOUT_MS', 65_000),
      maxConnections: integer(env, 'MAX_CONNECTIONS', 8_192),
      maxConnectionsPerAddress: integer(env, 'MAX_CONNECTIONS_PER_ADDRESS', 256),
      bodyBudgetBytes: integer(env, 'BODY_BUDGET_BYTES', 256 * 1024 * 1024),
      authFailuresPerMinute: integer(env, 'AUTH_FAILURES_PER_MINUTE', 60),
      maxJsonDepth: jsonDepth(env),
    },
    logLevel,
    rateLimits: rateLimits(env.RATE_LIMITS),
    upstream: {
      connectTimeoutMs: integer(env, 'UPSTREAM_CONNECT_TIMEOUT_MS', 10_000),
      firstByteTimeoutMs: integer(env, 'UPSTREAM_FIRST_BYTE_TIMEOUT_MS', 120_000),
      idleTimeoutMs: integer(env, 'UPSTREAM_IDLE_TIMEOUT_MS', 60_000),
      maxRetries: integer(env, 'UPSTREAM_MAX_RETRIES', 2),
      retryBaseDelayMs: integer(env, 'UPSTREAM_RETRY_BASE_DELAY_MS', 250),
    },
    usageFlushMs: integer(env, 'USAGE_FLUSH_MS', 50),
    createDemoAccount: env.GATEWAY_DEMO !== '0',
    videos: readVideoConfig(env),
    imageUrlTtlSeconds: Math.max(1, integer(env, 'IMAGE_URL_TTL_SECONDS', 3600)),
    publicBaseUrl: publicBaseUrl(env.PUBLIC_BASE_URL),
    dashboard: {
      sessionTtlHours: Math.max(1, integer(env, 'DASHBOARD_SESSION_TTL_HOURS', 12)),
      loginAttemptsPerUser: integer(env, 'DASHBOARD_LOGIN_ATTEMPTS_PER_USER', 10),
      loginAttemptsPerAddress: integer(env, 'DASHBOARD_LOGIN_ATTEMPTS_PER_ADDRESS', 50),
    },
    providerHealth: {
      failures: Math.max(1, integer(env, 'PROVIDER_COOLDOWN_FAILURES', 5)),
      windowMs: Math.max(1, integer(env, 'PROVIDER_COOLDOWN_WINDOW_MS', 60_000)),
      cooldownMs: Math.max(1, integer(env, 'PROVIDER_COOLDOWN_MS', 30_000)),
    },
    observability: {
      metricsToken: env.METRICS_TOKEN || undefined,
      metricsPort: env.METRICS_PORT ? integer(env, 'METRICS_PORT', 0) : undefined,
      accessLog: accessLogLevel(env.ACCESS_LOG),
      otlpTracesUrl: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || (env.OTEL_EXPORTER_OTLP_ENDPOINT ? `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` : undefined),
      serviceName: env.OTEL_SERVICE_NAME || 'unified-model-gateway',
      traceBatchDelayMs: Math.max(1, integer(env, 'OTEL_BSP_SCHEDULE_DELAY', 5_000)),
    },
  };
}
