/** Linux facts the bench reads: memory and CPU time of a process, per-core busy time, tools on PATH. */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';

export interface Memory {
  /** Resident set size now, in KiB. */
  rssKb: number;
  /** The process's resident high-water mark, in KiB. */
  hwmKb: number;
}

/** VmRSS and VmHWM from /proc/<pid>/status; undefined once the process is gone. */
export function readMemory(pid: number): Memory | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
    return match ? Number(match[1]) : Number.NaN;
  };
  return { rssKb: field('VmRSS'), hwmKb: field('VmHWM') };
}

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU time of a process (all its threads), in seconds; undefined once it is gone. */
export function readCpuSeconds(pid: number): number | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces; the fields after its closing parenthesis do not.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // fields[0] is field 3 (state); utime and stime are fields 14 and 15.
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  return (utime + stime) / clockTicks();
}

export interface CoreTimes {
  busy: number;
  total: number;
}

/** Busy and total jiffies of each core, from /proc/stat. */
export function readCoreTimes(): Map<number, CoreTimes> {
  const cores = new Map<number, CoreTimes>();
  let text = '';
  try {
    text = readFileSync('/proc/stat', 'utf8');
  } catch {
    return cores;
  }
  for (const line of text.split('\n')) {
    const match = /^cpu(\d+)\s+(.*)$/.exec(line);
    if (!match) continue;
    const values = match[2]!.trim().split(/\s+/).map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already inside user).
    const total = values.slice(0, 8).reduce((sum, value) => sum + value, 0);
    const idle = (values[3] ?? 0) + (values[4] ?? 0);
    cores.set(Number(match[1]), { busy: total - idle, total });
  }
  return cores;
}

/** Busy share (0–100) of each core between two readings. */
export function coreBusyPercent(before: Map<number, CoreTimes>, after: Map<number, CoreTimes>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [core, end] of after) {
    const start = before.get(core);
    if (!start) continue;
    const total = end.total - start.total;
    out[`cpu${core}`] = total > 0 ? (100 * (end.busy - start.busy)) / total : 0;
  }
  return out;
}

/** Cores this process may run on. */
export function cpuCount(): number {
  return typeof os.availableParallelism === 'function' ? os.availableParallelism() : os.cpus().length;
}

/** Finds an executable on PATH. */
export function which(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, command);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A TCP port free on 127.0.0.1 right now (the kernel picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
