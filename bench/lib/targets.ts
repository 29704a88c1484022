/**
 * The processes the bench measures, each started in its own process on the target core:
 * the gateway (on PostgreSQL and on PGlite), the bare proxy (baseline) and the peer gateway.
 */
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { timedRequest } from './http.js';
import { ensurePeer } from './peer.js';
import { createBenchDatabase } from './postgres.js';
import type { Child, Resources } from './processes.js';
import { freePort, sleep } from './system.js';

export const TARGET_NAMES = ['gateway-pg', 'gateway-pglite', 'bare', 'portkey'] as const;
export type TargetName = (typeof TARGET_NAMES)[number];

export const TARGET_LABELS: Record<TargetName, string> = {
  'gateway-pg': 'gateway (PostgreSQL)',
  'gateway-pglite': 'gateway (PGlite)',
  bare: 'bare proxy',
  portkey: 'Portkey gateway',
};

export const GATEWAY_MODEL = 'bench-model';
export const UPSTREAM_MODEL = 'bench-upstream';
const UPSTREAM_KEY = 'sk-bench-upstream';

export interface Target {
  name: TargetName;
  child: Child;
  /** Full URL of its chat completions endpoint. */
  url: string;
  headers: Record<string, string>;
  model: string;
  /** Facts worth keeping with the results (versions, database). */
  info: Record<string, string>;
  /** Other processes doing this target's work (PostgreSQL backends), looked up before each run. */
  helperPids?: () => Promise<number[]>;
}

export interface TargetContext {
  resources: Resources;
  repoDir: string;
  benchDir: string;
  tmpDir: string;
  /** http://127.0.0.1:PORT of the upstream test server. */
  upstreamOrigin: string;
  targetCore: number;
  pgServerUrl: string;
  say: (line: string) => void;
  /** Extra Node options for a target's process (the profile mode's --inspect). */
  nodeArgs?: (name: TargetName) => string[];
}

/** A target that could not be started or answered wrongly: `skipped` for a missing prerequisite. */
export class TargetError extends Error {
  constructor(
    message: string,
    readonly skipped = false,
  ) {
    super(message);
  }
}

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function bootstrapKey(): string {
  let key = 'sk-umg-';
  for (let i = 0; i < 48; i++) key += BASE62[randomInt(BASE62.length)];
  return key;
}

/** GET that resolves to the status code, or 0 when nothing answered within a second. */
function getStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = get(url, { timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

async function waitHealthy(child: Child, url: string, accept: (status: number) => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!child.alive) throw new TargetError(`${child.name} exited (${describeExit(child)}) before it was ready:\n${indent(child.tail())}`);
    if (accept(await getStatus(url))) return;
    await sleep(200);
  }
  throw new TargetError(`${child.name} was not ready at ${url} within ${timeoutMs / 1000} s:\n${indent(child.tail())}`);
}

/** Starts one of the bench's own scripts and waits for its `READY <port>` line. */
export async function startScript(
  resources: Resources,
  options: { name: string; repoDir: string; script: string; args: string[]; nodeArgs?: string[]; core?: number; timeoutMs?: number },
): Promise<{ child: Child; port: number }> {
  let ready: (port: number) => void = () => undefined;
  const port = new Promise<number>((resolve) => (ready = resolve));
  const child = resources.start({
    name: options.name,
    command: process.execPath,
    args: [...(options.nodeArgs ?? []), '--import', 'tsx', options.script, ...options.args],
    cwd: options.repoDir,
    env: { ...process.env, NODE_ENV: 'production' },
    core: options.core,
    onLine: (line) => {
      const match = /^READY (\d+)$/.exec(line.trim());
      if (match) ready(Number(match[1]));
    },
  });
  const timeoutMs = options.timeoutMs ?? 30_000;
  const failed = child.exited.then(() => {
    throw new TargetError(`${options.name} exited (${describeExit(child)}) before it was ready:\n${indent(child.tail())}`);
  });
  const late = sleep(timeoutMs).then(() => {
    throw new TargetError(`${options.name} was not ready within ${timeoutMs / 1000} s:\n${indent(child.tail())}`);
  });
  return { child, port: await Promise.race([port, failed, late]) };
}

export function describeExit(child: Child): string {
  const status = child.exitStatus;
  if (!status) return 'running';
  return status.signal ? `signal ${status.signal}` : `code ${status.code}`;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}

async function startBare(context: TargetContext): Promise<Target> {
  const { child, port } = await startScript(context.resources, {
    name: 'bare',
    repoDir: context.repoDir,
    script: path.join(context.benchDir, 'bare-proxy.ts'),
    args: ['--port', '0', '--upstream', context.upstreamOrigin],
    nodeArgs: context.nodeArgs?.('bare'),
    core: context.targetCore,
  });
  return {
    name: 'bare',
    child,
    url: `http://127.0.0.1:${port}/v1/chat/completions`,
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
    model: UPSTREAM_MODEL,
    info: { upstreamClient: 'undici Pool (keep-alive)' },
  };
}

async function startPortkey(context: TargetContext): Promise<Target> {
  const entry = await ensurePeer(context.resources, context.benchDir, context.say);
  const port = await freePort();
  const child = context.resources.start({
    name: 'portkey',
    command: process.execPath,
    // It listens on every interface unless told otherwise, and has no option for that: the preload keeps it on 127.0.0.1.
    args: ['--import', pathToFileURL(path.join(context.benchDir, 'peer', 'loopback.mjs')).href, entry, `--port=${port}`, '--headless'],
    cwd: path.dirname(entry),
    env: { ...process.env, NODE_ENV: 'production' },
    core: context.targetCore,
  });
  await waitHealthy(child, `http://127.0.0.1:${port}/`, (status) => status > 0, 60_000);
  const version = (JSON.parse(readFileSync(path.join(path.dirname(entry), '..', 'package.json'), 'utf8')) as { version: string }).version;
  return {
    name: 'portkey',
    child,
    url: `http://127.0.0.1:${port}/v1/chat/completions`,
    headers: {
      'content-type': 'application/json',
      authorization: 'Bearer sk-bench',
      'x-portkey-provider': 'openai',
      'x-portkey-custom-host': `${context.upstreamOrigin}/v1`,
    },
    model: UPSTREAM_MODEL,
    info: { version: `@portkey-ai/gateway ${version}` },
  };
}

/** Variables the gateway reads; the bench sets its own and drops any inherited ones. */
const GATEWAY_VARIABLES = /^(PORT|HOST|DATABASE_URL|DATA_DIR|GATEWAY_.*|LOG_LEVEL|REDIS_URL|RATE_LIMITS|TRUSTED_PROXIES|USAGE_FLUSH_MS|SHUTDOWN_GRACE_MS|UPSTREAM_.*|BODY_LIMIT_BYTES)$/;

async function startGateway(context: TargetContext, database: 'pg' | 'pglite'): Promise<Target> {
  const name: TargetName = database === 'pg' ? 'gateway-pg' : 'gateway-pglite';
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!GATEWAY_VARIABLES.test(key)) env[key] = value;
  const info: Record<string, string> = {};
  let helperPids: Target['helperPids'];
  const dataDir = path.join(context.tmpDir, `${name}-data`);
  if (database === 'pg') {
    let created;
    try {
      created = await createBenchDatabase(context.pgServerUrl);
    } catch (error) {
      throw new TargetError(`PostgreSQL at ${redact(context.pgServerUrl)} is unreachable or refused (${(error as Error).message}); skipping ${name}`, true);
    }
    context.resources.addFinalizer(`drop database ${created.name}`, () => created.drop());
    env.DATABASE_URL = created.url;
    info.database = `PostgreSQL, database ${created.name} (dropped at the end)`;
    helperPids = () => created.backendPids();
  } else {
    info.database = 'PGlite in a temporary DATA_DIR';
  }
  const catalogFile = path.join(context.tmpDir, 'catalog.json');
  if (!existsSync(catalogFile)) {
    const catalog = {
      providers: [{ id: 'up', kind: 'openai', baseUrl: `${context.upstreamOrigin}/v1`, apiKey: 'env:BENCH_UPSTREAM_KEY' }],
      models: [
        {
          id: GATEWAY_MODEL,
          ownedBy: 'bench',
          provider: 'up',
          upstreamModel: UPSTREAM_MODEL,
          endpoints: ['/v1/chat/completions'],
          pricing: { input: 0.1, output: 0.2 },
        },
      ],
    };
    writeFileSync(catalogFile, JSON.stringify(catalog, null, 2));
  }
  const key = bootstrapKey();
  const port = await freePort();
  Object.assign(env, {
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    GATEWAY_CONFIG: catalogFile,
    GATEWAY_BOOTSTRAP_KEY: key,
    GATEWAY_BOOTSTRAP_PLAN: 'pro',
    GATEWAY_BOOTSTRAP_CREDITS: '1000000',
    GATEWAY_DEMO: '0',
    LOG_LEVEL: 'warn',
    BENCH_UPSTREAM_KEY: UPSTREAM_KEY,
    // The bench key must not be throttled: a rate limit would measure the limiter, not the path.
    RATE_LIMITS: 'pro=1000000000',
    SHUTDOWN_GRACE_MS: '2000',
  });
  // What `npm start` runs: the compiled build (compiled first when the sources are newer).
  const build = spawnSync(process.execPath, ['scripts/build.mjs', '--quiet'], { cwd: context.repoDir, encoding: 'utf8' });
  if (build.status !== 0) throw new TargetError(`scripts/build.mjs failed: ${build.stderr}`, false);
  const child = context.resources.start({
    name,
    command: process.execPath,
    args: [...(context.nodeArgs?.(name) ?? []), '--enable-source-maps', 'dist/server/main.js'],
    cwd: context.repoDir,
    env,
    core: context.targetCore,
  });
  await waitHealthy(child, `http://127.0.0.1:${port}/healthz`, (status) => status === 200, 120_000);
  return {
    name,
    child,
    url: `http://127.0.0.1:${port}/v1/chat/completions`,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    model: GATEWAY_MODEL,
    info,
    helperPids,
  };
}

function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

export function startTarget(name: TargetName, context: TargetContext): Promise<Target> {
  switch (name) {
    case 'gateway-pg':
      return startGateway(context, 'pg');
    case 'gateway-pglite':
      return startGateway(context, 'pglite');
    case 'bare':
      return startBare(context);
    case 'portkey':
      return startPortkey(context);
  }
}

export function chatBody(model: string, stream: boolean, promptChars: number, maxTokens = 256): string {
  const sentence = 'The quick brown fox jumps over the lazy dog. ';
  const prompt = promptChars === 0 ? 'Say hello' : sentence.repeat(Math.ceil(promptChars / sentence.length)).slice(0, promptChars);
  return JSON.stringify({
    model,
    messages: [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: prompt },
    ],
    max_tokens: maxTokens,
    temperature: 0,
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
}

/**
 * One plain and one streamed request, checked, before anything is measured: a target that answers
 * errors would otherwise show a fine throughput of error pages. They ask for 2 tokens, so that the
 * upstream sends 2 chunks only (quick even when it waits between chunks).
 */
export async function probe(target: Target, repoDir: string, timeoutMs: number): Promise<void> {
  const routeHint = () => {
    if (!target.name.startsWith('gateway')) return '';
    try {
      const routes = readFileSync(path.join(repoDir, 'compat', 'routes.ts'), 'utf8');
      if (!routes.includes('/v1/chat/completions')) return '\n    (compat/routes.ts has no /v1/chat/completions route yet)';
    } catch {
      // no hint
    }
    return '';
  };
  for (const stream of [false, true]) {
    const what = stream ? 'streamed' : 'plain';
    let response;
    try {
      response = await timedRequest({ url: target.url, headers: target.headers, body: chatBody(target.model, stream, 200, 2), timeoutMs, keepBytes: 65_536 });
    } catch (error) {
      throw new TargetError(`${target.name}: the ${what} probe request failed: ${(error as Error).message}${routeHint()}`);
    }
    const excerpt = response.head.slice(0, 400).replace(/\s+/g, ' ');
    if (response.status !== 200) {
      throw new TargetError(`${target.name}: the ${what} probe POST ${new URL(target.url).pathname} answered ${response.status}: ${excerpt}${routeHint()}`);
    }
    if (stream) {
      if (!response.contentType.includes('text/event-stream') || !response.end.includes('[DONE]')) {
        throw new TargetError(`${target.name}: the streamed probe did not answer an event stream ending with [DONE] (content-type ${response.contentType}): ${excerpt}`);
      }
    } else {
      let content: unknown;
      try {
        const parsed = JSON.parse(response.head) as { choices?: { message?: { content?: unknown } }[] };
        content = parsed.choices?.[0]?.message?.content;
      } catch {
        content = undefined;
      }
      if (typeof content !== 'string' || content.length === 0) {
        throw new TargetError(`${target.name}: the plain probe answer has no choices[0].message.content: ${excerpt}`);
      }
    }
  }
}
