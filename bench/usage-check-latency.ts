/**
 * What the restricted family's usage check adds to a request: the same chat completion,
 * sequentially, on `mock-restricted` (access grant checked, usage check run) and on the
 * unrestricted `mock-chat`, interleaved so both see the same machine noise, through one
 * running gateway (in-process, PGlite in memory, demo catalog, loopback HTTP). Prints p50/p90
 * per prompt size, and the usage check alone (`checkUsage`, no HTTP) for the same prompts.
 *
 *   npx tsx bench/usage-check-latency.ts [--requests 300] [--warmup 30]
 */
import { parseArgs } from 'node:util';
import { createAccount, createKey } from '../server/accounts/accounts.service.js';
import { readConfig } from '../server/config.js';
import { startGateway } from '../server/gateway.js';
import { createLogger } from '../server/logger.js';
import { DEFAULT_USAGE_RULES } from '../server/restricted/default-usage-rules.js';
import { compileUsageRules } from '../server/restricted/usage-rules.js';
import { checkUsage } from '../server/restricted/usage-run.js';
import { readUsageTexts } from '../server/restricted/usage-texts.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '300' }, warmup: { type: 'string', default: '30' } } });
const REQUESTS = Number(values.requests);
const WARMUP = Number(values.warmup);

const PARAGRAPH =
  'Please refactor the following TypeScript function so that it handles errors properly. It reads a configuration ' +
  'file, parses it as JSON and validates it against a schema, then starts the worker pool. ';

function promptOf(length: number): string {
  return PARAGRAPH.repeat(Math.ceil(length / PARAGRAPH.length)).slice(0, length);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function summary(samples: number[]): { p50: number; p90: number } {
  const sorted = [...samples].sort((left, right) => left - right);
  return { p50: percentile(sorted, 50), p90: percentile(sorted, 90) };
}

const ms = (value: number): string => value.toFixed(3);

async function main(): Promise<void> {
  // No per-key rate limit: the bench sends thousands of requests a minute on one key.
  const config = { ...readConfig({ ...process.env, DATABASE_URL: '' }), port: 0, host: '127.0.0.1', dataDir: 'memory://', catalogFile: undefined, createDemoAccount: false, bootstrapKey: undefined, logLevel: 'silent' as const, adminToken: 'bench-admin-token', rateLimits: { pro: 0 } };
  const gateway = await startGateway(config, { logger: createLogger('silent') });
  try {
    const { db } = gateway.services;
    const account = await createAccount(db, { name: 'bench', plan: 'pro', credits: 1_000_000, restrictedAccess: true });
    const { key } = await createKey(db, account.id, 'bench');
    const rules = compileUsageRules(DEFAULT_USAGE_RULES);
    console.log(`usage check latency: ${REQUESTS} requests per model and size (after ${WARMUP} warm-up), sequential, interleaved`);
    console.log('prompt chars | mock-chat p50 / p90 ms | mock-restricted p50 / p90 ms | added p50 ms | checkUsage alone p50 ms');
    for (const size of [100, 2_048, 32_768]) {
      const body = (model: string) => JSON.stringify({ model, max_tokens: 16, messages: [{ role: 'system', content: 'You are a senior engineer.' }, { role: 'user', content: promptOf(size) }] });
      const timings: Record<string, number[]> = { 'mock-chat': [], 'mock-restricted': [] };
      for (let index = 0; index < WARMUP + REQUESTS; index++) {
        for (const model of ['mock-chat', 'mock-restricted']) {
          const started = performance.now();
          const response = await fetch(`${gateway.url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: body(model) });
          await response.arrayBuffer();
          if (response.status !== 200) throw new Error(`${model}: HTTP ${response.status}`);
          if (index >= WARMUP) timings[model]!.push(performance.now() - started);
        }
      }
      const parsed = JSON.parse(body('mock-restricted')) as Record<string, unknown>;
      const alone: number[] = [];
      for (let index = 0; index < WARMUP + REQUESTS; index++) {
        const started = performance.now();
        checkUsage(readUsageTexts('chat', parsed), rules);
        if (index >= WARMUP) alone.push(performance.now() - started);
      }
      const plain = summary(timings['mock-chat']!);
      const restricted = summary(timings['mock-restricted']!);
      console.log(`${String(size).padStart(12)} | ${ms(plain.p50)} / ${ms(plain.p90)} | ${ms(restricted.p50)} / ${ms(restricted.p90)} | ${ms(restricted.p50 - plain.p50)} | ${ms(summary(alone).p50)}`);
    }
  } finally {
    await gateway.stop();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
