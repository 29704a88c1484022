/**
 * --streams N: for each target in turn, N streamed requests held open at once (the upstream waits
 * --chunk-delay-ms between chunks), and the target's RSS while they are open.
 */
import type { Bench } from './context.js';
import { RssSampler, settle } from './measure.js';
import { mb, num, ratio, renderTable } from './report.js';
import { round } from './stats.js';
import { runToEnd } from './processes.js';
import { readMemory, sleep } from './system.js';
import type { Target, TargetName } from './targets.js';

export interface StreamsResult {
  target: TargetName;
  wanted: number;
  /** Most streams open at once (first byte received, not yet ended). */
  maxOpen: number;
  /** Whether all were open at once. */
  allOpen: boolean;
  /** ms until all were open (or until the most were). */
  openMs: number;
  completed: number;
  errors: number;
  firstError?: string;
  idleMb: number;
  /** Peak RSS while at least 90% of maxOpen streams were open. */
  openMb: number;
  peakMb: number;
  afterMb: number;
  /** (open − idle) / maxOpen, KB per stream. */
  perStreamKb: number;
}

export interface StreamsReport {
  results: StreamsResult[];
  table: string;
}

interface ClientLine {
  open?: number;
  wanted?: number;
  ms?: number;
  maxOpen?: number;
  completed?: number;
  errors?: number;
  firstError?: string;
  error?: string;
}

/**
 * Short streams (2 chunks) at some concurrency before the idle reading, so that start-up garbage is
 * collected and the streaming path is warm: otherwise the "idle" RSS can be above the loaded one.
 */
async function warmUp(bench: Bench, target: Target): Promise<void> {
  const concurrency = Math.min(50, bench.options.streams);
  await runToEnd(bench.resources, {
    name: 'stream-client (warm-up)',
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
      bench.bodyFile(target, 'stream', 2),
      '--count',
      String(concurrency * 3),
      '--concurrency',
      String(concurrency),
      '--time-limit-ms',
      '15000',
    ],
    cwd: bench.repoDir,
    core: bench.loadCore,
    timeoutMs: 30_000,
  });
}

async function holdOne(bench: Bench, target: Target): Promise<StreamsResult> {
  const { options } = bench;
  await warmUp(bench, target);
  await settle(target.child.pid);
  const idleKb = readMemory(target.child.pid)?.rssKb ?? Number.NaN;
  const streamMs = options.latencyMs + options.chunks * options.chunkDelayMs;
  const limitMs = streamMs + 60_000;
  let resultLine: (value: ClientLine) => void = () => undefined;
  const finished = new Promise<ClientLine>((resolve) => (resultLine = resolve));
  let openLine: ClientLine | undefined;
  // RSS read each time the client reports how many streams are open.
  const readings: { open: number; ms: number; rssKb: number }[] = [];
  const sampler = new RssSampler(target.child.pid, 250);
  const child = bench.resources.start({
    name: 'stream-client',
    command: process.execPath,
    args: [
      '--import',
      'tsx',
      bench.streamClient,
      '--mode',
      'hold',
      '--url',
      target.url,
      '--headers',
      JSON.stringify(target.headers),
      '--body-file',
      bench.bodyFile(target, 'stream'),
      '--count',
      String(options.streams),
      '--open-timeout-ms',
      String(Math.min(30_000, Math.max(5000, streamMs * 0.75))),
      '--time-limit-ms',
      String(limitMs),
    ],
    cwd: bench.repoDir,
    core: bench.loadCore,
    onLine: (line) => {
      if (line.startsWith('PROGRESS ')) {
        const progress = JSON.parse(line.slice(9)) as { open: number; ms: number };
        readings.push({ ...progress, rssKb: sampler.sample() });
      }
      if (line.startsWith('OPEN ')) openLine = JSON.parse(line.slice(5)) as ClientLine;
      if (line.startsWith('RESULT ')) resultLine(JSON.parse(line.slice(7)) as ClientLine);
    },
  });
  const killer = setTimeout(() => child.signal('SIGKILL'), limitMs + 15_000);
  const exited = child.exited.then((): ClientLine => ({ error: `the stream client exited (${child.tail(5)})` }));
  try {
    const result = await Promise.race([finished, exited]);
    if (result.error) throw new Error(result.error);
    sampler.stop();
    await sleep(2000);
    const afterKb = readMemory(target.child.pid)?.rssKb ?? Number.NaN;
    const maxOpen = Math.max(result.maxOpen ?? 0, ...readings.map((reading) => reading.open));
    const full = readings.filter((reading) => reading.open >= 0.9 * maxOpen && maxOpen > 0);
    const openKb = full.length ? Math.max(...full.map((reading) => reading.rssKb)) : Number.NaN;
    const allOpen = openLine && (openLine.open ?? 0) >= options.streams;
    return {
      target: target.name,
      wanted: options.streams,
      maxOpen,
      openMs: allOpen ? (openLine!.ms ?? Number.NaN) : (readings.find((reading) => reading.open === maxOpen)?.ms ?? Number.NaN),
      allOpen: Boolean(allOpen),
      completed: result.completed ?? 0,
      errors: result.errors ?? 0,
      firstError: result.firstError,
      idleMb: round(mb(idleKb), 1),
      openMb: round(mb(openKb), 1),
      peakMb: round(mb(sampler.peakKb), 1),
      afterMb: round(mb(afterKb), 1),
      // Only meaningful when the RSS rose; a GC during the run can make it fall.
      perStreamKb: maxOpen > 0 && openKb > idleKb ? round((openKb - idleKb) / maxOpen, 1) : Number.NaN,
    };
  } finally {
    sampler.stop();
    clearTimeout(killer);
    await child.stop(2000);
  }
}

export async function runStreams(bench: Bench): Promise<StreamsReport> {
  const { options, say } = bench;
  const results: StreamsResult[] = [];
  say('');
  say(`== ${options.streams} concurrent streams per target (${options.chunks} chunks, ${options.chunkDelayMs} ms apart: ~${num((options.latencyMs + options.chunks * options.chunkDelayMs) / 1000, 0)} s each) ==`);
  for (const target of [...bench.targets]) {
    if (!bench.checkAlive(target)) continue;
    try {
      const result = await holdOne(bench, target);
      results.push(result);
      say(
        `  ${target.name.padEnd(15)} ${result.maxOpen}/${result.wanted} open after ${num(result.openMs / 1000, 1)} s: RSS ${num(result.idleMb, 0)} → ${num(result.openMb, 0)} MB` +
          ` (${num(result.perStreamKb, 0)} KB/stream), ${result.completed} completed${result.errors ? `, ${result.errors} errors: ${result.firstError}` : ''}`,
      );
    } catch (error) {
      bench.fail(target.name, `${target.name}: ${(error as Error).message}`);
    }
  }
  const base = results.find((result) => result.target === 'bare');
  const rows = results.map((result) => [
    result.target,
    `${result.maxOpen}/${result.wanted}`,
    num(result.openMs / 1000, 1),
    num(result.idleMb, 0),
    num(result.openMb, 0),
    ratio(result.openMb, base?.openMb),
    num(result.peakMb, 0),
    num(result.perStreamKb, 0),
    num(result.afterMb, 0),
    String(result.completed),
    String(result.errors),
  ]);
  const notes = results
    .filter((result) => result.maxOpen < result.wanted)
    .map((result) => `Note: ${result.target} never had more than ${result.maxOpen} of the ${result.wanted} streams open at once (the rest waited: a connection or concurrency limit).`);
  const table = renderTable(['target', 'open', 'open s', 'idle MB', 'RSS open MB', '×bare', 'peak MB', 'KB/stream', 'after MB', 'completed', 'errors'], rows);
  return { results, table: [table, ...notes].join('\n') };
}
