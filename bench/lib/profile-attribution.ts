/**
 * Reads a V8 CPU profile (the `Profiler.stop` answer, or a `.cpuprofile` file) into CPU time per
 * component: each sample's self time goes to the first project file or package on its stack,
 * counting from the leaf; frames of Node itself (`node:` URLs, natives) pass their time to their
 * caller. Pure: no I/O, so it can be tested on a hand-made profile.
 */

export interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

export interface CpuProfile {
  nodes: CpuProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

/** Where sampled time went that no project file or package claims. */
export const GC = 'garbage collection';
export const PROGRAM = 'microtasks, program';
export const IDLE = '(idle)';

/**
 * The component a frame belongs to: `pkg:<name>` for a package under node_modules, the path
 * relative to `repoDir` for a project file (its source's for a file of the compiled dist/), undefined for Node's own frames (and anything else).
 */
export function componentOfUrl(url: string, repoDir: string): string | undefined {
  if (url === '' || url.startsWith('node:')) return undefined;
  const path = url.startsWith('file://') ? decodeURIComponent(url.slice('file://'.length)) : url;
  const marker = '/node_modules/';
  const at = path.lastIndexOf(marker);
  if (at >= 0) {
    const rest = path.slice(at + marker.length).split('/');
    const name = rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1] ?? ''}` : rest[0];
    return name ? `pkg:${name}` : undefined;
  }
  const root = repoDir.endsWith('/') ? repoDir : `${repoDir}/`;
  if (!path.startsWith(root)) return undefined;
  const relative = path.slice(root.length);
  // The compiled build (dist/, one .js per source file) is attributed to its source.
  return relative.startsWith('dist/') ? relative.slice('dist/'.length).replace(/\.js$/, '.ts') : relative;
}

/** Microseconds of self time per component over the profile, idle time under {@link IDLE}. */
export function attribute(profile: CpuProfile, repoDir: string): Map<string, number> {
  const byId = new Map<number, CpuProfileNode>();
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const resolved = new Map<number, string>();
  const componentOf = (id: number): string => {
    const known = resolved.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    let component: string;
    if (!node) component = PROGRAM;
    else if (node.callFrame.functionName === '(garbage collector)') component = GC;
    else if (node.callFrame.functionName === '(idle)') component = IDLE;
    else if (node.callFrame.functionName === '(program)' || node.callFrame.functionName === '(root)') component = PROGRAM;
    else {
      const own = componentOfUrl(node.callFrame.url, repoDir);
      const up = parent.get(id);
      component = own ?? (up === undefined ? PROGRAM : componentOf(up));
    }
    resolved.set(id, component);
    return component;
  };
  const totals = new Map<string, number>();
  const samples = profile.samples ?? [];
  const deltas = profile.timeDeltas ?? [];
  // A sample's time is the gap to the next sample (the last one gets the profile's end).
  for (let index = 0; index < samples.length; index++) {
    const next = index + 1 < deltas.length ? deltas[index + 1]! : 0;
    const micros = Math.max(0, next);
    const component = componentOf(samples[index]!);
    totals.set(component, (totals.get(component) ?? 0) + micros);
  }
  return totals;
}

/** A row of the budget table: the components it covers and the µs per request it may cost. */
export interface BudgetRow {
  name: string;
  matches: (component: string) => boolean;
  /** µs per request; `'bare'` = no more than the bare proxy spends in the same packages. */
  budget: number | 'bare';
}

const pkg = (...names: string[]) => {
  const set = new Set(names.map((name) => `pkg:${name}`));
  return (component: string) => set.has(component) || [...set].some((name) => name.endsWith('/*') && component.startsWith(name.slice(0, -1)));
};
const under = (...folders: string[]) => (component: string) => folders.some((folder) => (folder.endsWith('.ts') ? component === folder : component.startsWith(folder)));
const either =
  (...tests: ((component: string) => boolean)[]) =>
  (component: string) =>
    tests.some((test) => test(component));

/** The packages of Koa and @koa/router and what they pull in per request. */
const KOA_PACKAGES = [
  'koa',
  '@koa/router',
  'koa-compose',
  'koa-convert',
  'delegates',
  'on-finished',
  'ee-first',
  'only',
  'accepts',
  'negotiator',
  'type-is',
  'media-typer',
  'mime-types',
  'content-type',
  'content-disposition',
  'cookies',
  'keygrip',
  'vary',
  'fresh',
  'statuses',
  'http-errors',
  'http-assert',
  'depd',
  'encodeurl',
  'escape-html',
  'destroy',
  'path-to-regexp',
  'parseurl',
];

/**
 * The budget (issue 22): JSON ≤ 130 µs per request in all, the upstream client counted at what
 * the bare proxy spends in undici in the same run. The rows cover every component; what no row
 * names falls in "gateway logic".
 */
export const BUDGET_ROWS: BudgetRow[] = [
  { name: 'observability (metrics, access log, request context)', matches: either(under('server/observability/', 'server/logger.ts'), pkg('pino', 'sonic-boom', 'prom-client', 'pino-std-serializers', 'fast-redact', 'quick-format-unescaped', 'atomic-sleep', 'on-exit-leak-free', 'thread-stream', 'bintrees', 'tdigest', '@opentelemetry/*')), budget: 10 },
  { name: 'tRPC (procedures, middleware, callers)', matches: either(pkg('@trpc/server'), under('routers/', 'server/procedures/')), budget: 10 },
  { name: 'upstream client (undici, transport)', matches: either(pkg('undici'), under('server/upstream/')), budget: 'bare' },
  { name: 'Koa, router and body reading', matches: either(pkg(...KOA_PACKAGES), under('compat/')), budget: 20 },
  { name: 'garbage collection', matches: (component) => component === GC, budget: 10 },
  { name: 'database (settlement batches, in process)', matches: either(pkg('pg', 'pg-protocol', 'pg-pool', 'pg-types', 'pg-connection-string', 'postgres-array', 'postgres-bytea', 'postgres-date', 'postgres-interval', 'kysely', '@electric-sql/pglite'), under('db/', 'server/billing/')), budget: 10 },
  { name: 'validation (zod)', matches: pkg('zod'), budget: 5 },
  { name: 'microtasks, program, Node internals', matches: (component) => component === PROGRAM, budget: 10 },
  { name: 'gateway logic (auth, catalog, generation, tokens, limits)', matches: () => true, budget: 25 },
];

export interface ComponentFigure {
  component: string;
  microsPerRequest: number;
}

export interface BudgetFigure {
  name: string;
  microsPerRequest: number;
  budget: number;
  met: boolean;
  top: ComponentFigure[];
}

/** µs per request per component (busy time only), largest first. */
export function perRequest(totals: Map<string, number>, requests: number): ComponentFigure[] {
  const figures: ComponentFigure[] = [];
  for (const [component, micros] of totals) {
    if (component === IDLE) continue;
    figures.push({ component, microsPerRequest: requests > 0 ? micros / requests : 0 });
  }
  return figures.sort((a, b) => b.microsPerRequest - a.microsPerRequest);
}

/** The budget rows for a gateway's figures; `bareUpstream` = µs per request the bare proxy spent in undici. */
export function budgetTable(figures: ComponentFigure[], bareUpstream: number): BudgetFigure[] {
  const rows = BUDGET_ROWS.map((row) => ({ row, micros: 0, top: [] as ComponentFigure[] }));
  for (const figure of figures) {
    const slot = rows.find((entry) => entry.row.matches(figure.component))!;
    slot.micros += figure.microsPerRequest;
    slot.top.push(figure);
  }
  return rows.map(({ row, micros, top }) => {
    const budget = row.budget === 'bare' ? bareUpstream : row.budget;
    return { name: row.name, microsPerRequest: micros, budget, met: micros <= budget, top: top.slice(0, 3) };
  });
}
