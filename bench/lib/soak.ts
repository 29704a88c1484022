/**
 * --soak: steady wrk load on a target (the gateway by default) for --soak-minutes, in segments of at
 * most 30 s alternating plain and streamed requests, with its RSS sampled every --sample-seconds.
 * Reports RSS at start (after the first segment, i.e. warmed up), peak, end, after 5 s idle, and
 * whether it kept growing.
 */
import type { Bench, Kind } from './context.js';
import { RssSampler, runWrk, wrkErrors } from './measure.js';
import { mb, num, renderTable } from './report.js';
import { round, slope } from './stats.js';
import { readMemory, sleep } from './system.js';
import type { Target, TargetName } from './targets.js';

const SEGMENT_SECONDS = 30;

export interface SoakSegment {
  kind: Kind;
  startedAtS: number;
  seconds: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

export interface SoakResult {
  target: TargetName;
  minutes: number;
  segments: SoakSegment[];
  samples: { t: number; rssMb: number }[];
  idleBeforeMb: number;
  startMb: number;
  peakMb: number;
  endMb: number;
  idleAfterMb: number;
  /** Least-squares slope of RSS over the second half of the run, MB per minute. */
  lateSlopeMbPerMin: number;
  /** Undefined when the run was too short to tell. */
  grew: boolean | undefined;
  verdict: string;
  error?: string;
}

export interface SoakReport {
  results: SoakResult[];
  table: string;
}

async function soakOne(bench: Bench, target: Target): Promise<SoakResult> {
  const { options, say } = bench;
  const idleBefore = readMemory(target.child.pid)?.rssKb ?? Number.NaN;
  const sampler = new RssSampler(target.child.pid, options.sampleSeconds * 1000, true);
  const totalMs = options.soakMinutes * 60_000;
  const began = Date.now();
  const endAt = began + totalMs;
  const segments: SoakSegment[] = [];
  let warmedAtS = Number.NaN;
  let error: string | undefined;
  let index = 0;
  while (Date.now() < endAt - 1000) {
    const seconds = Math.min(SEGMENT_SECONDS, Math.floor((endAt - Date.now()) / 1000));
    if (seconds < 1) break;
    const kind = options.kinds[index++ % options.kinds.length]!;
    const startedAtS = (Date.now() - began) / 1000;
    try {
      const wrk = await runWrk(bench.resources, {
        url: target.url,
        headers: target.headers,
        bodyFile: bench.bodyFile(target, kind),
        connections: options.connections,
        durationSeconds: seconds,
        core: bench.loadCore,
        benchDir: bench.benchDir,
      });
      const segment: SoakSegment = {
        kind,
        startedAtS: round(startedAtS, 1),
        seconds,
        rps: round(wrk.requests / (wrk.duration_us / 1e6), 0),
        p50Ms: wrk.latency_us.p50 / 1000,
        p99Ms: wrk.latency_us.p99 / 1000,
        errors: wrkErrors(wrk),
      };
      segments.push(segment);
      if (Number.isNaN(warmedAtS)) warmedAtS = (Date.now() - began) / 1000;
      say(
        `  ${num(segment.startedAtS, 0).padStart(5)} s  ${kind.padEnd(6)} ${num(segment.rps).padStart(8)} req/s  p99 ${num(segment.p99Ms, 1).padStart(7)} ms` +
          `  RSS ${num(mb(sampler.sample()), 0).padStart(4)} MB${segment.errors ? `  ${segment.errors} errors` : ''}`,
      );
    } catch (failure) {
      error = (failure as Error).message;
      break;
    }
    if (!bench.checkAlive(target)) {
      error = `${target.name} exited during the soak`;
      break;
    }
  }
  sampler.stop();
  const loadEndS = (Date.now() - began) / 1000;
  await sleep(5000);
  const idleAfter = readMemory(target.child.pid)?.rssKb ?? Number.NaN;

  const underLoad = sampler.samples.filter((sample) => sample.t <= loadEndS);
  const warm = underLoad.filter((sample) => sample.t >= warmedAtS);
  const series = warm.length >= 2 ? warm : underLoad;
  const startKb = series[0]?.rssKb ?? Number.NaN;
  const endKb = series[series.length - 1]?.rssKb ?? Number.NaN;
  const peakKb = Math.max(...underLoad.map((sample) => sample.rssKb));
  const half = series.slice(Math.floor(series.length / 2));
  const lateSlope = slope(half.map((sample) => ({ x: sample.t / 60, y: sample.rssKb / 1024 })));
  const growthMb = (endKb - startKb) / 1024;
  const enough = series.length >= 6 && Number.isFinite(growthMb) && Number.isFinite(lateSlope);
  const grew = enough && growthMb > Math.max(20, (0.1 * startKb) / 1024) && lateSlope > 0.5;
  const verdict = !enough
    ? `too short to tell (${series.length} samples after warm-up; run longer, or sample more often with --sample-seconds)`
    : grew
      ? `GREW: +${num(growthMb, 0)} MB from start to end, still rising ${num(lateSlope, 1)} MB/min in the second half`
      : `no sustained growth (${growthMb >= 0 ? '+' : ''}${num(growthMb, 0)} MB start→end, ${num(lateSlope, 1)} MB/min in the second half)`;
  return {
    target: target.name,
    minutes: options.soakMinutes,
    segments,
    samples: sampler.samples.map((sample) => ({ t: sample.t, rssMb: round(sample.rssKb / 1024, 1) })),
    idleBeforeMb: round(mb(idleBefore), 1),
    startMb: round(mb(startKb), 1),
    peakMb: round(mb(peakKb), 1),
    endMb: round(mb(endKb), 1),
    idleAfterMb: round(mb(idleAfter), 1),
    lateSlopeMbPerMin: round(lateSlope, 2),
    grew: enough ? grew : undefined,
    verdict,
    error,
  };
}

export async function runSoak(bench: Bench): Promise<SoakReport> {
  const results: SoakResult[] = [];
  for (const target of [...bench.targets]) {
    bench.say('');
    bench.say(`== Soak: ${target.name}, ${bench.options.soakMinutes} min, ${bench.options.connections} connections, ${bench.options.kinds.join(' / ')} alternating every ${SEGMENT_SECONDS} s ==`);
    const result = await soakOne(bench, target);
    if (result.error) bench.say(`  ✗ ${result.error}`);
    results.push(result);
  }
  const rows = results.map((result) => [
    result.target,
    num(result.idleBeforeMb, 0),
    num(result.startMb, 0),
    num(result.peakMb, 0),
    num(result.endMb, 0),
    num(result.idleAfterMb, 0),
    num(result.lateSlopeMbPerMin, 2),
    num(result.segments.reduce((sum, segment) => sum + segment.rps * segment.seconds, 0)),
    num(result.segments.reduce((sum, segment) => sum + segment.errors, 0)),
    result.grew === undefined ? '?' : result.grew ? 'GREW' : 'stable',
  ]);
  const table = renderTable(['target', 'idle MB', 'start MB', 'peak MB', 'end MB', 'idle after MB', 'late MB/min', 'requests', 'errors', 'RSS'], rows);
  return { results, table };
}
