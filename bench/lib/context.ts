/** What every mode of the bench is given. */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Child, Pinning, Resources } from './processes.js';
import { chatBody, describeExit, type Target, type TargetName } from './targets.js';

/** `json` and `stream` ask with a short prompt ("Say hello"); `json-1k` asks plainly with a ~1k-token prompt. */
export type Kind = 'json' | 'stream' | 'json-1k';
export const KINDS: readonly Kind[] = ['json', 'stream', 'json-1k'];

/** ~1,000 o200k tokens of plain English (the sentence is 10 tokens per 45 characters). */
export const LONG_PROMPT_CHARS = 4_500;

export interface BenchOptions {
  mode: 'throughput' | 'soak' | 'streams' | 'profile';
  quick: boolean;
  durationSeconds: number;
  warmupSeconds: number;
  rounds: number;
  connections: number;
  chunks: number;
  latencyMs: number;
  chunkDelayMs: number;
  /** Length of the short prompt in characters; 0 = "Say hello". */
  promptChars: number;
  ttfbRequests: number;
  kinds: Kind[];
  targets: TargetName[];
  /** --soak without --targets: fall back to gateway-pglite when PostgreSQL is unreachable. */
  soakFallback: boolean;
  soakMinutes: number;
  sampleSeconds: number;
  streams: number;
  pgUrl: string;
  pin: boolean;
  save: boolean;
}

export interface TargetStatus {
  status: 'ok' | 'failed' | 'skipped';
  error?: string;
  info?: Record<string, string>;
}

export class Bench {
  /** Targets still in the race. */
  targets: Target[] = [];
  readonly statuses = new Map<TargetName, TargetStatus>();
  private readonly bodies = new Map<string, string>();

  constructor(
    readonly options: BenchOptions,
    readonly resources: Resources,
    readonly pinning: Pinning,
    readonly repoDir: string,
    readonly benchDir: string,
    readonly tmpDir: string,
    readonly upstream: Child,
    readonly say: (line: string) => void,
  ) {}

  get loadCore(): number | undefined {
    return this.pinning.enabled ? this.pinning.loadCore : undefined;
  }

  get streamClient(): string {
    return path.join(this.benchDir, 'stream-client.ts');
  }

  /** The request body file for a target (its model name), kind and max_tokens, written once. */
  bodyFile(target: Target, kind: Kind, maxTokens = 256): string {
    const key = `${target.model}-${kind}-${maxTokens}`;
    let file = this.bodies.get(key);
    if (!file) {
      file = path.join(this.tmpDir, `body-${key}.json`);
      writeFileSync(file, chatBody(target.model, kind === 'stream', kind === 'json-1k' ? LONG_PROMPT_CHARS : this.options.promptChars, maxTokens));
      this.bodies.set(key, file);
    }
    return file;
  }

  /** Drops a target whose process died or that failed; returns false if it was not alive. */
  checkAlive(target: Target): boolean {
    if (target.child.alive) return true;
    this.fail(target.name, `${target.name} exited (${describeExit(target.child)}) during the run:\n${target.child.tail()}`);
    return false;
  }

  fail(name: TargetName, error: string): void {
    const previous = this.statuses.get(name);
    this.statuses.set(name, { ...previous, status: 'failed', error });
    // A dropped target must not keep the target core busy.
    for (const target of this.targets) if (target.name === name) void target.child.stop();
    this.targets = this.targets.filter((target) => target.name !== name);
    this.say(`  ✗ ${error}`);
  }
}
