/**
 * The profile mode's attribution (bench/lib/profile-attribution.ts): a sample's time goes to the
 * first project file or package from the leaf up; Node's own frames pass it to their caller;
 * GC and program time keep their own rows; the budget rows cover every component.
 */
import { describe, expect, it } from 'vitest';
import { attribute, budgetTable, componentOfUrl, GC, IDLE, perRequest, PROGRAM, type CpuProfile } from '../../bench/lib/profile-attribution.js';

const REPO = '/srv/umg';
const frame = (functionName: string, url: string) => ({ functionName, url });

describe('componentOfUrl', () => {
  it('names packages (scoped or not), project files (a compiled one by its source), and nothing for Node itself', () => {
    expect(componentOfUrl(`file://${REPO}/node_modules/undici/lib/dispatcher/client.js`, REPO)).toBe('pkg:undici');
    expect(componentOfUrl(`file://${REPO}/node_modules/@trpc/server/dist/index.mjs`, REPO)).toBe('pkg:@trpc/server');
    expect(componentOfUrl(`file://${REPO}/node_modules/a/node_modules/pino/lib/x.js`, REPO)).toBe('pkg:pino');
    expect(componentOfUrl(`file://${REPO}/server/observability/observability.ts`, REPO)).toBe('server/observability/observability.ts');
    expect(componentOfUrl(`file://${REPO}/dist/server/observability/observability.js`, REPO)).toBe('server/observability/observability.ts');
    expect(componentOfUrl('node:internal/streams/readable', REPO)).toBeUndefined();
    expect(componentOfUrl('', REPO)).toBeUndefined();
    expect(componentOfUrl('file:///elsewhere/x.js', REPO)).toBeUndefined();
  });
});

describe('attribute', () => {
  // root → compat/app.ts → node:internal write → (native) ; root → undici ; GC ; idle ; a lone internal
  const profile: CpuProfile = {
    startTime: 0,
    endTime: 1000,
    nodes: [
      { id: 1, callFrame: frame('(root)', ''), children: [2, 5, 6, 7, 8] },
      { id: 2, callFrame: frame('handle', `file://${REPO}/compat/app.ts`), children: [3] },
      { id: 3, callFrame: frame('write', 'node:internal/streams/writable'), children: [4] },
      { id: 4, callFrame: frame('writev', ''), children: [] },
      { id: 5, callFrame: frame('request', `file://${REPO}/node_modules/undici/index.js`), children: [] },
      { id: 6, callFrame: frame('(garbage collector)', ''), children: [] },
      { id: 7, callFrame: frame('(idle)', ''), children: [] },
      { id: 8, callFrame: frame('processTicksAndRejections', 'node:internal/process/task_queues'), children: [] },
    ],
    // Sample i lasts timeDeltas[i + 1].
    samples: [4, 2, 5, 6, 7, 8, 4],
    timeDeltas: [0, 10, 20, 30, 40, 50, 60],
  };

  it('gives Node-internal time to the nearest project file or package above it', () => {
    const totals = attribute(profile, REPO);
    // node 4 (native under node:internal under compat/app.ts): 10 + last sample 0; node 2: 20.
    expect(totals.get('compat/app.ts')).toBe(30);
    expect(totals.get('pkg:undici')).toBe(30);
    expect(totals.get(GC)).toBe(40);
    expect(totals.get(IDLE)).toBe(50);
    expect(totals.get(PROGRAM)).toBe(60);
  });

  it('divides busy time by requests and leaves idle out', () => {
    const figures = perRequest(attribute(profile, REPO), 10);
    expect(figures.map((figure) => figure.component)).not.toContain(IDLE);
    expect(figures[0]).toEqual({ component: PROGRAM, microsPerRequest: 6 });
    expect(figures.reduce((sum, figure) => sum + figure.microsPerRequest, 0)).toBe(16);
  });
});

describe('budgetTable', () => {
  it('puts each component in one row, the upstream at the bare proxy figure, the rest in gateway logic', () => {
    const table = budgetTable(
      [
        { component: 'pkg:undici', microsPerRequest: 40 },
        { component: 'server/upstream/transport.ts', microsPerRequest: 5 },
        { component: 'pkg:prom-client', microsPerRequest: 4 },
        { component: 'server/observability/observability.ts', microsPerRequest: 8 },
        { component: 'pkg:koa', microsPerRequest: 3 },
        { component: 'compat/read-body.ts', microsPerRequest: 2 },
        { component: 'server/tokenizer.ts', microsPerRequest: 7 },
        { component: GC, microsPerRequest: 12 },
      ],
      42,
    );
    const row = (prefix: string) => table.find((entry) => entry.name.startsWith(prefix))!;
    expect(row('upstream client')).toMatchObject({ microsPerRequest: 45, budget: 42, met: false });
    expect(row('observability')).toMatchObject({ microsPerRequest: 12, budget: 10, met: false });
    expect(row('Koa')).toMatchObject({ microsPerRequest: 5, met: true });
    expect(row('garbage collection')).toMatchObject({ microsPerRequest: 12, met: false });
    expect(row('gateway logic')).toMatchObject({ microsPerRequest: 7, met: true });
    expect(table.reduce((sum, entry) => sum + entry.microsPerRequest, 0)).toBe(81);
    expect(table.reduce((sum, entry) => sum + entry.budget, 0)).toBe(100 + 42);
  });
});
