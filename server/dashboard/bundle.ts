import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../project-root.js';

/**
 * The dashboard's bundle: built by Vite from dashboard/ into dashboard/dist
 * (git-ignored). `npm start` builds it when it is missing or older than its
 * sources — judged by a hash of the sources written next to the bundle, so a
 * fresh clone (where every file has the clone's time) builds once.
 */

export const DASHBOARD_ROOT = path.join(PROJECT_ROOT, 'dashboard');
export const DASHBOARD_DIST = path.join(DASHBOARD_ROOT, 'dist');
const STAMP = path.join(DASHBOARD_DIST, '.source-hash');

function sourceFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (entry.name === 'dist' || entry.name.startsWith('dist.building-') || entry.name === 'node_modules') continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sourceFiles(full));
    else if (entry.isFile()) files.push(full);
  }
  return files;
}

/** The dashboard's sources and the gateway's router types (which the page is compiled against), as one hash. */
export function sourceHash(): string {
  const hash = createHash('sha256');
  for (const file of sourceFiles(DASHBOARD_ROOT)) {
    hash.update(path.relative(DASHBOARD_ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

export function bundleIsCurrent(): boolean {
  if (!existsSync(path.join(DASHBOARD_DIST, 'index.html')) || !existsSync(STAMP)) return false;
  return readFileSync(STAMP, 'utf8').trim() === sourceHash();
}

/** Builds the bundle unless it is current; returns whether it built. */
export async function ensureDashboardBundle(log: (message: string) => void = () => undefined): Promise<boolean> {
  if (!existsSync(DASHBOARD_ROOT) || bundleIsCurrent()) return false;
  log('Building the dashboard (dashboard/ → dashboard/dist)…');
  const started = Date.now();
  const hash = sourceHash();
  const { build } = await import('vite');
  // Built beside and moved in at once, so a gateway serving the old bundle (or a second build racing this one) never sees half of one.
  const staging = `${DASHBOARD_DIST}.building-${process.pid}-${Date.now()}`;
  // Vite and the React plugin take a production build (JSX without jsxDEV) from NODE_ENV alone: under the test runner (NODE_ENV=test) the page would not start.
  const nodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = 'production';
  try {
    await build({ configFile: path.join(DASHBOARD_ROOT, 'vite.config.ts'), root: DASHBOARD_ROOT, logLevel: 'warn', build: { outDir: staging, emptyOutDir: true } });
    writeFileSync(path.join(staging, '.source-hash'), `${hash}\n`);
    rmSync(DASHBOARD_DIST, { recursive: true, force: true });
    renameSync(staging, DASHBOARD_DIST);
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = nodeEnv;
    rmSync(staging, { recursive: true, force: true });
  }
  log(`Dashboard built in ${((Date.now() - started) / 1000).toFixed(1)} s (${statSync(path.join(DASHBOARD_DIST, 'index.html')).size} bytes of page).`);
  return true;
}
