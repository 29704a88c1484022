/**
 * `npm run bench` — loopback performance bench of the gateway against a bare Node proxy (the
 * baseline) and the Portkey gateway (a peer). See bench/README.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Bench, KINDS, LONG_PROMPT_CHARS, type BenchOptions, type Kind } from './lib/context.js';
import { goalsTable } from './lib/goals.js';
import { peerVersions } from './lib/peer.js';
import { Resources, type Pinning } from './lib/processes.js';
import { runProfile } from './lib/profile.js';
import { runSoak } from './lib/soak.js';
import { runStreams } from './lib/streams.js';
import { coreBusyPercent, cpuCount, freePort, readCoreTimes, sleep, which } from './lib/system.js';
import { probe, startScript, startTarget, TARGET_LABELS, TARGET_NAMES, TargetError, type TargetName } from './lib/targets.js';
import { runThroughput } from './lib/throughput.js';

const HELP = `Usage: npm run bench -- [options]

Loopback bench of the gateway against a bare Node proxy (baseline) and the Portkey gateway (peer).
Targets: gateway-pg (PostgreSQL), gateway-pglite (PGlite), bare, portkey.

Modes (one per run):
  (default)              throughput, p50/p99 latency, stream TTFB, peak RSS; plain and streamed requests
  --latency-ms 50        the same with an upstream that waits 50 ms before answering: added latency
  --soak                 steady load on the gateway for --soak-minutes; RSS over time
  --streams N            N concurrent streams held open per target; RSS with them open
  --profile              CPU profile under load (gateway-pg and bare by default; json and stream):
                         µs per request per component and the budget rows, beside the bare proxy

Options:
  --quick                ~1 minute smoke run (1 round, 2 s runs, 1 s warm-up, 30 TTFB requests)
  --duration S           seconds per measured run (default 5)
  --warmup S             warm-up seconds per target and kind (default 10: the gateway's JIT needs it)
  --rounds N             rounds; each drives every target once, order rotating (default 3)
  --connections N        wrk connections (default 50)
  --chunks N             content chunks per streamed answer (default 20)
  --latency-ms MS        upstream delay before answering (default 0)
  --chunk-delay-ms MS    upstream delay between chunks (default 0; 1000 with --streams)
  --prompt-chars N       length of the short user message (default 0 = "Say hello")
  --ttfb-requests N      sequential streamed requests per target and round for TTFB (default 100)
  --kinds LIST           json,stream,json-1k (default all three; json-1k = plain with a ~1k-token prompt)
  --targets LIST         default: all four; with --soak: gateway-pg (gateway-pglite if no PostgreSQL)
  --soak-minutes M       default 10
  --sample-seconds S     RSS sampling period of --soak (default 5)
  --pg-url URL           PostgreSQL server for the throw-away database
                         (default postgres://postgres@127.0.0.1:5432/postgres)
  --no-pin               do not pin processes to cores
  --no-save              do not write bench/results/<timestamp>.json
  -h, --help
`;

const benchDir = path.dirname(fileURLToPath(import.meta.url));
const repoDir = path.resolve(benchDir, '..');

/** Set once the bench is stopping (signal, failure, time limit): the run's own output stops there. */
let stopping = false;

function say(line = ''): void {
  if (!stopping) process.stdout.write(`${line}\n`);
}

function parseOptions(argv: string[]): BenchOptions | undefined {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    allowPositionals: false,
    options: {
      help: { type: 'boolean', short: 'h' },
      quick: { type: 'boolean' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      rounds: { type: 'string' },
      connections: { type: 'string' },
      chunks: { type: 'string' },
      'latency-ms': { type: 'string' },
      'chunk-delay-ms': { type: 'string' },
      'prompt-chars': { type: 'string' },
      'ttfb-requests': { type: 'string' },
      kinds: { type: 'string' },
      targets: { type: 'string' },
      soak: { type: 'boolean' },
      'soak-minutes': { type: 'string' },
      'sample-seconds': { type: 'string' },
      streams: { type: 'string' },
      profile: { type: 'boolean' },
      'pg-url': { type: 'string' },
      'no-pin': { type: 'boolean' },
      'no-save': { type: 'boolean' },
    },
  });
  if (values.help) {
    say(HELP);
    return undefined;
  }
  const number = (name: keyof typeof values, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number => {
    const raw = values[name];
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (typeof raw !== 'string' || !Number.isFinite(value) || value < min || value > max) throw new Error(`--${name} must be a number from ${min} to ${max}, got "${String(raw)}"`);
    return value;
  };
  const quick = values.quick === true;
  const streams = number('streams', 0, 0, 10_000);
  const mode: BenchOptions['mode'] = values.profile ? 'profile' : values.soak ? 'soak' : streams > 0 ? 'streams' : 'throughput';
  if ([values.soak, streams > 0, values.profile].filter(Boolean).length > 1) throw new Error('--soak, --streams and --profile are separate modes: run them one at a time');
  const kinds = (values.kinds ?? (streams > 0 || values.soak || values.profile ? 'json,stream' : KINDS.join(','))).split(',').map((kind) => kind.trim()) as Kind[];
  for (const kind of kinds) if (!KINDS.includes(kind)) throw new Error(`--kinds takes ${KINDS.join(', ')}, got "${kind}"`);
  const soakFallback = mode === 'soak' && values.targets === undefined;
  const targets = (values.targets ?? (mode === 'soak' ? 'gateway-pg' : mode === 'profile' ? 'gateway-pg,bare' : TARGET_NAMES.join(','))).split(',').map((name) => name.trim()) as TargetName[];
  for (const name of targets) if (!TARGET_NAMES.includes(name)) throw new Error(`unknown target "${name}"; targets: ${TARGET_NAMES.join(', ')}`);
  const pgUrl = values['pg-url'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  if (new URL(pgUrl).hostname !== '127.0.0.1') throw new Error('--pg-url must point at 127.0.0.1: the bench stays on loopback');
  return {
    mode,
    quick,
    durationSeconds: Math.round(number('duration', quick ? 2 : 5, 1, 3600)),
    warmupSeconds: Math.round(number('warmup', quick ? 1 : 10, 0, 600)),
    rounds: Math.round(number('rounds', quick ? 1 : 3, 1, 50)),
    connections: Math.round(number('connections', 50, 1, 5000)),
    chunks: Math.round(number('chunks', 20, 1, 10_000)),
    latencyMs: number('latency-ms', 0, 0, 60_000),
    chunkDelayMs: number('chunk-delay-ms', mode === 'streams' ? 1000 : 0, 0, 60_000),
    promptChars: Math.round(number('prompt-chars', 0, 0, 1_000_000)),
    ttfbRequests: Math.round(number('ttfb-requests', quick ? 30 : 100, 0, 100_000)),
    kinds: [...new Set(kinds)],
    targets: [...new Set(targets)],
    soakFallback,
    soakMinutes: number('soak-minutes', 10, 0.1, 24 * 60),
    sampleSeconds: number('sample-seconds', 5, 0.5, 600),
    streams,
    pgUrl,
    pin: values['no-pin'] !== true,
    save: values['no-save'] !== true,
  };
}

/** A generous upper bound of the whole run, after which the bench gives up and cleans up. */
function hardLimitMs(options: BenchOptions): number {
  const startup = 240_000;
  const targets = options.targets.length;
  switch (options.mode) {
    case 'throughput': {
      const perKind = targets * (options.warmupSeconds + 4 + options.rounds * (options.durationSeconds + 4)) * 1000;
      const ttfb = options.kinds.includes('stream') ? options.rounds * targets * 25_000 : 0;
      return startup + 2 * (options.kinds.length * perKind + ttfb);
    }
    case 'soak':
      return startup + targets * (options.soakMinutes * 60_000 * 1.2 + 60_000);
    case 'profile':
      return startup + 2 * options.kinds.length * targets * (options.warmupSeconds + options.durationSeconds + 30) * 1000;
    case 'streams':
      return startup + targets * (options.latencyMs + options.chunks * options.chunkDelayMs + 120_000);
  }
}

function machineBusy(): Promise<Record<string, number>> {
  const before = readCoreTimes();
  return sleep(1000).then(() => coreBusyPercent(before, readCoreTimes()));
}

async function main(resources: Resources, options: BenchOptions): Promise<number> {
  const startedAt = new Date();
  const { pinning } = resources;
  say(`Unified Model Gateway bench — mode ${options.mode}${options.quick ? ' (quick)' : ''}${options.latencyMs ? `, upstream latency ${options.latencyMs} ms` : ''}`);
  const cpus = os.cpus();
  const busy = await machineBusy();
  say(`Machine: ${cpus.length} cores (${cpus[0]?.model ?? 'unknown CPU'}), Node ${process.version}, load average ${os.loadavg().map((value) => value.toFixed(2)).join(' ')}`);
  say(`Before start, cores busy: ${Object.entries(busy).map(([core, percent]) => `${core} ${percent.toFixed(0)}%`).join(', ')}`);
  if (Object.values(busy).some((percent) => percent > 15)) say('  ⚠ other processes are using the CPU: the figures will be noisy; ratios to the bare proxy (same run, alternating rounds) are the steadier ones.');
  if (pinning.enabled) {
    say(`Cores: core ${pinning.targetCore} = the measured target (each target runs there, one under load at a time; the others idle);`);
    say(`       core ${pinning.loadCore} = wrk (1 thread), the upstream test server, the bench's TTFB/stream client and this orchestrator.`);
    say('       Not pinned: the PostgreSQL server (a system service), anything else running on this machine.');
  } else {
    say(`Cores: not pinned (${options.pin ? (cpuCount() < 2 ? 'fewer than 2 cores' : 'taskset not found') : '--no-pin'}): all processes share all cores.`);
  }

  const tmpDir = mkdtempSync(path.join(os.tmpdir(), 'umg-bench-'));
  resources.addDirectory(tmpDir);

  const upstreamArgs = ['--port', '0', '--chunks', String(options.chunks), '--latency-ms', String(options.latencyMs), '--chunk-delay-ms', String(options.chunkDelayMs)];
  const upstream = await startScript(resources, { name: 'upstream', repoDir, script: path.join(benchDir, 'upstream.ts'), args: upstreamArgs, core: pinning.enabled ? pinning.loadCore : undefined });
  const upstreamOrigin = `http://127.0.0.1:${upstream.port}`;
  say(`Upstream: ${upstreamOrigin} (${options.chunks} chunks per stream, ${options.latencyMs} ms before answering, ${options.chunkDelayMs} ms between chunks)`);

  const bench = new Bench(options, resources, pinning, repoDir, benchDir, tmpDir, upstream.child, say);
  // --profile: every target listens for the inspector on its own loopback port.
  const inspectorPorts = new Map<string, number>();
  if (options.mode === 'profile') for (const name of options.targets) if (name !== 'portkey') inspectorPorts.set(name, await freePort());
  const context = {
    nodeArgs: (name: TargetName) => (inspectorPorts.has(name) ? [`--inspect=127.0.0.1:${inspectorPorts.get(name)}`] : []),
    resources,
    repoDir,
    benchDir,
    tmpDir,
    upstreamOrigin,
    targetCore: pinning.targetCore,
    pgServerUrl: options.pgUrl,
    say: (line: string) => say(`  ${line}`),
  };
  say('');
  say('Starting targets:');
  const queue = [...options.targets];
  for (let index = 0; index < queue.length; index++) {
    const name = queue[index]!;
    const began = Date.now();
    try {
      const target = await startTarget(name, context);
      try {
        await probe(target, repoDir, 15_000 + options.latencyMs + 2 * options.chunkDelayMs);
      } catch (error) {
        await target.child.stop();
        throw error;
      }
      bench.targets.push(target);
      bench.statuses.set(name, { status: 'ok', info: target.info });
      say(`  ✓ ${name.padEnd(15)} ${TARGET_LABELS[name]} on ${new URL(target.url).host}, pid ${target.child.pid}, ready in ${((Date.now() - began) / 1000).toFixed(1)} s${target.info.database ? ` — ${target.info.database}` : ''}${target.info.version ? ` — ${target.info.version}` : ''}`);
    } catch (error) {
      const skipped = error instanceof TargetError && error.skipped;
      const message = (error as Error).message;
      bench.statuses.set(name, { status: skipped ? 'skipped' : 'failed', error: message });
      say(`  ${skipped ? '–' : '✗'} ${name.padEnd(15)} ${skipped ? 'SKIPPED' : 'FAILED'}: ${message}`);
      if (options.soakFallback && name === 'gateway-pg' && !queue.includes('gateway-pglite')) {
        say('    (soaking gateway-pglite instead)');
        queue.push('gateway-pglite');
      }
    }
  }
  // Failed targets are stopped now, so that they do not sit on the target core.
  await Promise.all(
    resources.running().filter((child) => child !== upstream.child && !bench.targets.some((target) => target.child === child)).map((child) => child.stop()),
  );
  if (bench.targets.length === 0) {
    say('');
    say('No target could be started: nothing to measure.');
    return 1;
  }
  if (options.mode !== 'soak' && !bench.targets.some((target) => target.name === 'bare')) say('Note: the bare proxy is not running, so there are no ratios to it.');

  const report: Record<string, unknown> = {};
  if (options.mode === 'throughput') {
    const result = await runThroughput(bench);
    say('');
    say(
      `== Results: median of ${options.rounds} round(s) × ${options.durationSeconds} s, ${options.connections} connections, prompt ${options.promptChars ? `${options.promptChars} chars` : '"Say hello"'} (json-1k: ${LONG_PROMPT_CHARS} chars), ` +
        `upstream latency ${options.latencyMs} ms ==`,
    );
    say('×bare = figure / bare proxy figure (same run); +ms = added latency over the bare proxy; ± = half the spread of req/s over rounds.');
    say('Latency columns come from wrk (whole answer); TTFB from the bench\'s own client, sequential streamed requests. RSS = peak VmRSS during the runs.');
    say('');
    say(result.table);
    say('');
    say('CPU during the measured runs (median of rounds; % of one core):');
    say(result.cpuTable);
    say('');
    say('Issue 16 targets (the gateway beside the bare proxy of this run):');
    say(goalsTable(options, result.cells));
    report.throughput = { cells: result.cells };
  } else if (options.mode === 'profile') {
    say('');
    say(`Load: the profile is only meaningful on an otherwise idle machine (load average now ${os.loadavg().map((value) => value.toFixed(2)).join(' ')}).`);
    report.profile = await runProfile(bench, inspectorPorts);
  } else if (options.mode === 'soak') {
    const result = await runSoak(bench);
    say('');
    say('== Soak results (RSS) ==');
    say(result.table);
    for (const entry of result.results) say(`  ${entry.target}: ${entry.verdict}`);
    report.soak = result.results;
  } else {
    const result = await runStreams(bench);
    say('');
    say('== Streams results ==');
    say(result.table);
    report.streams = result.results;
  }

  const failures = [...bench.statuses.entries()].filter(([, status]) => status.status !== 'ok');
  if (failures.length) {
    say('');
    say('Targets not measured (or dropped):');
    for (const [name, status] of failures) say(`  ${name}: ${status.status.toUpperCase()} — ${oneLine(status.error ?? '')}`);
  }

  if (options.save) {
    const resultsDir = path.join(benchDir, 'results');
    mkdirSync(resultsDir, { recursive: true });
    const file = path.join(resultsDir, `${startedAt.toISOString().replace(/[:.]/g, '-')}.json`);
    const document = {
      tool: 'umg-bench',
      version: 1,
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      options,
      machine: { cpus: cpus.length, model: cpus[0]?.model, node: process.version, loadavgAtStart: os.loadavg(), busyBeforeStart: busy },
      pinning,
      gitCommit: gitCommit(),
      peer: bench.statuses.has('portkey') ? peerVersions(benchDir) : undefined,
      targets: Object.fromEntries(bench.statuses),
      ...report,
    };
    writeFileSync(file, `${JSON.stringify(document, null, 2)}\n`);
    say('');
    say(`Saved ${path.relative(process.cwd(), file)}`);
  }
  // A target that was asked for and failed (not one skipped for a missing prerequisite) fails the run.
  return failures.some(([, status]) => status.status === 'failed') ? 1 : 0;
}

/** An error message on one line, with a child's output tail squeezed in, for the summary. */
function oneLine(message: string, max = 400): string {
  const text = message
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join(' | ');
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function gitCommit(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return undefined;
  }
}

function pinningPlan(options: BenchOptions): Pinning {
  const enabled = options.pin && cpuCount() >= 2 && which('taskset') !== undefined;
  return { enabled, targetCore: 0, loadCore: 1 };
}

function pinSelf(pinning: Pinning): void {
  if (!pinning.enabled) return;
  try {
    execFileSync('taskset', ['-a', '-p', '-c', String(pinning.loadCore), String(process.pid)], { stdio: 'ignore' });
  } catch {
    // not fatal: the orchestrator is mostly idle
  }
}

function start(): void {
  let options: BenchOptions | undefined;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`bench: ${(error as Error).message}\n\n${HELP}`);
    process.exit(2);
  }
  if (!options) process.exit(0);
  if (process.platform !== 'linux') {
    process.stderr.write('bench: needs Linux (/proc for memory and CPU figures, taskset for pinning).\n');
    process.exit(2);
  }
  if (options.mode !== 'streams' && !which('wrk')) {
    process.stderr.write('bench: wrk (the load generator) is not installed. On Debian/Ubuntu: `apt-get install -y wrk` (as root, or with sudo); then run again.\n');
    process.exit(2);
  }
  const pinning = pinningPlan(options);
  pinSelf(pinning);
  const resources = new Resources(pinning);

  let finishing = 0;
  const finish = (code: number, message?: string) => {
    if (finishing) return;
    finishing = Date.now();
    if (code !== 0) stopping = true;
    clearTimeout(watchdog);
    if (message) process.stderr.write(`${message}\n`);
    resources
      .cleanup()
      .catch(() => undefined)
      .finally(() => {
        if (code !== 0 && message) process.stderr.write('bench: clean-up done.\n');
        process.exit(code);
      });
  };
  const limitMs = hardLimitMs(options);
  const watchdog = setTimeout(() => finish(1, `bench: gave up after ${Math.round(limitMs / 1000)} s (time limit); cleaning up.`), limitMs);
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    process.on(signal, () => {
      // One Ctrl-C reaches this process more than once (from the terminal and relayed by npm and
      // tsx): only a second one, seconds later, means "stop now, skip the clean-up".
      if (finishing && Date.now() - finishing > 3000) {
        const left = resources.cleanupSync();
        if (left.length) process.stderr.write(`bench: forced exit; not done: ${left.join(', ')}\n`);
        process.exit(code);
      }
      finish(code, `\nbench: ${signal}; stopping every process and removing temporary files…`);
    });
  }
  process.on('uncaughtException', (error) => finish(1, `bench: ${error.stack ?? error.message}`));
  process.on('unhandledRejection', (error) => finish(1, `bench: ${(error as Error)?.stack ?? String(error)}`));
  process.on('exit', () => {
    resources.cleanupSync();
  });

  main(resources, options).then(
    (code) => finish(code),
    (error: Error) => finish(1, `bench: ${error instanceof TargetError ? error.message : (error.stack ?? error.message)}`),
  );
}

start();
