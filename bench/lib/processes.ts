/**
 * Child processes of the bench: started pinned to a core, their output kept (the last few KB) for
 * error messages, and all stopped on exit. Every child runs in its own process group so that the
 * bench decides the order of shutdown, and (where `setpriv` exists) gets SIGTERM if the bench
 * itself dies without cleaning up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { which } from './system.js';

const TAIL_BYTES = 16 * 1024;

export interface Pinning {
  /** Whether processes are pinned at all (needs taskset and two cores). */
  enabled: boolean;
  /** Core of the measured target. */
  targetCore: number;
  /** Core of the load generator, the upstream and the bench's own clients. */
  loadCore: number;
}

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Core to pin to; undefined = not pinned. */
  core?: number;
  /** Called with each line written on stdout. */
  onLine?: (line: string) => void;
}

export class Child {
  readonly name: string;
  readonly process: ChildProcess;
  readonly pid: number;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exitStatus: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private output = '';
  private pending = '';

  constructor(options: StartOptions, processHandle: ChildProcess) {
    this.name = options.name;
    this.process = processHandle;
    if (processHandle.pid === undefined) throw new Error(`${options.name}: could not start ${options.command}`);
    this.pid = processHandle.pid;
    const keep = (chunk: Buffer) => {
      this.output += chunk.toString('utf8');
      if (this.output.length > TAIL_BYTES * 2) this.output = this.output.slice(-TAIL_BYTES);
    };
    processHandle.stdout?.on('data', (chunk: Buffer) => {
      keep(chunk);
      if (!options.onLine) return;
      this.pending += chunk.toString('utf8');
      let newline: number;
      while ((newline = this.pending.indexOf('\n')) >= 0) {
        const line = this.pending.slice(0, newline);
        this.pending = this.pending.slice(newline + 1);
        options.onLine(line);
      }
      if (this.pending.length > TAIL_BYTES) this.pending = this.pending.slice(-TAIL_BYTES);
    });
    processHandle.stderr?.on('data', keep);
    this.exited = new Promise((resolve) => {
      // 'close' comes once its output has been read to the end; a grandchild keeping the pipes
      // open must not hold that up for long, hence the timer after 'exit'.
      let closed = false;
      processHandle.once('close', () => {
        closed = true;
        if (this.exitStatus) resolve(this.exitStatus);
      });
      processHandle.once('exit', (code, signal) => {
        this.exitStatus = { code, signal };
        if (closed) resolve(this.exitStatus);
        else setTimeout(() => resolve({ code, signal }), 1000).unref();
      });
      processHandle.once('error', () => {
        this.exitStatus ??= { code: null, signal: null };
        resolve(this.exitStatus);
      });
    });
  }

  get alive(): boolean {
    return this.exitStatus === undefined;
  }

  /** The last lines of its stdout and stderr, for error messages. */
  tail(lines = 20): string {
    return this.output.trimEnd().split('\n').slice(-lines).join('\n');
  }

  /** Sends a signal to its whole process group. */
  signal(signal: NodeJS.Signals): void {
    if (!this.alive) return;
    try {
      process.kill(-this.pid, signal);
    } catch {
      try {
        this.process.kill(signal);
      } catch {
        // already gone
      }
    }
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.alive) return;
    this.signal('SIGTERM');
    const timer = setTimeout(() => this.signal('SIGKILL'), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Keeps every child and temporary directory so that they can all be removed, also on failures. */
export class Resources {
  private readonly children = new Set<Child>();
  private readonly directories = new Set<string>();
  private readonly finalizers: { name: string; run: () => Promise<void>; done?: boolean }[] = [];
  private readonly setpriv = which('setpriv');
  private readonly taskset = which('taskset');
  private cleaning: Promise<void> | undefined;

  constructor(readonly pinning: Pinning) {}

  /** True once clean-up has begun: no new child may start. */
  get closing(): boolean {
    return this.cleaning !== undefined;
  }

  start(options: StartOptions): Child {
    if (this.cleaning) throw new Error('the bench is stopping');
    const prefix: string[] = [];
    if (options.core !== undefined && this.pinning.enabled && this.taskset) prefix.push(this.taskset, '-c', String(options.core));
    if (this.setpriv) prefix.push(this.setpriv, '--pdeathsig', 'TERM');
    const [command, ...args] = [...prefix, options.command, ...options.args];
    const handle = spawn(command!, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const child = new Child(options, handle);
    this.children.add(child);
    void child.exited.then(() => this.children.delete(child));
    return child;
  }

  /** Children still running. */
  running(): Child[] {
    return [...this.children].filter((child) => child.alive);
  }

  addDirectory(directory: string): void {
    this.directories.add(directory);
  }

  /** Async clean-up work (e.g. dropping a database), run after the children have stopped, last added first. */
  addFinalizer(name: string, run: () => Promise<void>): void {
    this.finalizers.push({ name, run });
  }

  /** Stops every child, runs the finalizers, removes the directories. Safe to call more than once. */
  cleanup(): Promise<void> {
    this.cleaning ??= (async () => {
      await Promise.all([...this.children].map((child) => child.stop()));
      for (const finalizer of [...this.finalizers].reverse()) {
        try {
          await withTimeout(finalizer.run(), 15_000, `${finalizer.name} timed out`);
          finalizer.done = true;
        } catch (error) {
          process.stderr.write(`bench: clean-up "${finalizer.name}" failed: ${(error as Error).message}\n`);
        }
      }
      this.removeDirectories();
    })();
    return this.cleaning;
  }

  /** Last resort on process exit: kill what is left, remove directories (synchronous). Returns finalizers not run. */
  cleanupSync(): string[] {
    for (const child of this.children) child.signal('SIGKILL');
    this.removeDirectories();
    return this.finalizers.filter((finalizer) => !finalizer.done).map((finalizer) => finalizer.name);
  }

  private removeDirectories(): void {
    for (const directory of this.directories) {
      try {
        rmSync(directory, { recursive: true, force: true });
      } catch {
        // best effort
      }
      this.directories.delete(directory);
    }
  }
}

export function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Runs a command to completion (bounded by `timeoutMs`), returning its exit code and output. */
export async function runToEnd(
  resources: Resources,
  options: StartOptions & { timeoutMs: number },
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; output: string; timedOut: boolean }> {
  let stdout = '';
  const child = resources.start({
    ...options,
    onLine: (line) => {
      stdout += `${line}\n`;
      options.onLine?.(line);
    },
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.signal('SIGTERM');
    setTimeout(() => child.signal('SIGKILL'), 3000).unref();
  }, options.timeoutMs);
  const status = await child.exited;
  clearTimeout(timer);
  return { ...status, stdout, output: child.tail(40), timedOut };
}
