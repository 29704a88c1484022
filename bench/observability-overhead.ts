/**
 * `npx tsx bench/observability-overhead.ts [--requests N] [--concurrency C] [--rounds R]`:
 * what tracing costs. One process runs an OpenAI-format upstream (plain
 * node:http, a fixed JSON answer), an OTLP sink that accepts and drops span
 * batches, and two gateways in-process on PGlite, side by side — one with
 * tracing off, one with OTEL_EXPORTER_OTLP_ENDPOINT set — warms both up, then
 * pushes the same non-streamed chat completions through each (keep-alive, C
 * at a time), alternating the modes over R rounds. Prints requests per second and
 * latency percentiles per mode. Small and rough on purpose (one process,
 * loopback); bench/run.ts is the real bench.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { readConfig } from '../server/config.js';
import { startGateway } from '../server/gateway.js';
import { createLogger } from '../server/logger.js';

const { values } = parseArgs({ options: { requests: { type: 'string', default: '3000' }, concurrency: { type: 'string', default: '16' }, rounds: { type: 'string', default: '3' } } });
const REQUESTS = Number(values.requests);
const CONCURRENCY = Number(values.concurrency);
const ROUNDS = Number(values.rounds);
const KEY = `sk-umg-${'b'.repeat(48)}`;
const ANSWER = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello there.', refusal: null }, logprobs: null, finish_reason: 'stop' }],
  usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

function drain(server: Server, answer: (res: import('node:http').ServerResponse) => void): Server {
  server.on('request', (req, res) => {
    req.resume();
    req.on('end', () => answer(res));
  });
  return server;
}

let spansReceived = 0;
const upstream = drain(createServer(), (res) => res.writeHead(200, { 'content-type': 'application/json' }).end(ANSWER));
const sink = drain(createServer(), (res) => {
  spansReceived++;
  res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
});
const upstreamUrl = await listen(upstream);
const sinkUrl = await listen(sink);

const dir = mkdtempSync(path.join(os.tmpdir(), 'umg-obs-bench-'));
const catalogFile = path.join(dir, 'catalog.json');
writeFileSync(
  catalogFile,
  JSON.stringify({
    providers: [{ id: 'bench', kind: 'openai', baseUrl: `${upstreamUrl}/v1`, apiKey: 'env:UMG_BENCH_UPSTREAM_KEY' }],
    models: [{ id: 'bench-model', ownedBy: 'bench', provider: 'bench', upstreamModel: 'gpt-4o-mini', endpoints: ['/v1/chat/completions'], pricing: { input: 1, output: 2 } }],
  }),
);

async function startMode(tracing: boolean) {
  const env = {
    GATEWAY_CONFIG: catalogFile,
    GATEWAY_BOOTSTRAP_KEY: KEY,
    GATEWAY_BOOTSTRAP_CREDITS: '1000000',
    GATEWAY_DEMO: '0',
    GATEWAY_ADMIN_TOKEN: 'bench-admin-token-0123456789',
    UMG_BENCH_UPSTREAM_KEY: 'sk-bench-upstream-key-000000',
    LOG_LEVEL: 'silent',
    RATE_LIMITS: 'pro=100000000',
    ...(tracing ? { OTEL_EXPORTER_OTLP_ENDPOINT: sinkUrl, OTEL_BSP_SCHEDULE_DELAY: '200' } : {}),
  };
  const config = { ...readConfig(env), port: 0, host: '127.0.0.1', dataDir: 'memory://' };
  return startGateway(config, { logger: createLogger('silent'), env: { ...process.env, ...env } });
}

const body = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'Say hello.' }], max_tokens: 16 });

interface Run {
  rps: number;
  p50: number;
  p99: number;
  /** CPU time of this process (gateway, upstream and client together) per request, µs: steadier than wall time on a shared machine. */
  cpuPerRequest: number;
}

async function load(url: string, total: number): Promise<Run> {
  const agent = new Agent({ connections: CONCURRENCY, pipelining: 1 });
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  const cpuBefore = process.cpuUsage();
  async function worker(): Promise<void> {
    while (next < total) {
      next++;
      const t0 = performance.now();
      const answer = await request(`${url}/v1/chat/completions`, { method: 'POST', dispatcher: agent, headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' }, body });
      await answer.body.text();
      if (answer.statusCode !== 200) throw new Error(`status ${answer.statusCode}`);
      latencies.push(performance.now() - t0);
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const elapsed = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  await agent.close();
  latencies.sort((a, b) => a - b);
  return {
    rps: total / elapsed,
    p50: latencies[Math.floor(latencies.length * 0.5)]!,
    p99: latencies[Math.floor(latencies.length * 0.99)]!,
    cpuPerRequest: (cpu.user + cpu.system) / total,
  };
}

// Both gateways run side by side (same process, same JIT-warmed code), warmed up first, then measured in alternation.
const results: Record<string, Run[]> = { off: [], on: [] };
const gateways = { off: await startMode(false), on: await startMode(true) };
for (const mode of ['off', 'on'] as const) await load(gateways[mode].url, REQUESTS);
for (let round = 0; round < ROUNDS; round++) {
  for (const mode of round % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) results[mode]!.push(await load(gateways[mode].url, REQUESTS));
}
await gateways.off.stop();
await gateways.on.stop();
const median = (numbers: number[]) => [...numbers].sort((a, b) => a - b)[Math.floor(numbers.length / 2)]!;
console.log(`observability overhead: ${REQUESTS} non-streamed chat completions x ${ROUNDS} rounds, ${CONCURRENCY} at a time, node ${process.version}`);
for (const mode of ['off', 'on'] as const) {
  const runs = results[mode]!;
  console.log(
    `tracing ${mode.padEnd(3)}  req/s ${runs.map((run) => run.rps.toFixed(0)).join(' / ')} (median ${median(runs.map((run) => run.rps)).toFixed(0)})  ` +
      `p50 ${median(runs.map((run) => run.p50)).toFixed(2)} ms  p99 ${median(runs.map((run) => run.p99)).toFixed(2)} ms  ` +
      `CPU/request ${runs.map((run) => run.cpuPerRequest.toFixed(0)).join(' / ')} µs (median ${median(runs.map((run) => run.cpuPerRequest)).toFixed(0)})`,
  );
}
const off = median(results.off!.map((run) => run.rps));
const on = median(results.on!.map((run) => run.rps));
const cpuOff = median(results.off!.map((run) => run.cpuPerRequest));
const cpuOn = median(results.on!.map((run) => run.cpuPerRequest));
console.log(`tracing on: throughput ${(((on - off) / off) * 100).toFixed(1)}%, CPU per request +${(((cpuOn - cpuOff) / cpuOff) * 100).toFixed(1)}%; span batches received by the sink: ${spansReceived}`);
upstream.close();
sink.close();
rmSync(dir, { recursive: true, force: true });
