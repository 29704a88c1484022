/**
 * Issue 16's targets, each printed with the gateway's measured value beside the bare proxy's of
 * the same run, so that a run says at a glance what is met and what is not.
 */
import type { BenchOptions, Kind } from './context.js';
import { num, renderTable } from './report.js';
import type { CellResult, Summary } from './throughput.js';

interface Goal {
  goal: string;
  measured: string;
  bare: string;
  verdict: string;
}

const GATEWAYS = ['gateway-pg', 'gateway-pglite'] as const;

function summaryOf(cells: CellResult[], kind: Kind, target: string): Summary | undefined {
  return cells.find((cell) => cell.kind === kind && cell.target === target)?.summary;
}

function verdict(ok: boolean | undefined, stretch?: boolean): string {
  if (ok === undefined) return '–';
  return ok ? (stretch ? 'met (stretch too)' : 'met') : 'MISSED';
}

function slowerText(fraction: number): string {
  return fraction >= 0 ? `${(100 * fraction).toFixed(0)} % slower` : `${(-100 * fraction).toFixed(0)} % faster`;
}

/** PostgreSQL backend CPU per request in µs, from the backends' CPU % during the runs. */
export function databaseMicrosPerRequest(summary: Summary): number {
  return (summary.databaseCpuPercent / 100) * 1e6 / summary.rps;
}

export function goalsTable(options: BenchOptions, cells: CellResult[]): string {
  const goals: Goal[] = [];
  for (const gateway of GATEWAYS) {
    const label = gateway === 'gateway-pg' ? 'PG' : 'PGlite';
    if (options.latencyMs > 0) {
      for (const kind of options.kinds) {
        const own = summaryOf(cells, kind, gateway);
        const bare = summaryOf(cells, kind, 'bare');
        if (!own || !bare) continue;
        const p50 = own.p50Ms - bare.p50Ms;
        const p99 = own.p99Ms - bare.p99Ms;
        goals.push({ goal: `${label} ${kind}: added p50 ≤ 0.5 ms at ${options.latencyMs} ms upstream`, measured: `+${num(p50, 2)} ms`, bare: `${num(bare.p50Ms, 2)} ms`, verdict: verdict(p50 <= 0.5) });
        goals.push({ goal: `${label} ${kind}: added p99 ≤ 2 ms`, measured: `+${num(p99, 2)} ms`, bare: `${num(bare.p99Ms, 2)} ms`, verdict: verdict(p99 <= 2) });
      }
      continue;
    }
    for (const [kind, floor, stretch] of [
      ['json', 0.45, 0.6],
      ['stream', 0.6, 0.8],
    ] as const) {
      const own = summaryOf(cells, kind, gateway);
      const bare = summaryOf(cells, kind, 'bare');
      if (!own) continue;
      const ratio = bare ? own.rps / bare.rps : undefined;
      goals.push({
        goal: `${label} ${kind} req/s ≥ ${floor}× bare (stretch ${stretch}×)`,
        // Per CPU-second too: on a machine shared with other work it is the steadier ratio.
        measured: `${num(own.rps)} = ${ratio === undefined ? '–' : `${ratio.toFixed(2)}×`}${bare ? ` (per CPU-s ${(own.reqPerCpuSecond / bare.reqPerCpuSecond).toFixed(2)}×)` : ''}`,
        bare: bare ? num(bare.rps) : '–',
        verdict: verdict(ratio === undefined ? undefined : ratio >= floor, ratio !== undefined && ratio >= stretch),
      });
      const peer = summaryOf(cells, kind, 'portkey');
      if (peer) {
        const times = own.rps / peer.rps;
        goals.push({ goal: `${label} ${kind} ≥ 8× Portkey`, measured: `${times.toFixed(1)}× (Portkey ${num(peer.rps)})`, bare: bare ? `${(bare.rps / peer.rps).toFixed(1)}×` : '–', verdict: verdict(times >= 8) });
      }
    }
    const stream = summaryOf(cells, 'stream', gateway);
    const bareStream = summaryOf(cells, 'stream', 'bare');
    if (stream?.ttfbP50Ms !== undefined && bareStream?.ttfbP50Ms !== undefined) {
      const added = stream.ttfbP50Ms - bareStream.ttfbP50Ms;
      goals.push({ goal: `${label} stream TTFB p50 within 0.5 ms of bare`, measured: `${num(stream.ttfbP50Ms, 2)} ms (+${num(added, 2)})`, bare: `${num(bareStream.ttfbP50Ms, 2)} ms`, verdict: verdict(added <= 0.5) });
    }
    const short = summaryOf(cells, 'json', gateway);
    const long = summaryOf(cells, 'json-1k', gateway);
    if (short && long) {
      const slower = 1 - long.rps / short.rps;
      const bareShort = summaryOf(cells, 'json', 'bare');
      const bareLong = summaryOf(cells, 'json-1k', 'bare');
      goals.push({
        goal: `${label} ~1k-token prompt ≤ 10 % slower than "Say hello"`,
        measured: `${num(long.rps)} vs ${num(short.rps)} req/s (${slowerText(slower)}; per CPU-s ${slowerText(1 - long.reqPerCpuSecond / short.reqPerCpuSecond)})`,
        bare: bareShort && bareLong ? slowerText(1 - bareLong.rps / bareShort.rps) : '–',
        verdict: verdict(slower <= 0.1),
      });
    }
    if (gateway === 'gateway-pg') {
      // The CPU of the bench database's backends during the runs (CpuMeter over the
      // pg_stat_activity pids looked up before each run: the gateway's pool keeps its
      // connections, so none is missed). bench/settlement.ts measures the same with
      // bench/lib/pg-cpu.ts, which also follows backends that come and go.
      for (const kind of options.kinds) {
        const own = summaryOf(cells, kind, gateway);
        if (!own || !Number.isFinite(own.databaseCpuPercent)) continue;
        const micros = databaseMicrosPerRequest(own);
        goals.push({ goal: `PG ${kind}: PostgreSQL CPU ≤ 40 µs per request`, measured: `${num(micros, 0)} µs`, bare: '0', verdict: verdict(micros <= 40) });
      }
    }
    const peakRss = Math.max(...options.kinds.map((kind) => summaryOf(cells, kind, gateway)?.peakRssMb ?? Number.NaN).filter(Number.isFinite));
    if (Number.isFinite(peakRss)) {
      const limit = gateway === 'gateway-pg' ? 200 : 350;
      const bareRss = Math.max(...options.kinds.map((kind) => summaryOf(cells, kind, 'bare')?.peakRssMb ?? Number.NaN).filter(Number.isFinite));
      goals.push({
        goal: `${label} RSS < ${limit} MB under load${gateway === 'gateway-pg' ? ' (500 streams: --streams 500)' : ''}`,
        measured: `${num(peakRss, 0)} MB peak`,
        bare: Number.isFinite(bareRss) ? `${num(bareRss, 0)} MB` : '–',
        verdict: verdict(peakRss < limit),
      });
    }
  }
  if (goals.length === 0) return '(no gateway figures to compare)';
  return renderTable(['issue-16 target', 'gateway measured', 'bare proxy', 'verdict'], goals.map((goal) => [goal.goal, goal.measured, goal.bare, goal.verdict]), 1);
}
