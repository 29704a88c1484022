import { isIP } from 'node:net';
import { z } from 'zod';
import { isWellFormedApiKey } from './key-format.js';

/**
 * Every environment variable the gateway reads, in one zod schema: how each
 * is parsed and checked, its default and its meaning. `loadConfig`
 * (config.ts) parses the environment with it, `npm run config -- --check`
 * checks an environment with it, and the README's tables are generated from
 * it (`npm run config -- --readme`). An unset or empty variable takes its
 * default.
 */

/** Where a variable's row goes in the README. */
export type VariableGroup = 'gateway' | 'videos';

interface VariableDoc {
  /** The default as the README shows it. */
  shown: string;
  meaning: string;
  group: VariableGroup;
  /** Never echoed in an error (tokens, keys, passwords). */
  secret?: boolean;
}

/** An environment value: a string, or nothing (an empty string counts as unset). */
type Raw = string | undefined;

function blank(raw: Raw): raw is undefined | '' {
  return raw === undefined || raw.trim() === '';
}

/** A value that must be `check`ed, else the variable is reported with `expected` (and the value, unless secret). */
function parsed<T>(fallback: T, expected: string, read: (raw: string) => T | undefined, secret = false) {
  return z.string().optional().transform((raw: Raw, context): T => {
    if (blank(raw)) return fallback;
    const value = read(raw.trim());
    if (value === undefined) {
      context.addIssue({ code: 'custom', message: secret ? `must be ${expected}` : `must be ${expected}, got "${raw}"` });
      return z.NEVER;
    }
    return value;
  });
}

function number(fallback: number, minimum = 0) {
  return parsed(fallback, minimum === 0 ? 'a non-negative number' : `a number of at least ${minimum}`, (raw) => {
    const value = Number(raw);
    return Number.isFinite(value) && value >= minimum ? value : undefined;
  });
}

function integer(fallback: number, minimum: number, maximum: number) {
  return parsed(fallback, `a whole number from ${minimum} to ${maximum}`, (raw) => {
    const value = Number(raw);
    return Number.isInteger(value) && value >= minimum && value <= maximum ? value : undefined;
  });
}

function optionalPort() {
  return parsed<number | undefined>(undefined, 'a port number (0 to 65535; 0: any free port)', (raw) => {
    const value = Number(raw);
    return Number.isInteger(value) && value >= 0 && value <= 65_535 ? value : undefined;
  });
}

function oneOf<const Values extends readonly string[]>(values: Values, fallback: Values[number]) {
  return parsed<Values[number]>(fallback, `one of ${values.join(', ')}`, (raw) => (values.includes(raw) ? raw : undefined));
}

function text(fallback?: string, secret = false) {
  return parsed<string | undefined>(fallback, 'text', (raw) => raw, secret);
}

function flag(fallback: boolean) {
  return parsed(fallback, 'true, false, 1 or 0', (raw) => (raw === 'true' || raw === '1' ? true : raw === 'false' || raw === '0' ? false : undefined));
}

function url(protocols: readonly string[], secret = false) {
  return parsed<string | undefined>(undefined, `a URL (${protocols.map((protocol) => `${protocol}//`).join(' or ')})`, (raw) => {
    try {
      return protocols.includes(new URL(raw).protocol) ? raw : undefined;
    } catch {
      return undefined;
    }
  }, secret);
}

function isAddressOrRange(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address!);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  const bits = Number(prefix);
  return /^\d+$/.test(prefix) && bits <= (family === 4 ? 32 : 128);
}

/** `free=20,pro=600`: requests per minute by plan, on top of the two built-in plans. */
function planLimits() {
  return parsed<Record<string, number>>({ free: 20, pro: 600 }, 'plan=number entries separated by commas (e.g. team=100,pro=0)', (raw) => {
    const limits: Record<string, number> = { free: 20, pro: 600 };
    for (const item of raw.split(',').map((entry) => entry.trim()).filter(Boolean)) {
      const [plan, value, ...rest] = item.split('=');
      if (!plan?.trim() || value === undefined || rest.length > 0 || !/^\d+$/.test(value.trim())) return undefined;
      limits[plan.trim()] = Number(value);
    }
    return limits;
  });
}

function list(check: (entry: string) => boolean, expected: string) {
  return parsed<string[]>([], expected, (raw) => {
    const entries = raw.split(',').map((entry) => entry.trim()).filter(Boolean);
    return entries.every(check) ? entries : undefined;
  });
}

const MiB = 1024 * 1024;

/** The variables: the schema of each value and its documentation, in README order. */
export const ENVIRONMENT_VARIABLES = {
  PORT: { schema: integer(8080, 0, 65_535), shown: '`8080`', meaning: 'listening port', group: 'gateway' },
  HOST: { schema: text('0.0.0.0'), shown: '`0.0.0.0`', meaning: 'listening address (`::` for dual-stack)', group: 'gateway' },
  DATABASE_URL: {
    schema: url(['postgres:', 'postgresql:'], true),
    shown: 'unset',
    meaning: '`postgres://…`: PostgreSQL through a `pg` pool. Unset: embedded PGlite in `DATA_DIR`',
    group: 'gateway',
    secret: true,
  },
  DATA_DIR: { schema: text('./.data'), shown: '`./.data`', meaning: 'PGlite files, the generated admin token file (see [The admin token](#the-admin-token))', group: 'gateway' },
  GATEWAY_CONFIG: { schema: text(), shown: 'unset', meaning: 'path of the catalog file (below; JSON or YAML, reloaded on SIGHUP or `npm run admin -- catalog:reload`); unset: the demo catalog. `npm run config -- --check` validates it', group: 'gateway' },
  GATEWAY_ADMIN_TOKEN: {
    schema: text(undefined, true),
    shown: 'generated',
    meaning:
      'admin token for `/trpc` admin procedures and the admin CLI; an instance that starts with it makes it the token of every instance on its database. Unset: see [The admin token](#the-admin-token)',
    group: 'gateway',
    secret: true,
  },
  GATEWAY_BOOTSTRAP_KEY: {
    schema: parsed<string | undefined>(undefined, '"sk-umg-" followed by at least 40 letters and digits', (raw) => (isWellFormedApiKey(raw) ? raw : undefined), true),
    shown: 'unset',
    meaning: '`sk-umg-…`: at start, ensure an account owning this key exists',
    group: 'gateway',
    secret: true,
  },
  GATEWAY_BOOTSTRAP_PLAN: { schema: text('pro'), shown: '`pro`', meaning: "plan of that account (one of `RATE_LIMITS`'s, or the start fails)", group: 'gateway' },
  GATEWAY_BOOTSTRAP_CREDITS: { schema: number(100), shown: '`100`', meaning: 'credits of that account', group: 'gateway' },
  GATEWAY_DEMO: { schema: flag(true), shown: '`1`', meaning: '`0`: never create the demo account', group: 'gateway' },
  GATEWAY_URL: { schema: url(['http:', 'https:']), shown: '`http://127.0.0.1:$PORT`', meaning: 'the admin CLI only: the gateway it talks to', group: 'gateway' },
  TRUSTED_PROXIES: {
    schema: list(isAddressOrRange, 'addresses or CIDR ranges separated by commas'),
    shown: 'empty',
    meaning: "comma-separated addresses/CIDRs whose `X-Forwarded-For` is believed",
    group: 'gateway',
  },
  PUBLIC_BASE_URL: {
    schema: parsed<string | undefined>(undefined, 'an http(s) URL', (raw) => {
      try {
        const parsedUrl = new URL(raw);
        if (parsedUrl.protocol !== 'http:' && parsedUrl.protocol !== 'https:') return undefined;
        return `${parsedUrl.origin}${parsedUrl.pathname.replace(/\/+$/, '')}`;
      } catch {
        return undefined;
      }
    }),
    shown: 'unset',
    meaning:
      'where clients reach the gateway (`https://gw.example.com`); signed image links are built on it. Unset: on the listen address (`http://HOST:PORT`, a wildcard `HOST` as `127.0.0.1`). Required behind a proxy or TLS (a warning is logged at start when `TRUSTED_PROXIES` is set without it)',
    group: 'gateway',
  },
  REDIS_URL: { schema: url(['redis:', 'rediss:'], true), shown: 'unset', meaning: 'rate limits in Redis; unset: in the database', group: 'gateway', secret: true },
  RATE_LIMITS: {
    schema: planLimits(),
    shown: '`free=20,pro=600`',
    meaning:
      "requests per minute per key, by plan (`plan=N,…`; `0`: no limit). It **adds** plans to the two built-in ones and changes the limits it names (`RATE_LIMITS=team=100` gives `free`, `pro` and `team`; `free` and `pro` always exist: the demo account, `accounts:create` and the bootstrap account default to `pro`, and `free` is what image generation refuses). The plans are exactly these: creating an account or setting a plan outside them is `400 INVALID_REQUEST` naming them; accounts already on a plan later removed get the `pro` limit, and a warning (`accounts.unknown_plan`) at each start names the plan",
    group: 'gateway',
  },
  RATE_LIMIT_FAIL_MODE: { schema: oneOf(['open', 'closed'] as const, 'open'), shown: '`open`', meaning: 'when the rate-limit store is unreachable: let requests through (`open`) or answer 503 (`closed`)', group: 'gateway' },
  RATE_LIMIT_BREAKER_OPEN_MS: { schema: number(10_000), shown: '`10000`', meaning: 'how long the rate-limit breaker stays open', group: 'gateway' },
  DATABASE_CONNECT_TIMEOUT_MS: { schema: number(5_000), shown: '`5000`', meaning: 'longest wait for a database connection (503 past it)', group: 'gateway' },
  BODY_LIMIT_BYTES: { schema: number(20 * MiB), shown: '`20971520`', meaning: 'largest JSON request body (413 past it)', group: 'gateway' },
  BODY_BUDGET_BYTES: { schema: number(256 * MiB), shown: '256 MiB', meaning: 'JSON bodies held in memory at once across requests (503 past it); see "Running it in production"', group: 'gateway' },
  BODY_IDLE_TIMEOUT_MS: { schema: number(15_000), shown: '`15000`', meaning: 'longest pause between two pieces of a body (408 past it)', group: 'gateway' },
  MAX_JSON_DEPTH: { schema: number(100), shown: '`100`', meaning: 'deepest nesting of a JSON body (400 past it)', group: 'gateway' },
  HEADERS_TIMEOUT_MS: { schema: number(20_000), shown: '`20000`', meaning: "time to receive a request's headers", group: 'gateway' },
  REQUEST_TIMEOUT_MS: { schema: number(300_000), shown: '`300000`', meaning: 'time to receive a whole request, body included', group: 'gateway' },
  KEEP_ALIVE_TIMEOUT_MS: { schema: number(65_000), shown: '`65000`', meaning: 'keep-alive connections idle longer than this are closed', group: 'gateway' },
  MAX_CONNECTIONS: { schema: number(8_192), shown: '`8192`', meaning: 'open connections at most (new ones are refused past it)', group: 'gateway' },
  MAX_CONNECTIONS_PER_ADDRESS: { schema: number(256), shown: '`256`', meaning: 'open connections per client address at most (trusted proxies exempt)', group: 'gateway' },
  AUTH_FAILURES_PER_MINUTE: { schema: number(60), shown: '`60`', meaning: 'failed authentications per client address and minute before 429 (`0`: no limit)', group: 'gateway' },
  UPLOAD_LIMIT_BYTES: { schema: number(256 * MiB), shown: '256 MiB', meaning: 'largest multipart body', group: 'gateway' },
  UPLOAD_DIR: {
    schema: text(),
    shown: '`$TMPDIR`',
    meaning:
      'where uploaded files wait while their request runs. Each instance keeps its files in a folder of its own in it (`umg-uploads-<pid>-…`; video work files go to `$TMPDIR/umg-video-work-<pid>-…`), removed when it stops; a start removes the folders that processes of the same machine left when they died (never a running process\'s), so several instances may share `UPLOAD_DIR`',
    group: 'gateway',
  },
  UPLOAD_BUDGET_BYTES: { schema: number(2 * 1024 * MiB), shown: '2 GiB', meaning: 'most upload bytes on disk at once (503 past it)', group: 'gateway' },
  UPSTREAM_CONNECT_TIMEOUT_MS: { schema: number(10_000), shown: '`10000`', meaning: 'connect timeout to providers', group: 'gateway' },
  UPSTREAM_FIRST_BYTE_TIMEOUT_MS: { schema: number(120_000), shown: '`120000`', meaning: "time to the provider's response headers", group: 'gateway' },
  UPSTREAM_IDLE_TIMEOUT_MS: { schema: number(60_000), shown: '`60000`', meaning: "longest silence inside a provider's answer", group: 'gateway' },
  UPSTREAM_MAX_RETRIES: { schema: number(2), shown: '`2`', meaning: 'retries per deployment on connection errors, 429 and 5xx before the first byte', group: 'gateway' },
  UPSTREAM_RETRY_BASE_DELAY_MS: {
    schema: number(250),
    shown: '`250`',
    meaning: "first wait before such a retry; it doubles with each retry (at most 8 s, less up to a quarter at random); a provider's `retry-after` of up to 10 s is waited instead",
    group: 'gateway',
  },
  USAGE_FLUSH_MS: { schema: number(50), shown: '`50`', meaning: 'how often usage rows and charges are written (one transaction per batch)', group: 'gateway' },
  SHUTDOWN_GRACE_MS: { schema: number(10_000), shown: '`10000`', meaning: 'on SIGTERM/SIGINT: stop accepting, let in-flight requests finish up to this long, flush, close', group: 'gateway' },
  IMAGE_URL_TTL_SECONDS: { schema: number(3_600), shown: '`3600`', meaning: 'lifetime of a generated image and of its signed `url`', group: 'gateway' },
  DASHBOARD_SESSION_TTL_HOURS: { schema: number(12), shown: '`12`', meaning: 'lifetime of a dashboard session after sign-in', group: 'gateway' },
  DASHBOARD_LOGIN_ATTEMPTS_PER_USER: { schema: number(10), shown: '`10`', meaning: 'dashboard sign-in attempts per minute per email (across instances)', group: 'gateway' },
  DASHBOARD_LOGIN_ATTEMPTS_PER_ADDRESS: { schema: number(50), shown: '`50`', meaning: 'dashboard sign-in attempts per minute per client address', group: 'gateway' },
  METRICS_TOKEN: { schema: text(undefined, true), shown: 'unset', meaning: 'bearer token `GET /metrics` asks for (unset: open — keep it off the public network)', group: 'gateway', secret: true },
  METRICS_PORT: { schema: optionalPort(), shown: 'unset', meaning: 'serve `/metrics` on this port only (not on the main one)', group: 'gateway' },
  ACCESS_LOG: { schema: oneOf(['info', 'debug', 'off'] as const, 'info'), shown: '`info`', meaning: 'level of the `http.access` line per request: `info`, `debug` or `off`', group: 'gateway' },
  OTEL_EXPORTER_OTLP_ENDPOINT: { schema: url(['http:', 'https:']), shown: 'unset', meaning: 'OTLP/HTTP collector (spans to `…/v1/traces`); unset: tracing off', group: 'gateway' },
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: { schema: url(['http:', 'https:']), shown: 'unset', meaning: 'the full traces URL, instead of the above', group: 'gateway' },
  OTEL_SERVICE_NAME: { schema: text('unified-model-gateway'), shown: '`unified-model-gateway`', meaning: '`service.name` of the spans', group: 'gateway' },
  OTEL_BSP_SCHEDULE_DELAY: { schema: number(5_000), shown: '`5000`', meaning: 'longest wait before a batch of spans is sent, ms', group: 'gateway' },
  PROVIDER_COOLDOWN_FAILURES: { schema: number(5), shown: '`5`', meaning: 'failures in a row within the window that cool a deployment down', group: 'gateway' },
  PROVIDER_COOLDOWN_WINDOW_MS: { schema: number(60_000), shown: '`60000`', meaning: 'that window', group: 'gateway' },
  PROVIDER_COOLDOWN_MS: { schema: number(30_000), shown: '`30000`', meaning: 'how long a deployment stays cooled down', group: 'gateway' },
  LOG_LEVEL: {
    schema: oneOf(['debug', 'info', 'warn', 'error', 'silent'] as const, 'info'),
    shown: '`info`',
    meaning: '`debug`, `info`, `warn`, `error`, `silent`; logs are JSON lines without secrets',
    group: 'gateway',
  },
  VIDEO_STORAGE: { schema: oneOf(['local', 's3'] as const, 'local'), shown: '`local`', meaning: '`local` or `s3`', group: 'videos' },
  VIDEO_STORAGE_DIR: { schema: text(), shown: '`DATA_DIR/videos`', meaning: 'the local directory (a temporary one with an in-memory database)', group: 'videos' },
  S3_BUCKET: { schema: text(), shown: '—', meaning: 'the bucket (required with `s3`)', group: 'videos' },
  S3_ENDPOINT: { schema: url(['http:', 'https:']), shown: 'AWS', meaning: 'e.g. `http://minio:9000` for a self-hosted server (checksums then only where required)', group: 'videos' },
  S3_REGION: { schema: text('us-east-1'), shown: '`us-east-1`', meaning: "the bucket's region", group: 'videos' },
  S3_ACCESS_KEY_ID: { schema: text(undefined, true), shown: "the SDK's chain", meaning: 'credentials', group: 'videos', secret: true },
  S3_SECRET_ACCESS_KEY: { schema: text(undefined, true), shown: "the SDK's chain", meaning: 'credentials (masked in logs)', group: 'videos', secret: true },
  S3_FORCE_PATH_STYLE: { schema: flag(false), shown: '`false`', meaning: '`true` for servers that need `endpoint/bucket/key` URLs (MinIO and most self-hosted ones)', group: 'videos' },
  MOCK_VIDEO_DELAY_MS: { schema: number(3_000), shown: '`3000`', meaning: 'how long the mock provider "generates"', group: 'videos' },
  VIDEO_POLL_MIN_MS: { schema: number(1_000, 1), shown: '`1000`', meaning: 'first wait between polls of a provider (also the retry backoff)', group: 'videos' },
  VIDEO_POLL_MAX_MS: { schema: number(15_000, 1), shown: '`15000`', meaning: 'longest wait between polls of a provider', group: 'videos' },
  VIDEO_WORKER_INTERVAL_MS: { schema: number(500, 1), shown: '`500`', meaning: 'how often an instance looks for due jobs', group: 'videos' },
  VIDEO_LEASE_MS: { schema: number(30_000, 1_000), shown: '`30000`', meaning: 'how long a job stays with an instance that stopped renewing (a crash) before another takes it', group: 'videos' },
  VIDEO_CONCURRENCY: { schema: number(4, 1), shown: '`4`', meaning: 'jobs one instance works on at once', group: 'videos' },
  VIDEO_MAX_ATTEMPTS: { schema: number(5, 1), shown: '`5`', meaning: 'tries of a job whose provider calls fail transiently', group: 'videos' },
  VIDEO_MAX_BYTES: { schema: number(1024 * MiB), shown: '1 GiB', meaning: 'largest file downloaded from a provider', group: 'videos' },
  VIDEO_MAX_RUNNING_PER_ACCOUNT: { schema: number(4, 1), shown: '`4`', meaning: 'jobs of one account at the provider at once, all instances together', group: 'videos' },
  VIDEO_MAX_QUEUED_PER_ACCOUNT: { schema: number(100, 1), shown: '`100`', meaning: 'unfinished videos one account may have (429 past it)', group: 'videos' },
  VIDEO_RETENTION_HOURS: { schema: number(168), shown: '`168`', meaning: "how long a finished video's files are kept (`0`: for ever)", group: 'videos' },
  VIDEO_RETENTION_SWEEP_MS: { schema: number(60_000, 100), shown: '`60000`', meaning: 'how often each instance deletes expired files', group: 'videos' },
} satisfies Record<string, VariableDoc & { schema: z.ZodType<unknown, Raw> }>;

export type VariableName = keyof typeof ENVIRONMENT_VARIABLES;

const shape = Object.fromEntries(Object.entries(ENVIRONMENT_VARIABLES).map(([name, variable]) => [name, variable.schema])) as {
  [Name in VariableName]: (typeof ENVIRONMENT_VARIABLES)[Name]['schema'];
};

/** The environment, parsed: unknown variables are ignored; rules that involve two variables at the end. */
export const environmentSchema = z.object(shape).superRefine((environment, context) => {
  if (environment.VIDEO_STORAGE === 's3' && !environment.S3_BUCKET) context.addIssue({ code: 'custom', path: ['S3_BUCKET'], message: 'must be set when VIDEO_STORAGE=s3' });
  if (environment.GATEWAY_BOOTSTRAP_KEY && !Object.hasOwn(environment.RATE_LIMITS, environment.GATEWAY_BOOTSTRAP_PLAN!)) {
    context.addIssue({
      code: 'custom',
      path: ['GATEWAY_BOOTSTRAP_PLAN'],
      message: `"${environment.GATEWAY_BOOTSTRAP_PLAN}" is not a plan: the plans are ${Object.keys(environment.RATE_LIMITS).join(', ')} (RATE_LIMITS adds more)`,
    });
  }
});

export type Environment = z.output<typeof environmentSchema>;

/** One message per bad variable, naming it. */
export class ConfigError extends Error {
  /** sysexits.h EX_CONFIG: what `npm start` exits with on a bad setting. */
  static readonly EXIT_CODE = 78;

  constructor(readonly problems: { variable: string; message: string }[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  ${problem.variable}: ${problem.message}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses an environment; throws a ConfigError naming every bad variable. */
export function parseEnvironment(env: NodeJS.ProcessEnv): Environment {
  const result = environmentSchema.safeParse(env);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.map((issue) => ({ variable: String(issue.path[0] ?? '(environment)'), message: issue.message })));
}

function readmeTable(group: VariableGroup): string {
  const rows = Object.entries(ENVIRONMENT_VARIABLES)
    .filter(([, variable]) => variable.group === group)
    .map(([name, variable]) => `| \`${name}\` | ${variable.shown} | ${variable.meaning} |`);
  return ['| variable | default | meaning |', '| --- | --- | --- |', ...rows].join('\n');
}

/** The README's tables of variables, each between its markers. */
export function readmeTables(): Record<VariableGroup, string> {
  return { gateway: readmeTable('gateway'), videos: readmeTable('videos') };
}

/** The README with its generated tables replaced by the schema's. */
export function withReadmeTables(readme: string): string {
  let updated = readme;
  for (const [group, table] of Object.entries(readmeTables())) {
    const start = `<!-- environment:${group} (generated by npm run config -- --readme --write) -->`;
    const end = `<!-- /environment:${group} -->`;
    const from = updated.indexOf(start);
    const to = updated.indexOf(end);
    if (from < 0 || to < from) throw new Error(`README.md has no ${start} … ${end} block`);
    updated = `${updated.slice(0, from + start.length)}\n${table}\n${updated.slice(to)}`;
  }
  return updated;
}
