/**
 * `npx tsx bench/settlement.ts [--requests N] [--concurrency C] [--stream]` —
 * PostgreSQL CPU per request of a gateway on PostgreSQL with the mock
 * provider: the summed utime + stime of the database's backends over N
 * chat requests (after a warm-up), divided by N. The gateway runs in this
 * process on a throw-away database (created and dropped here); the number
 * covers everything the gateway asks of PostgreSQL per request (holds,
 * settlement, key bookkeeping), dominated by settlement.
 * DATABASE_URL (or TEST_POSTGRES_URL) names the server; default 127.0.0.1:5432.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { createBenchDatabase } from './lib/postgres.js';
import { createPgCpuSampler } from './lib/pg-cpu.js';
import { startTestGateway } from '../test/support/gateway.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '4000' },
    concurrency: { type: 'string', default: '16' },
    warmup: { type: 'string', default: '500' },
    stream: { type: 'boolean', default: false },
    'flush-ms': { type: 'string', default: '50' },
  },
});
const requests = Number(values.requests);
const concurrency = Number(values.concurrency);
const warmup = Number(values.warmup);
const serverUrl = process.env.TEST_POSTGRES_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

async function run(url: string, key: string, count: number): Promise<void> {
  const body = JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'Say hello' }], stream: values.stream, max_tokens: 16 });
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next++;
      const response = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body });
      await response.arrayBuffer();
      if (response.status !== 200) throw new Error(`request failed: ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

const database = await createBenchDatabase(serverUrl);
// Rate limits off: the number is about what billing asks of PostgreSQL (without Redis the limiter would count in PostgreSQL too).
const gateway = await startTestGateway({ databaseUrl: database.url, env: { RATE_LIMITS: 'pro=0' }, config: { usageFlushMs: Number(values['flush-ms']) } });
const sampler = createPgCpuSampler({ serverUrl, database: database.name });

/** Transactions and row writes per table of the bench database, from the statistics views (flushed with a delay of up to a second). */
async function tableWrites(): Promise<Map<string, number>> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query('SELECT pg_stat_force_next_flush()').catch(() => undefined);
    const counts = new Map<string, number>();
    const tables = await client.query<{ relname: string; ins: string; upd: string; del: string }>('SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_del AS del FROM pg_stat_user_tables');
    for (const row of tables.rows) {
      counts.set(`${row.relname} inserted`, Number(row.ins));
      counts.set(`${row.relname} updated`, Number(row.upd));
      counts.set(`${row.relname} deleted`, Number(row.del));
    }
    const xact = await client.query<{ commits: string }>('SELECT xact_commit AS commits FROM pg_stat_database WHERE datname = current_database()');
    counts.set('transactions', Number(xact.rows[0]?.commits ?? 0));
    return counts;
  } finally {
    await client.end();
  }
}
try {
  const { key } = await gateway.createAccountWithKey({ credits: 1_000_000 });
  await run(gateway.url, key, warmup);
  await gateway.gateway.services.billing.flush();
  await sleep(1_000);
  const writesBefore = await tableWrites();
  await sampler.start();
  const started = Date.now();
  await run(gateway.url, key, requests);
  await gateway.gateway.services.billing.flush();
  const elapsed = Date.now() - started;
  const sample = await sampler.stop();
  const perRequest = sample.cpuMicros / requests;
  await sleep(1_000);
  const writesAfter = await tableWrites();
  const writes = [...writesAfter]
    .map(([name, count]) => [name, count - (writesBefore.get(name) ?? 0)] as const)
    .filter(([, count]) => count > 0)
    .map(([name, count]) => `${name} ${(count / requests).toFixed(3)}`);
  console.log(`per request: ${writes.join(', ')}`);
  console.log(
    `settlement: ${requests} ${values.stream ? 'streamed ' : ''}requests, ${concurrency} concurrent, ${Math.round((requests * 1000) / elapsed)} req/s; ` +
      `PostgreSQL CPU ${Math.round(sample.cpuMicros / 1000)} ms over ${sample.backends} backends = ${perRequest.toFixed(1)} µs per request (target ≤ 40)`,
  );
} finally {
  await sampler.close();
  await gateway.close();
  await database.drop();
}
