/**
 * Scratch folders (uploads, a video's work files): a stopped gateway leaves
 * none behind, and a start removes those of dead processes of this machine
 * while it keeps a live process's (another gateway's) and those it cannot
 * judge (another machine's or PID namespace's).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { scratchOwner } from '../../server/scratch-folders.js';
import { startTestGateway } from '../support/gateway.js';
import { killSpawnedGateways, spawnGateway } from '../support/spawn-gateway.js';
import { waitFor } from '../support/wait.js';

const directories: string[] = [];

afterAll(async () => {
  await killSpawnedGateways();
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

function newDirectory(prefix: string): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), prefix));
  directories.push(directory);
  return directory;
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '']);
  return child.pid;
}

/** A scratch folder as a gateway names it, with a file in it. */
function plantFolder(parent: string, name: string): string {
  const folder = path.join(parent, name);
  mkdirSync(folder);
  writeFileSync(path.join(folder, 'upl_left'), 'left behind');
  return folder;
}

const RANDOM = 'a1b2c3d4e5f6';

describe('scratch folders of an in-process gateway', () => {
  it('removes its upload folder at stop, and at start the folders of dead pids only', async () => {
    const uploadDir = newDirectory('umg-scratch-uploads-');
    const dead = deadPid();
    const stale = plantFolder(uploadDir, `umg-uploads-${dead}-${scratchOwner()}-${RANDOM}`);
    const live = plantFolder(uploadDir, `umg-uploads-${process.pid}-${scratchOwner()}-${RANDOM}`);
    const otherOwner = scratchOwner() === '00000000' ? 'ffffffff' : '00000000';
    const foreign = plantFolder(uploadDir, `umg-uploads-${dead}-${otherOwner}-${RANDOM}`);
    // The names of earlier versions are judged only in the system's temporary folder.
    const legacyElsewhere = plantFolder(uploadDir, `umg-uploads-${dead}`);
    const unrelated = plantFolder(uploadDir, 'notes');

    const gateway = await startTestGateway({ env: { UPLOAD_DIR: uploadDir } });
    const own = gateway.gateway.services.uploads.directory;
    expect(path.dirname(own)).toBe(uploadDir);
    expect(path.basename(own)).toMatch(new RegExp(`^umg-uploads-${process.pid}-${scratchOwner()}-[0-9a-f]{12}$`));
    expect(existsSync(stale)).toBe(false);
    for (const kept of [live, foreign, legacyElsewhere, unrelated]) expect(existsSync(path.join(kept, 'upl_left')), kept).toBe(true);

    // A second gateway in this process (same pid) keeps the first one's folder.
    const second = await startTestGateway({ env: { UPLOAD_DIR: uploadDir } });
    expect(existsSync(own)).toBe(true);
    await second.close();
    expect(existsSync(second.gateway.services.uploads.directory)).toBe(false);

    await gateway.gateway.services.uploads.fromBuffer(Buffer.from('bytes'), { field: 'file', filename: 'a.wav', contentType: 'audio/wav' });
    await gateway.close();
    expect(existsSync(own)).toBe(false);
    expect(readdirSync(uploadDir).sort()).toEqual([path.basename(live), path.basename(foreign), path.basename(legacyElsewhere), 'notes'].sort());
  });
});

describe('scratch folders of a gateway process', () => {
  it('a start removes dead processes’ folders in $TMPDIR (old names too), and SIGTERM leaves none of its own', { timeout: 240_000 }, async () => {
    const tmp = newDirectory('umg-scratch-tmpdir-');
    const data = newDirectory('umg-scratch-data-');
    const dead = deadPid();
    const owner = scratchOwner();
    const stale = [
      plantFolder(tmp, `umg-uploads-${dead}-${owner}-${RANDOM}`),
      plantFolder(tmp, `umg-video-work-${dead}-${owner}-${RANDOM}`),
      plantFolder(tmp, `umg-uploads-${dead}`),
      plantFolder(tmp, `umg-video-work-${dead}-${RANDOM}`),
    ];
    const kept = [plantFolder(tmp, `umg-uploads-${process.pid}-${owner}-${RANDOM}`), plantFolder(tmp, `umg-video-work-${process.pid}-${RANDOM}`)];

    const gateway = await spawnGateway({ TMPDIR: tmp, DATA_DIR: path.join(data, 'db'), UPLOAD_DIR: '' }, { readyTimeoutMs: 180_000 });
    const pid = gateway.child.pid!;
    const own = () => readdirSync(tmp).filter((name) => name.startsWith(`umg-uploads-${pid}-`) || name.startsWith(`umg-video-work-${pid}-`));
    for (const folder of stale) expect(existsSync(folder), folder).toBe(false);
    for (const folder of kept) expect(existsSync(path.join(folder, 'upl_left')), folder).toBe(true);
    expect(own().map((name) => name.split('-').slice(0, -3).join('-')).sort()).toEqual(['umg-uploads', 'umg-video-work']);

    const exited = new Promise((resolve) => gateway.child.once('exit', (code) => resolve(code)));
    gateway.child.kill('SIGTERM');
    expect(await exited).toBe(0);
    await waitFor(() => !gateway.alive(), { message: 'the gateway to exit' });
    expect(own()).toEqual([]);
    for (const folder of kept) expect(existsSync(folder), folder).toBe(true);
  });
});
