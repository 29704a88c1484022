/**
 * `npm run bench -- --profile`: each target (the gateway and the bare proxy) runs with the
 * inspector on a loopback port; after a warm-up the bench starts V8's sampling profiler over
 * the inspector protocol, drives wrk for the measured seconds, stops the profiler and reads
 * where the CPU went, per request: µs per component (first project file or package on the
 * stack) and the budget rows of issue 22 beside the bare proxy's total from the same run.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { WebSocket } from 'undici';
import type { Bench, Kind } from './context.js';
import { runWrk, wrkErrors } from './measure.js';
import { attribute, budgetTable, perRequest, type BudgetFigure, type ComponentFigure, type CpuProfile } from './profile-attribution.js';
import { renderTable } from './report.js';
import { sleep } from './system.js';
import type { Target } from './targets.js';

/** Sampling period of the profiler: fine enough for µs-per-request figures, cheap enough not to skew them much. */
const SAMPLING_INTERVAL_US = 200;

interface Inspector {
  send<T = unknown>(method: string, params?: Record<string, unknown>): Promise<T>;
  close(): void;
}

async function connectInspector(port: number): Promise<Inspector> {
  let targets: { webSocketDebuggerUrl?: string }[] = [];
  for (let attempt = 0; attempt < 50 && targets.length === 0; attempt++) {
    try {
      targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as typeof targets;
    } catch {
      await sleep(100);
    }
  }
  const url = targets[0]?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector answered on 127.0.0.1:${port}`);
  const socket = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener('open', () => resolve(), { once: true });
    socket.addEventListener('error', () => reject(new Error(`could not connect to the inspector at ${url}`)), { once: true });
  });
  let nextId = 1;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    if (message.id === undefined) return;
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.error) waiter?.reject(new Error(message.error.message));
    else waiter?.resolve(message.result);
  });
  return {
    send<T>(method: string, params: Record<string, unknown> = {}) {
      const id = nextId++;
      socket.send(JSON.stringify({ id, method, params }));
      return new Promise<T>((resolve, reject) => pending.set(id, { resolve: resolve as (value: unknown) => void, reject }));
    },
    close: () => socket.close(),
  };
}

export interface ProfileResult {
  target: string;
  kind: Kind;
  requests: number;
  errors: number;
  /** Busy CPU µs per request in the profiled process (idle excluded). */
  totalMicros: number;
  components: ComponentFigure[];
}

/** Profiles one target under load for one kind of request. */
async function profileTarget(bench: Bench, target: Target, inspectorPort: number, kind: Kind): Promise<ProfileResult> {
  const { options } = bench;
  const load = (seconds: number) =>
    runWrk(bench.resources, {
      url: target.url,
      headers: target.headers,
      bodyFile: bench.bodyFile(target, kind),
      connections: options.connections,
      durationSeconds: seconds,
      core: bench.loadCore,
      benchDir: bench.benchDir,
    });
  if (options.warmupSeconds > 0) await load(options.warmupSeconds);
  const inspector = await connectInspector(inspectorPort);
  try {
    await inspector.send('Profiler.enable');
    await inspector.send('Profiler.setSamplingInterval', { interval: SAMPLING_INTERVAL_US });
    await inspector.send('Profiler.start');
    const wrk = await load(options.durationSeconds);
    const { profile } = await inspector.send<{ profile: CpuProfile }>('Profiler.stop');
    await inspector.send('Profiler.disable');
    writeFileSync(path.join(bench.tmpDir, `${target.name}-${kind}.cpuprofile`), JSON.stringify(profile));
    const components = perRequest(attribute(profile, bench.repoDir), wrk.requests);
    return {
      target: target.name,
      kind,
      requests: wrk.requests,
      errors: wrkErrors(wrk),
      totalMicros: components.reduce((sum, figure) => sum + figure.microsPerRequest, 0),
      components,
    };
  } finally {
    inspector.close();
  }
}

const fixed = (value: number) => value.toFixed(1);

/** Runs the profile mode over the started targets; returns the results to save. */
export async function runProfile(bench: Bench, inspectorPorts: Map<string, number>): Promise<{ results: ProfileResult[]; budgets: Record<string, BudgetFigure[]> }> {
  const results: ProfileResult[] = [];
  const budgets: Record<string, BudgetFigure[]> = {};
  const kinds = bench.options.kinds.filter((kind) => kind !== 'json-1k');
  for (const kind of kinds) {
    bench.say('');
    bench.say(`== profile: ${kind} (${bench.options.durationSeconds} s under wrk, ${bench.options.connections} connections, sampling every ${SAMPLING_INTERVAL_US} µs) ==`);
    const bare = bench.targets.find((target) => target.name === 'bare');
    let bareResult: ProfileResult | undefined;
    for (const target of bench.targets) {
      const port = inspectorPorts.get(target.name);
      if (port === undefined) continue;
      const result = await profileTarget(bench, target, port, kind);
      results.push(result);
      if (target === bare) bareResult = result;
    }
    const bareUndici = bareResult?.components.find((figure) => figure.component === 'pkg:undici')?.microsPerRequest ?? 0;
    for (const result of results.filter((entry) => entry.kind === kind)) {
      bench.say('');
      bench.say(`${result.target}: ${result.requests} requests (${result.errors} errors), ${fixed(result.totalMicros)} µs of CPU per request${bareResult && result !== bareResult ? ` = ${(result.totalMicros / bareResult.totalMicros).toFixed(2)}× the bare proxy's ${fixed(bareResult.totalMicros)}` : ''}`);
      bench.say(
        renderTable(
          ['component', 'µs/request'],
          result.components.slice(0, 18).map((figure) => [figure.component.replace(/^pkg:/, ''), fixed(figure.microsPerRequest)]),
        ),
      );
      if (result.target.startsWith('gateway')) {
        const table = budgetTable(result.components, bareUndici);
        budgets[`${result.target}-${kind}`] = table;
        const budgetTotal = table.reduce((sum, row) => sum + row.budget, 0);
        bench.say('');
        bench.say(`budget (${kind}; upstream client at the bare proxy's undici ${fixed(bareUndici)} µs):`);
        bench.say(
          renderTable(
            ['row', 'µs/request', 'budget', 'verdict', 'largest parts'],
            [
              ...table.map((row) => [row.name, fixed(row.microsPerRequest), fixed(row.budget), row.met ? 'met' : 'OVER', row.top.map((part) => `${part.component.replace(/^pkg:/, '')} ${fixed(part.microsPerRequest)}`).join(', ')]),
              ['total', fixed(result.totalMicros), fixed(budgetTotal), result.totalMicros <= budgetTotal ? 'met' : 'OVER', ''],
            ],
          ),
        );
      }
    }
  }
  return { results, budgets };
}
