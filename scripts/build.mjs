// Compiles the gateway's TypeScript (server/, routers/, db/, compat/) to
// JavaScript in dist/, file by file with esbuild (types are checked by
// `npm run typecheck`, not here). Runs on `npm ci` (postinstall) and before
// `npm start`; when the sources are unchanged since the last build (a hash of
// them is kept in dist/.source-hash) it does nothing. The build is written
// beside dist/ and moved in at once, so a gateway starting from dist/ never
// sees half of one.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE_FOLDERS = ['server', 'routers', 'db', 'compat'];
const DIST = path.join(ROOT, 'dist');
const STAMP = path.join(DIST, '.source-hash');
const quiet = process.argv.includes('--quiet');

/** The files to compile: every .ts of the source folders but tests and fixtures. */
function sources(dir) {
  const files = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== '__fixtures__') files.push(...sources(full));
    } else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') && !entry.name.endsWith('.d.ts')) {
      files.push(full);
    }
  }
  return files;
}

const files = SOURCE_FOLDERS.flatMap((folder) => sources(path.join(ROOT, folder)));
const hash = createHash('sha256');
// The sources, and what decides how they compile (this script, the compiler options).
for (const file of [...files, fileURLToPath(import.meta.url), path.join(ROOT, 'tsconfig.json')]) {
  hash.update(path.relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
}
const sourceHash = hash.digest('hex');

function isCurrent() {
  return existsSync(STAMP) && readFileSync(STAMP, 'utf8').trim() === sourceHash;
}

if (isCurrent()) {
  if (!quiet) process.stdout.write('dist/ is current.\n');
} else {
  const started = Date.now();
  const staging = `${DIST}.building-${process.pid}-${Date.now()}`;
  try {
    await build({
      entryPoints: files,
      outdir: staging,
      outbase: ROOT,
      format: 'esm',
      platform: 'node',
      target: 'node20.19',
      sourcemap: 'linked',
      logLevel: 'warning',
    });
    writeFileSync(path.join(staging, '.source-hash'), `${sourceHash}\n`);
    // Another start in this checkout may have built the same sources meanwhile: keep its dist/.
    if (!isCurrent()) {
      rmSync(DIST, { recursive: true, force: true });
      try {
        renameSync(staging, DIST);
      } catch (error) {
        if (!isCurrent()) throw error;
      }
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  if (!quiet) process.stdout.write(`Compiled ${files.length} files to dist/ in ${Date.now() - started} ms.\n`);
}
