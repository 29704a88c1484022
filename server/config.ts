import os from 'node:os';
import path from 'node:path';
import { parseEnvironment } from './config.schema.js';

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

/** `http://host:port` of a listen address (a wildcard host is reached on the loopback). */
export function listenOrigin(host: string, port: number): string {
  const reachable = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/**
 * The gateway's configuration from its environment, checked against the one
 * schema of every variable (config.schema.ts): a ConfigError names each bad
 * variable (main.ts exits 78 with it).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const e = parseEnvironment(env);
  return {
    port: e.PORT,
    host: e.HOST!,
    databaseUrl: e.DATABASE_URL,
    dataDir: path.resolve(e.DATA_DIR!),
    catalogFile: e.GATEWAY_CONFIG,
    adminToken: e.GATEWAY_ADMIN_TOKEN,
    bootstrapKey: e.GATEWAY_BOOTSTRAP_KEY,
    bootstrapPlan: e.GATEWAY_BOOTSTRAP_PLAN!,
    bootstrapCredits: e.GATEWAY_BOOTSTRAP_CREDITS,
    trustedProxies: e.TRUSTED_PROXIES,
    redisUrl: e.REDIS_URL,
    rateLimitFailMode: e.RATE_LIMIT_FAIL_MODE,
    rateLimitBreakerOpenMs: e.RATE_LIMIT_BREAKER_OPEN_MS,
    databaseConnectTimeoutMs: e.DATABASE_CONNECT_TIMEOUT_MS,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    uploadLimitBytes: e.UPLOAD_LIMIT_BYTES,
    uploadDir: path.resolve(e.UPLOAD_DIR ?? os.tmpdir()),
    uploadBudgetBytes: e.UPLOAD_BUDGET_BYTES,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    limits: {
      headersTimeoutMs: e.HEADERS_TIMEOUT_MS,
      requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
      bodyIdleTimeoutMs: e.BODY_IDLE_TIMEOUT_MS,
      keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
      maxConnections: e.MAX_CONNECTIONS,
      maxConnectionsPerAddress: e.MAX_CONNECTIONS_PER_ADDRESS,
      bodyBudgetBytes: e.BODY_BUDGET_BYTES,
      authFailuresPerMinute: e.AUTH_FAILURES_PER_MINUTE,
      maxJsonDepth: e.MAX_JSON_DEPTH,
    },
    logLevel: e.LOG_LEVEL,
    rateLimits: e.RATE_LIMITS,
    upstream: {
      connectTimeoutMs: e.UPSTREAM_CONNECT_TIMEOUT_MS,
      firstByteTimeoutMs: e.UPSTREAM_FIRST_BYTE_TIMEOUT_MS,
      idleTimeoutMs: e.UPSTREAM_IDLE_TIMEOUT_MS,
      maxRetries: e.UPSTREAM_MAX_RETRIES,
      retryBaseDelayMs: e.UPSTREAM_RETRY_BASE_DELAY_MS,
    },
    usageFlushMs: e.USAGE_FLUSH_MS,
    createDemoAccount: e.GATEWAY_DEMO,
    videos: {
      storage: e.VIDEO_STORAGE,
      storageDir: e.VIDEO_STORAGE_DIR ? path.resolve(e.VIDEO_STORAGE_DIR) : undefined,
      s3: {
        endpoint: e.S3_ENDPOINT,
        bucket: e.S3_BUCKET,
        region: e.S3_REGION!,
        accessKeyId: e.S3_ACCESS_KEY_ID,
        secretAccessKey: e.S3_SECRET_ACCESS_KEY,
        forcePathStyle: e.S3_FORCE_PATH_STYLE,
      },
      mockDelayMs: e.MOCK_VIDEO_DELAY_MS,
      pollMinMs: e.VIDEO_POLL_MIN_MS,
      pollMaxMs: e.VIDEO_POLL_MAX_MS,
      workerIntervalMs: e.VIDEO_WORKER_INTERVAL_MS,
      leaseMs: e.VIDEO_LEASE_MS,
      concurrency: e.VIDEO_CONCURRENCY,
      maxAttempts: e.VIDEO_MAX_ATTEMPTS,
      maxAssetBytes: e.VIDEO_MAX_BYTES,
      maxRunningPerAccount: e.VIDEO_MAX_RUNNING_PER_ACCOUNT,
      maxQueuedPerAccount: e.VIDEO_MAX_QUEUED_PER_ACCOUNT,
      retentionMs: Math.round(e.VIDEO_RETENTION_HOURS * 3_600_000),
      retentionSweepMs: e.VIDEO_RETENTION_SWEEP_MS,
    },
    imageUrlTtlSeconds: Math.max(1, e.IMAGE_URL_TTL_SECONDS),
    publicBaseUrl: e.PUBLIC_BASE_URL,
    dashboard: {
      sessionTtlHours: Math.max(1, e.DASHBOARD_SESSION_TTL_HOURS),
      loginAttemptsPerUser: e.DASHBOARD_LOGIN_ATTEMPTS_PER_USER,
      loginAttemptsPerAddress: e.DASHBOARD_LOGIN_ATTEMPTS_PER_ADDRESS,
    },
    providerHealth: {
      failures: Math.max(1, e.PROVIDER_COOLDOWN_FAILURES),
      windowMs: Math.max(1, e.PROVIDER_COOLDOWN_WINDOW_MS),
      cooldownMs: Math.max(1, e.PROVIDER_COOLDOWN_MS),
    },
    observability: {
      metricsToken: e.METRICS_TOKEN,
      metricsPort: e.METRICS_PORT,
      accessLog: e.ACCESS_LOG,
      otlpTracesUrl: e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (e.OTEL_EXPORTER_OTLP_ENDPOINT ? `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces` : undefined),
      serviceName: e.OTEL_SERVICE_NAME!,
      traceBatchDelayMs: Math.max(1, e.OTEL_BSP_SCHEDULE_DELAY),
    },
  };
}

/** The same as loadConfig (its older name, kept for the callers that use it). */
export const readConfig = loadConfig;
