/**
 * The embedded database's files hold prompt text (the WAL) and the admin
 * token: after a start under the usual umask 022, nothing in the data
 * directory may be readable by another local user.
 */
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../server/config.js';
import { startGateway } from '../../server/gateway.js';
import { createLogger } from '../../server/logger.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'umg-permissions-'));

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** Every entry under `directory` with its permission bits, symbolic links left out. */
function listModes(directory: string): Array<{ path: string; kind: 'file' | 'directory'; mode: number }> {
  const entries: Array<{ path: string; kind: 'file' | 'directory'; mode: number }> = [{ path: directory, kind: 'directory', mode: lstatSync(directory).mode & 0o777 }];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const target = path.join(directory, entry.name);
    if (entry.isDirectory()) entries.push(...listModes(target));
    else if (entry.isFile()) entries.push({ path: target, kind: 'file', mode: lstatSync(target).mode & 0o777 });
  }
  return entries;
}

describe('the PGlite data directory', () => {
  it('is 0700 with files 0600 after a start and some writes under umask 022, an older open directory included', async () => {
    const dataDir = path.join(root, 'data');
    // A directory left open by an earlier version, with a stray file in it.
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    writeFileSync(path.join(dataDir, 'notes.txt'), 'old', { mode: 0o644 });
    const previousUmask = process.umask(0o022);
    try {
      const config = {
        ...readConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', GATEWAY_DEMO: '0', LOG_LEVEL: 'silent' }),
        createDemoAccount: true,
      };
      const gateway = await startGateway(config, { logger: createLogger('silent'), env: {} });
      expect(gateway.demoKey).toBeDefined();
      // A request writes a usage row (and so the WAL) with prompt text.
      const answer = await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${gateway.demoKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock-chat', messages: [{ role: 'user', content: 'a private prompt' }] }),
      });
      expect(answer.status).toBe(200);
      await gateway.services.billing.flush();
      await gateway.stop();
      // The umask was owner-only while PGlite was open, and is the process's own again after.
      expect(process.umask(0o022)).toBe(0o022);
    } finally {
      process.umask(previousUmask);
    }

    const entries = listModes(dataDir);
    expect(entries.filter((entry) => entry.kind === 'file').length).toBeGreaterThan(100);
    expect(entries.some((entry) => entry.path.endsWith('admin-token'))).toBe(true);
    const open = entries.filter((entry) => entry.mode !== (entry.kind === 'file' ? 0o600 : 0o700));
    expect(open.map((entry) => `${entry.mode.toString(8)} ${path.relative(root, entry.path)}`)).toEqual([]);
  }, 180_000);
});
