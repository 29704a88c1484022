/** Load runs (wrk), the bench's stream client, and sampling of a target's memory and CPU while they run. */
import path from 'node:path';
import { runToEnd, type Resources } from './processes.js';
import { coreBusyPercent, readCoreTimes, readCpuSeconds, readMemory, sleep } from './system.js';

export interface WrkResult {
  requests: number;
  duration_us: number;
  bytes: number;
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  latency_us: { min: number; mean: number; max: number; stdev: number; p50: number; p90: number; p99: number; p999: number };
}

export interface WrkOptions {
  url: string;
  headers: Record<string, string>;
  bodyFile: string;
  connections: number;
  durationSeconds: number;
  core?: number;
  benchDir: string;
}

/** Runs wrk once (one thread, bounded by its duration plus a margin) and returns its summary. */
export async function runWrk(resources: Resources, options: WrkOptions): Promise<WrkResult> {
  const headerArgs = Object.entries(options.headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]);
  const seconds = Math.max(1, Math.round(options.durationSeconds));
  const result = await runToEnd(resources, {
    name: 'wrk',
    command: 'wrk',
    args: ['-t1', `-c${options.connections}`, `-d${seconds}s`, '--timeout', '10s', '-s', path.join(options.benchDir, 'wrk', 'post.lua'), ...headerArgs, options.url],
    env: { ...process.env, BENCH_BODY_FILE: options.bodyFile },
    core: options.core,
    timeoutMs: seconds * 1000 + 20_000,
  });
  const line = result.stdout.split('\n').find((text) => text.startsWith('BENCH_RESULT '));
  if (!line) throw new Error(`wrk gave no result (exit ${result.code ?? result.signal}${result.timedOut ? ', timed out' : ''}):\n${result.output}`);
  return JSON.parse(line.slice('BENCH_RESULT '.length)) as WrkResult;
}

export function wrkErrors(result: WrkResult): number {
  const e = result.errors;
  return e.connect + e.read + e.write + e.status + e.timeout;
}

/** Samples a process's VmRSS every `intervalMs` and keeps the peak (and, optionally, every sample). */
export class RssSampler {
  peakKb = 0;
  lastKb = Number.NaN;
  readonly samples: { t: number; rssKb: number }[] = [];
  private readonly timer: NodeJS.Timeout;
  private readonly began = Date.now();

  constructor(
    private readonly pid: number,
    intervalMs: number,
    private readonly keep = false,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  sample(): number {
    const memory = readMemory(this.pid);
    if (!memory) return Number.NaN;
    this.lastKb = memory.rssKb;
    this.peakKb = Math.max(this.peakKb, memory.rssKb);
    if (this.keep) this.samples.push({ t: (Date.now() - this.began) / 1000, rssKb: memory.rssKb });
    return memory.rssKb;
  }

  stop(): void {
    clearInterval(this.timer);
    this.sample();
  }
}

export interface CpuWindow {
  /** CPU used by each watched group of processes, in % of one core. */
  processes: Record<string, number>;
  /** Busy % of each core. */
  cores: Record<string, number>;
  seconds: number;
}

/** Measures the CPU used by groups of processes and by each core between start and end. */
export class CpuMeter {
  private readonly began = performance.now();
  private readonly coresBefore = readCoreTimes();
  private readonly before: Map<number, number | undefined>;

  constructor(private readonly groups: Record<string, number[]>) {
    this.before = new Map(Object.values(groups).flatMap((pids) => pids.map((pid) => [pid, readCpuSeconds(pid)] as const)));
  }

  end(): CpuWindow {
    const seconds = (performance.now() - this.began) / 1000;
    const processes: Record<string, number> = {};
    for (const [name, pids] of Object.entries(this.groups)) {
      let used = 0;
      let known = false;
      for (const pid of pids) {
        const start = this.before.get(pid);
        const finish = readCpuSeconds(pid);
        if (start === undefined || finish === undefined) continue;
        used += finish - start;
        known = true;
      }
      processes[name] = known && seconds > 0 ? (100 * used) / seconds : Number.NaN;
    }
    return { processes, cores: coreBusyPercent(this.coresBefore, readCoreTimes()), seconds };
  }
}

/** Waits until a process is (nearly) idle — e.g. a gateway flushing usage rows after a run — at most `maxMs`. */
export async function settle(pid: number, maxMs = 3000, thresholdPercent = 5): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (Date.now() < deadline) {
    const start = readCpuSeconds(pid);
    await sleep(250);
    const end = readCpuSeconds(pid);
    if (start === undefined || end === undefined) return;
    if ((100 * (end - start)) / 0.25 < thresholdPercent) return;
  }
}
