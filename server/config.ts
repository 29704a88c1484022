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
  /** Where uploads are kept while their request runs. */
  uploadDir: string;
  /** Most upload bytes held on disk at once across requests (503 past it). */
  uploadBudgetBytes: number;
  shutdownGraceMs: number;
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent';
  /** Requests per minute per key, by plan. */
  rateLimits: Record<string, number>;
  upstream: UpstreamTimeouts;
  /** Flush interval of usage rows and charges, ms. */
  usageFlushMs: number;
  /** Print the demo account's key on first start (npm start); off under tests. */
  createDemoAccount: boolean;
  /** Lifetime of a generated image and of its signed `url`, seconds. */
  imageUrlTtlSeconds: number;
  /** The gateway's public origin for the links it hands out (`https://gw.example.com`); unset: from the request's Host header. */
  publicBaseUrl: string | undefined;
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

function failMode(raw: string | undefined): GatewayConfig['rateLimitFailMode'] {
  if (raw === undefined || raw === '') return 'open';
  if (raw === 'open' || raw === 'closed') return raw;
  throw new Error(`RATE_LIMIT_FAIL_MODE must be "open" or "closed", got "${raw}"`);
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
    uploadDir: path.resolve(env.UPLOAD_DIR || path.join(os.tmpdir(), `umg-uploads-${process.pid}`)),
    uploadBudgetBytes: integer(env, 'UPLOAD_BUDGET_BYTES', 2 * 1024 * 1024 * 1024),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 10_000),
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
    imageUrlTtlSeconds: Math.max(1, integer(env, 'IMAGE_URL_TTL_SECONDS', 3600)),
    publicBaseUrl: publicBaseUrl(env.PUBLIC_BASE_URL),
  };
}
