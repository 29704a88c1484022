/**
 * `npm run depcheck`: the import rules of `.dependency-cruiser.cjs` (no file imports itself
 * through others, and the layers import only downward) and no folder cycle, type-only imports
 * included. Violations listed in `.dependency-cruiser-known-violations.json` are reported as
 * known and do not fail the check; anything new does. Once a known one is mended, regenerate
 * the list (`npm run depcheck -- --write-known`) so it cannot come back unnoticed.
 *
 * A folder is what a reader takes for one part: a folder under a top-level folder with all that
 * is beneath it (`server/generation/`, `routers/admin/`), or a file directly in a top-level
 * folder (`server/errors.ts`, `compat/app.ts`). Two folders that import each other, however
 * indirectly, are a folder cycle.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What depcheck reads of dependency-cruiser's JSON output. */
interface CruiseModule {
  source: string;
  coreModule?: boolean;
  couldNotResolve?: boolean;
  dependencies: Array<{ resolved: string; coreModule: boolean; couldNotResolve: boolean; dependencyTypes: string[] }>;
}

interface CruiseViolation {
  from: string;
  to: string;
  rule: { name: string; severity: string };
  cycle?: Array<{ name: string }>;
}

interface CruiseResult {
  modules: CruiseModule[];
  summary: { violations: CruiseViolation[] };
}

export interface DependencyCheckOptions {
  /** The project to check: holds the config, the tsconfig and the folders. */
  root: string;
  /** Folders (relative to `root`) to read. */
  folders: readonly string[];
  /** The dependency-cruiser configuration, relative to `root`. */
  config?: string;
  /** Violations to accept, relative to `root`; absent: none. */
  known?: string;
}

export interface DependencyCheckResult {
  /** New rule violations, one line each. */
  violations: string[];
  /** Folder cycles, one line each: the folders, then the imports that tie them. */
  folderCycles: string[];
  /** How many known violations were seen (accepted). */
  knownSeen: number;
}

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const CRUISER = path.join(PROJECT_ROOT, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');

/** dependency-cruiser's report; it exits non-zero when it finds violations, which this check judges itself. */
function cruise(root: string, folders: readonly string[], config: string, extra: readonly string[] = []): string {
  const run = spawnSync(process.execPath, [CRUISER, ...folders, '--config', config, ...extra], { cwd: root, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  if (run.error) throw run.error;
  if (!run.stdout.trim().startsWith('{') && !run.stdout.trim().startsWith('[')) {
    throw new Error(`dependency-cruiser failed (exit ${run.status}): ${run.stderr || run.stdout}`);
  }
  return run.stdout;
}

/** The folder a module belongs to (see the module comment). */
export function folderOf(source: string): string {
  const parts = source.split('/');
  return parts.length <= 2 ? source : `${parts.slice(0, 2).join('/')}/`;
}

function keyOf(from: string, to: string): string {
  return `${from}\u0000${to}`;
}

/** Strongly connected groups of more than one folder (Tarjan). */
function cyclesOf(graph: Map<string, Set<string>>): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, counter);
    low.set(node, counter);
    counter++;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return groups;
}

function readKnown(root: string, known: string | undefined): CruiseViolation[] {
  if (known === undefined) return [];
  const file = path.resolve(root, known);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as CruiseViolation[]) : [];
}

export function checkDependencies(options: DependencyCheckOptions): DependencyCheckResult {
  const config = options.config ?? '.dependency-cruiser.cjs';
  const known = readKnown(options.root, options.known);
  const knownEdges = new Set(known.map((violation) => keyOf(violation.from, violation.to)));
  const knownViolations = new Set(known.map((violation) => `${violation.rule.name}\u0000${keyOf(violation.from, violation.to)}`));
  const result = JSON.parse(cruise(options.root, options.folders, config, ['--output-type', 'json'])) as CruiseResult;

  const violations: string[] = [];
  let knownSeen = 0;
  for (const violation of result.summary.violations) {
    if (knownViolations.has(`${violation.rule.name}\u0000${keyOf(violation.from, violation.to)}`)) {
      knownSeen++;
      continue;
    }
    const through = violation.cycle && violation.cycle.length > 0 ? ` (${[violation.from, ...violation.cycle.map((step) => step.name)].join(' → ')})` : '';
    violations.push(`${violation.rule.name}: ${violation.from} → ${violation.to}${through}`);
  }

  // Folder graph of the project's own modules; an import already accepted as known is left out.
  const graph = new Map<string, Set<string>>();
  const ties = new Map<string, string[]>();
  for (const module of result.modules) {
    if (module.coreModule || module.couldNotResolve || module.source.includes('node_modules')) continue;
    const from = folderOf(module.source);
    if (!graph.has(from)) graph.set(from, new Set());
    for (const dependency of module.dependencies) {
      if (dependency.coreModule || dependency.couldNotResolve || dependency.resolved.includes('node_modules')) continue;
      if (knownEdges.has(keyOf(module.source, dependency.resolved))) continue;
      const to = folderOf(dependency.resolved);
      if (to === from) continue;
      graph.get(from)!.add(to);
      const tie = keyOf(from, to);
      if (!ties.has(tie)) ties.set(tie, []);
      ties.get(tie)!.push(`${module.source} → ${dependency.resolved}${dependency.dependencyTypes.includes('type-only') ? ' (type)' : ''}`);
    }
  }
  const folderCycles = cyclesOf(graph).map((group) => {
    const inside = group.flatMap((from) => group.filter((to) => graph.get(from)?.has(to)).map((to) => `    ${ties.get(keyOf(from, to))![0]}`));
    return `${group.join(', ')}\n${inside.join('\n')}`;
  });
  return { violations, folderCycles, knownSeen };
}

/** Writes the current violations as the known ones (after a known one was mended). */
function writeKnown(root: string, folders: readonly string[], config: string, known: string): void {
  const baseline = cruise(root, folders, config, ['--output-type', 'baseline']);
  writeFileSync(path.resolve(root, known), baseline);
}

const FOLDERS = ['server', 'routers', 'compat', 'db'];
const KNOWN = '.dependency-cruiser-known-violations.json';

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--write-known')) {
    writeKnown(PROJECT_ROOT, FOLDERS, '.dependency-cruiser.cjs', KNOWN);
    console.log(`depcheck: wrote ${KNOWN}`);
  } else {
    const result = checkDependencies({ root: PROJECT_ROOT, folders: FOLDERS, known: KNOWN });
    for (const line of result.violations) console.error(`depcheck: ${line}`);
    for (const cycle of result.folderCycles) console.error(`depcheck: folder cycle: ${cycle}`);
    const failed = result.violations.length + result.folderCycles.length;
    console.log(`depcheck: ${failed === 0 ? 'ok' : `${failed} problem(s)`}; ${result.knownSeen} known violation(s) accepted (${KNOWN})`);
    if (failed > 0) process.exitCode = 1;
  }
}
