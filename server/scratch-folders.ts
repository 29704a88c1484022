/**
 * Scratch folders: where an instance keeps files that never outlive it
 * (uploads while their request runs, a video's files on their way to
 * storage). Each is named `umg-<kind>-<pid>-<owner>-<random>`; the instance
 * removes its own at stop, and a later start removes those whose process is
 * gone (a crash, a kill).
 *
 * A folder is judged only where its pid means something: `<owner>` stands
 * for the machine and its PID namespace (containers sharing a volume have
 * their own), and a folder with another owner is never touched. A folder
 * whose pid is a live process is kept, whatever process has that pid now,
 * so that another running gateway's folder is never removed; several
 * gateways in one process each have their own folder (`<random>`).
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readlinkSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export type ScratchKind = 'uploads' | 'video-work';

const SCRATCH_NAME = /^umg-(uploads|video-work)-(\d+)-([0-9a-f]{8})-[0-9a-f]{12}$/;
/** Names of earlier versions (no owner), only ever made in the system's temporary folder. */
const LEGACY_NAME = /^umg-(?:uploads-(\d+)|video-work-(\d+)-[0-9a-f]{12})$/;

let owner: string | undefined;

/** This machine and PID namespace, as 8 hex digits. */
export function scratchOwner(): string {
  if (owner === undefined) {
    let namespace = '';
    try {
      namespace = readlinkSync('/proc/self/ns/pid');
    } catch {
      // Not Linux: the host name alone.
    }
    owner = createHash('sha256').update(`${os.hostname()}\0${namespace}`).digest('hex').slice(0, 8);
  }
  return owner;
}

/** A new scratch folder's path in `parent` (not created). */
export function scratchFolderPath(kind: ScratchKind, parent: string = os.tmpdir()): string {
  return path.join(parent, `umg-${kind}-${process.pid}-${scratchOwner()}-${randomBytes(6).toString('hex')}`);
}

/** Makes a new scratch folder in `parent` (made too when missing), readable by this user only. */
export function createScratchFolder(kind: ScratchKind, parent: string = os.tmpdir()): string {
  const folder = scratchFolderPath(kind, parent);
  mkdirSync(parent, { recursive: true });
  mkdirSync(folder, { mode: 0o700 });
  return folder;
}

export async function removeScratchFolder(folder: string): Promise<void> {
  await rm(folder, { recursive: true, force: true });
}

/** Whether `pid` is a live process (one of another user counts). */
export function isLiveProcess(pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** The pid of a scratch folder this machine may judge, from its name (undefined: not one). */
function ownPid(name: string, parent: string): number | undefined {
  const match = SCRATCH_NAME.exec(name);
  if (match) return match[3] === scratchOwner() ? Number(match[2]) : undefined;
  const legacy = path.resolve(parent) === path.resolve(os.tmpdir()) ? LEGACY_NAME.exec(name) : null;
  return legacy ? Number(legacy[1] ?? legacy[2]) : undefined;
}

/**
 * Removes the scratch folders in `parents` left by processes of this
 * machine that are gone; answers the paths removed. A missing parent, or a
 * folder that cannot be removed, is skipped.
 */
export async function removeStaleScratchFolders(parents: readonly string[]): Promise<string[]> {
  const removed: string[] = [];
  for (const parent of new Set(parents.map((folder) => path.resolve(folder)))) {
    let names: string[];
    try {
      names = await readdir(parent);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = ownPid(name, parent);
      if (pid === undefined || isLiveProcess(pid)) continue;
      const folder = path.join(parent, name);
      try {
        await removeScratchFolder(folder);
        removed.push(folder);
      } catch {
        // Another user's folder, say: left as it is.
      }
    }
  }
  return removed;
}
