/**
 * CPU spent by the PostgreSQL backends that serve one database, read from
 * /proc/<pid>/stat (utime + stime). Backends come and go with the gateway's
 * pool, so the sampler polls: it finds the database's backends through
 * pg_stat_activity, keeps each one's latest reading, and a backend that
 * exits keeps its last reading (CPU it spent after that last poll is lost,
 * so poll more often than backends churn). Linux only; PostgreSQL on this
 * machine only (the pids must be visible in our /proc).
 */
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import pg from 'pg';

export interface PgCpuSample {
  /** utime + stime of the backends over the sampled interval, µs. */
  cpuMicros: number;
  /** How many distinct backends were seen. */
  backends: number;
  /** Wall time of the interval, ms. */
  wallMs: number;
}

export interface PgCpuSampler {
  /** Starts a measured interval (the backends' CPU so far is the zero point). */
  start(): Promise<void>;
  /** Ends the interval and answers the CPU spent in it. */
  stop(): Promise<PgCpuSample>;
  /** Closes the sampler's own connection. */
  close(): Promise<void>;
}

function clockTicksPerSecond(): number {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** utime + stime of a process in clock ticks; undefined when it has gone. */
function readTicks(pid: number): number | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces: fields are counted after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Field 3 (state) is fields[0]; utime is field 14, stime field 15.
  return Number(fields[11]) + Number(fields[12]);
}

/**
 * `serverUrl` names any database on the server (the sampler's own backend
 * connects there and is excluded); `database` is the gateway's database.
 */
export function createPgCpuSampler(options: { serverUrl: string; database: string; pollMs?: number }): PgCpuSampler {
  const ticksPerSecond = clockTicksPerSecond();
  const client = new pg.Client({ connectionString: options.serverUrl });
  let connected: Promise<void> | undefined;
  let ownPid = 0;
  /** Per backend pid: ticks at the start of the interval (or when first seen) and the latest reading. */
  let readings = new Map<number, { first: number; last: number }>();
  let timer: NodeJS.Timeout | undefined;
  let startedAt = 0;
  let polling: Promise<void> | undefined;

  async function connect(): Promise<void> {
    connected ??= client.connect().then(async () => {
      ownPid = Number((await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid);
    });
    await connected;
  }

  async function poll(firstSeenCountsFromZero: boolean): Promise<void> {
    const result = await client.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> $2', [options.database, ownPid]);
    for (const { pid } of result.rows) {
      const ticks = readTicks(Number(pid));
      if (ticks === undefined) continue;
      const reading = readings.get(Number(pid));
      if (reading) reading.last = ticks;
      // A backend born during the interval spent all its CPU in it.
      else readings.set(Number(pid), { first: firstSeenCountsFromZero ? 0 : ticks, last: ticks });
    }
    // Backends seen before and not listed now keep their last reading.
    for (const [pid, reading] of readings) {
      const ticks = readTicks(pid);
      if (ticks !== undefined) reading.last = ticks;
    }
  }

  function schedule(): void {
    timer = setInterval(() => {
      polling ??= poll(true)
        .catch(() => undefined)
        .finally(() => {
          polling = undefined;
        });
    }, options.pollMs ?? 100);
    timer.unref();
  }

  return {
    async start() {
      await connect();
      readings = new Map();
      await poll(false);
      startedAt = Date.now();
      schedule();
    },
    async stop() {
      clearInterval(timer);
      await polling;
      await poll(true);
      let ticks = 0;
      for (const reading of readings.values()) ticks += reading.last - reading.first;
      return { cpuMicros: (ticks * 1_000_000) / ticksPerSecond, backends: readings.size, wallMs: Date.now() - startedAt };
    },
    async close() {
      clearInterval(timer);
      await client.end().catch(() => undefined);
    },
  };
}
