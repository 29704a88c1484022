/**
 * The peer gateway (Portkey's open-source gateway) is no dependency of the project: the bench
 * installs it on first use into bench/.peer/ from bench/peer/package.json, and again whenever that
 * file changes.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { runToEnd, type Resources } from './processes.js';

export const PEER_ENTRY = 'node_modules/@portkey-ai/gateway/build/start-server.js';

/** Returns the path of the peer's start script, installing it first if needed. */
export async function ensurePeer(resources: Resources, benchDir: string, say: (line: string) => void): Promise<string> {
  const manifest = path.join(benchDir, 'peer', 'package.json');
  const prefix = path.join(benchDir, '.peer');
  const installedManifest = path.join(prefix, 'package.json');
  // Written only after a successful install, with the manifest it was made from.
  const stamp = path.join(prefix, '.installed-from.json');
  const entry = path.join(prefix, PEER_ENTRY);
  const wanted = readFileSync(manifest, 'utf8');
  const current = existsSync(stamp) ? readFileSync(stamp, 'utf8') : undefined;
  if (current === wanted && existsSync(entry)) return entry;

  say(`Installing the peer gateway into ${path.relative(process.cwd(), prefix) || prefix} (first run only)…`);
  mkdirSync(prefix, { recursive: true });
  rmSync(stamp, { force: true });
  copyFileSync(manifest, installedManifest);
  const result = await runToEnd(resources, {
    name: 'npm install (peer)',
    command: 'npm',
    args: ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--loglevel', 'error'],
    cwd: prefix,
    timeoutMs: 5 * 60_000,
  });
  if (result.code !== 0 || !existsSync(entry)) {
    throw new Error(`installing the peer gateway failed${result.timedOut ? ' (timed out)' : ''}:\n${result.output}`);
  }
  const installed = JSON.parse(readFileSync(path.join(prefix, 'node_modules/@portkey-ai/gateway/package.json'), 'utf8')) as { version: string };
  const server = JSON.parse(readFileSync(path.join(prefix, 'node_modules/@hono/node-server/package.json'), 'utf8')) as { version: string };
  writeFileSync(stamp, wanted);
  say(`Installed @portkey-ai/gateway ${installed.version} with @hono/node-server ${server.version}.`);
  return entry;
}

export function peerVersions(benchDir: string): Record<string, string> {
  const read = (name: string) => {
    try {
      return (JSON.parse(readFileSync(path.join(benchDir, '.peer/node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      return 'unknown';
    }
  };
  return { '@portkey-ai/gateway': read('@portkey-ai/gateway'), '@hono/node-server': read('@hono/node-server') };
}
