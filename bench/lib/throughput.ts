/**
 * The default mode: every target in turn under the same wrk load, in rounds whose order rotates,
 * for plain and streamed requests; then time to first byte with the bench's own client. One table
 * with each figure and its ratio to the bare proxy of the same run.
 */
import type { Bench, Kind } from './context.js';
import { CpuMeter, RssSampler, runWrk, settle, wrkErrors, type CpuWindow, type WrkResult } from './measure.js';
import { runToEnd } from './processes.js';
import { delta, mb, num, ratio, renderTable } from './report.js';
import { median, round, type Distribution } from './stats.js';
import type { Target, TargetName } from './targets.js';

export interface RoundResult {
  round: number;
  /** Position of the target within its round. */
  position: number;
  rps: number;
  /** Requests per CPU-second of the target (with its PostgreSQL backends, if any). */
  reqPerCpuSecond: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  meanMs: number;
  errors: number;
  peakRssKb: number;
  cpu: CpuWindow;
  wrk: WrkResult;
}

export interface TtfbResult {
  round: number;
  done: number;
  errors: number;
  firstError?: string;
  firstByteMs: Distribution;
  firstEventMs: Distribution;
  totalMs: Distribution;
}

export interface Summary {
  rps: number;
  /** (max − min) / median of the rounds' req/s, in %. */
  rpsSpreadPercent: number;
  reqPerCpuSecond: number;
  p50Ms: number;
  p99Ms: number;
  ttfbP50Ms?: number;
  ttfbP99Ms?: number;
  peakRssMb: number;
  errors: number;
  requests: number;
  targetCpuPercent: number;
  databaseCpuPercent: number;
  upstreamCpuPercent: number;
  cores: Record<string, number>;
}

export interface CellResult {
  kind: Kind;
  target: TargetName;
  warmup?: { rps: number; errors: number };
  rounds: RoundResult[];
  ttfb: TtfbResult[];
  peakRssKb: number;
  summary?: Summary;
  ratiosToBare?: Record<string, number>;
}

export interface ThroughputReport {
  kinds: Kind[];
  cells: CellResult[];
  table: string;
  cpuTable: string;
}

const PAUSE_MS = 300;

function cellFor(cells: CellResult[], kind: Kind, target: TargetName): CellResult {
  let cell = cells.find((entry) => entry.kind === kind && entry.target === target);
  if (!cell) {
    cell = { kind, target, rounds: [], ttfb: [], peakRssKb: 0 };
    cells.push(cell);
  }
  return cell;
}

async function measure(bench: Bench, target: Target, kind: Kind, seconds: number): Promise<{ wrk: WrkResult; cpu: CpuWindow; peakRssKb: number }> {
  const database = target.helperPids ? await target.helperPids().catch(() => []) : [];
  const sampler = new RssSampler(target.child.pid, 200);
  const meter = new CpuMeter({ target: [target.child.pid], database, upstream: [bench.upstream.pid] });
  try {
    const wrk = await runWrk(bench.resources, {
      url: target.url,
      headers: target.headers,
      bodyFile: bench.bodyFile(target, kind),
      connections: bench.options.connections,
      durationSeconds: seconds,
      core: bench.loadCore,
      benchDir: bench.benchDir,
    });
    return { wrk, cpu: meter.end(), peakRssKb: sampler.peakKb };
  } finally {
    sampler.stop();
  }
}

async function ttfb(bench: Bench, target: Target, round: number): Promise<TtfbResult> {
  const { options } = bench;
  const perRequestMs = options.latencyMs + options.chunks * options.chunkDelayMs + 20;
  const limitMs = Math.min(options.quick ? 5000 : 15_000, Math.max(3000, 3 * perRequestMs * options.ttfbRequests));
  const result = await runToEnd(bench.resources, {
    name: 'stream-client',
    command: process.execPath,
    args: [
      '--import',
      'tsx',
      bench.streamClient,
      '--mode',
      'ttfb',
      '--url',
      target.url,
      '--headers',
      JSON.stringify(target.headers),
      '--body-file',
      bench.bodyFile(target, 'stream'),
      '--count',
      String(options.ttfbRequests),
      '--warmup',
      String(Math.min(10, Math.ceil(options.ttfbRequests / 10))),
      '--concurrency',
      '1',
      '--time-limit-ms',
      String(limitMs),
    ],
    cwd: bench.repoDir,
    core: bench.loadCore,
    timeoutMs: limitMs + 20_000,
  });
  const line = result.stdout.split('\n').find((text) => text.startsWith('RESULT '));
  if (!line) throw new Error(`the TTFB client gave no result (exit ${result.code ?? result.signal}):\n${result.output}`);
  const parsed = JSON.parse(line.slice('RESULT '.length)) as Omit<TtfbResult, 'round'> & { error?: string };
  if (parsed.error) throw new Error(`the TTFB client failed: ${parsed.error}`);
  return { round, ...parsed };
}

function rotate<T>(items: T[], by: number): T[] {
  if (items.length === 0) return items;
  const shift = by % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}

export async function runThroughput(bench: Bench): Promise<ThroughputReport> {
  const { options, say } = bench;
  const cells: CellResult[] = [];
  for (const kind of options.kinds) {
    say('');
    say(`== ${kind === 'json' ? 'Plain (JSON) answers' : kind === 'json-1k' ? 'Plain (JSON) answers, ~1k-token prompt' : `Streamed answers (${options.chunks} chunks)`} ==`);
    if (options.warmupSeconds > 0) {
      for (const target of [...bench.targets]) {
        if (!bench.checkAlive(target)) continue;
        try {
          const { wrk, peakRssKb } = await measure(bench, target, kind, options.warmupSeconds);
          const cell = cellFor(cells, kind, target.name);
          cell.warmup = { rps: round(wrk.requests / (wrk.duration_us / 1e6), 0), errors: wrkErrors(wrk) };
          cell.peakRssKb = Math.max(cell.peakRssKb, peakRssKb);
          say(`  warm-up  ${target.name.padEnd(15)} ${num(cell.warmup.rps).padStart(8)} req/s${cell.warmup.errors ? `  ${cell.warmup.errors} errors` : ''}`);
        } catch (error) {
          bench.fail(target.name, `${target.name}: ${(error as Error).message}`);
        }
        await settle(target.child.pid);
      }
    }
    for (let roundIndex = 0; roundIndex < options.rounds; roundIndex++) {
      const order = rotate(bench.targets, roundIndex);
      for (const [position, target] of order.entries()) {
        if (!bench.checkAlive(target)) continue;
        try {
          const { wrk, cpu, peakRssKb } = await measure(bench, target, kind, options.durationSeconds);
          const cell = cellFor(cells, kind, target.name);
          const result: RoundResult = {
            round: roundIndex + 1,
            position,
            rps: wrk.requests / (wrk.duration_us / 1e6),
            reqPerCpuSecond: wrk.requests / (((cpu.processes.target! + (cpu.processes.database || 0)) / 100) * cpu.seconds),
            p50Ms: wrk.latency_us.p50 / 1000,
            p90Ms: wrk.latency_us.p90 / 1000,
            p99Ms: wrk.latency_us.p99 / 1000,
            meanMs: wrk.latency_us.mean / 1000,
            errors: wrkErrors(wrk),
            peakRssKb,
            cpu,
            wrk,
          };
          cell.rounds.push(result);
          cell.peakRssKb = Math.max(cell.peakRssKb, peakRssKb);
          say(
            `  round ${roundIndex + 1}  ${target.name.padEnd(15)} ${num(result.rps).padStart(8)} req/s  p50 ${num(result.p50Ms, 2).padStart(7)} ms  p99 ${num(result.p99Ms, 2).padStart(7)} ms` +
              `  RSS ${num(mb(peakRssKb), 0).padStart(4)} MB  CPU ${num(cpu.processes.target, 0).padStart(3)}%` +
              `${Number.isFinite(cpu.processes.database) ? ` (+${num(cpu.processes.database, 0)}% PG)` : ''}  ${num(result.reqPerCpuSecond).padStart(6)} req/CPU-s` +
              (result.errors ? `  ${result.errors} errors (${JSON.stringify(wrk.errors)})` : ''),
          );
        } catch (error) {
          bench.fail(target.name, `${target.name}: ${(error as Error).message}`);
        }
        await settle(target.child.pid);
        await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
      }
      if (kind === 'stream' && options.ttfbRequests > 0) {
        for (const target of order) {
          if (!bench.targets.includes(target) || !bench.checkAlive(target)) continue;
          try {
            const result = await ttfb(bench, target, roundIndex + 1);
            cellFor(cells, kind, target.name).ttfb.push(result);
            say(
              `  TTFB ${roundIndex + 1}   ${target.name.padEnd(15)} p50 ${num(result.firstByteMs.p50, 2).padStart(7)} ms  p99 ${num(result.firstByteMs.p99, 2).padStart(7)} ms` +
                `  (${result.done} streams${result.errors ? `, ${result.errors} errors: ${result.firstError}` : ''})`,
            );
          } catch (error) {
            bench.fail(target.name, `${target.name}: ${(error as Error).message}`);
          }
        }
      }
    }
  }
  summarize(cells);
  return { kinds: options.kinds, cells, table: table(bench, cells), cpuTable: cpuTable(cells) };
}

function summarize(cells: CellResult[]): void {
  for (const cell of cells) {
    if (cell.rounds.length === 0) continue;
    const rps = cell.rounds.map((entry) => entry.rps);
    const coreNames = Object.keys(cell.rounds[0]!.cpu.cores);
    const good = cell.ttfb.filter((entry) => entry.done > 0);
    cell.summary = {
      rps: median(rps),
      rpsSpreadPercent: (100 * (Math.max(...rps) - Math.min(...rps))) / median(rps),
      reqPerCpuSecond: median(cell.rounds.map((entry) => entry.reqPerCpuSecond)),
      p50Ms: median(cell.rounds.map((entry) => entry.p50Ms)),
      p99Ms: median(cell.rounds.map((entry) => entry.p99Ms)),
      ttfbP50Ms: good.length ? median(good.map((entry) => entry.firstByteMs.p50)) : undefined,
      ttfbP99Ms: good.length ? median(good.map((entry) => entry.firstByteMs.p99)) : undefined,
      peakRssMb: mb(cell.peakRssKb),
      errors: cell.rounds.reduce((sum, entry) => sum + entry.errors, 0) + cell.ttfb.reduce((sum, entry) => sum + entry.errors, 0),
      requests: cell.rounds.reduce((sum, entry) => sum + entry.wrk.requests, 0),
      targetCpuPercent: median(cell.rounds.map((entry) => entry.cpu.processes.target ?? Number.NaN)),
      databaseCpuPercent: median(cell.rounds.map((entry) => entry.cpu.processes.database ?? Number.NaN)),
      upstreamCpuPercent: median(cell.rounds.map((entry) => entry.cpu.processes.upstream ?? Number.NaN)),
      cores: Object.fromEntries(coreNames.map((core) => [core, median(cell.rounds.map((entry) => entry.cpu.cores[core] ?? Number.NaN))])),
    };
  }
  for (const cell of cells) {
    const base = cells.find((entry) => entry.kind === cell.kind && entry.target === 'bare')?.summary;
    const own = cell.summary;
    if (!base || !own) continue;
    const ratios: Record<string, number> = {
      rps: own.rps / base.rps,
      reqPerCpuSecond: own.reqPerCpuSecond / base.reqPerCpuSecond,
      p50Ms: own.p50Ms / base.p50Ms,
      p99Ms: own.p99Ms / base.p99Ms,
      peakRssMb: own.peakRssMb / base.peakRssMb,
      addedP50Ms: own.p50Ms - base.p50Ms,
      addedP99Ms: own.p99Ms - base.p99Ms,
    };
    if (own.ttfbP50Ms !== undefined && base.ttfbP50Ms !== undefined) {
      ratios.ttfbP50Ms = own.ttfbP50Ms / base.ttfbP50Ms;
      ratios.addedTtfbP50Ms = own.ttfbP50Ms - base.ttfbP50Ms;
    }
    if (own.ttfbP99Ms !== undefined && base.ttfbP99Ms !== undefined) ratios.ttfbP99Ms = own.ttfbP99Ms / base.ttfbP99Ms;
    cell.ratiosToBare = Object.fromEntries(Object.entries(ratios).map(([key, value]) => [key, round(value, 3)]));
  }
}

function table(bench: Bench, cells: CellResult[]): string {
  const rows: string[][] = [];
  for (const kind of bench.options.kinds) {
    const base = cells.find((entry) => entry.kind === kind && entry.target === 'bare')?.summary;
    for (const cell of cells.filter((entry) => entry.kind === kind && entry.summary)) {
      const s = cell.summary!;
      const streamed = kind === 'stream';
      rows.push([
        kind,
        cell.target,
        `${num(s.rps)}${cell.rounds.length > 1 ? ` ±${num(s.rpsSpreadPercent / 2, 0)}%` : ''}`,
        ratio(s.rps, base?.rps),
        num(s.reqPerCpuSecond),
        ratio(s.reqPerCpuSecond, base?.reqPerCpuSecond),
        num(s.p50Ms, 2),
        ratio(s.p50Ms, base?.p50Ms),
        delta(s.p50Ms, base?.p50Ms),
        num(s.p99Ms, 2),
        ratio(s.p99Ms, base?.p99Ms),
        delta(s.p99Ms, base?.p99Ms),
        streamed ? num(s.ttfbP50Ms, 2) : '',
        streamed ? ratio(s.ttfbP50Ms, base?.ttfbP50Ms) : '',
        streamed ? delta(s.ttfbP50Ms, base?.ttfbP50Ms) : '',
        streamed ? num(s.ttfbP99Ms, 2) : '',
        streamed ? ratio(s.ttfbP99Ms, base?.ttfbP99Ms) : '',
        num(s.peakRssMb, 0),
        ratio(s.peakRssMb, base?.peakRssMb),
        s.errors ? num(s.errors) : '0',
      ]);
    }
  }
  return renderTable(
    ['kind', 'target', 'req/s', '×bare', 'req/CPU-s', '×bare', 'p50 ms', '×bare', '+ms', 'p99 ms', '×bare', '+ms', 'TTFB p50', '×bare', '+ms', 'TTFB p99', '×bare', 'RSS MB', '×bare', 'errors'],
    rows,
    2,
  );
}

function cpuTable(cells: CellResult[]): string {
  const rows: string[][] = [];
  const coreNames = [...new Set(cells.flatMap((cell) => Object.keys(cell.summary?.cores ?? {})))].sort();
  for (const cell of cells.filter((entry) => entry.summary)) {
    const s = cell.summary!;
    rows.push([
      cell.kind,
      cell.target,
      num(s.targetCpuPercent, 0),
      num(s.databaseCpuPercent, 0),
      num(s.upstreamCpuPercent, 0),
      ...coreNames.map((core) => num(s.cores[core], 0)),
      num(s.requests),
    ]);
  }
  return renderTable(['kind', 'target', 'target CPU%', 'PG backends CPU%', 'upstream CPU%', ...coreNames.map((core) => `${core} busy%`), 'requests'], rows, 2);
}
