import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { chmodSync, closeSync, existsSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './schema.js';
import { LATEST_MIGRATION, migrationProvider } from './migrations/index.js';
import { PGlitePool } from './pglite-pool.js';

// BIGINT columns hold micro-credits and counters far below 2^53: read them as numbers.
pg.types.setTypeParser(20, (value: string) => Number(value));

export type DatabaseKind = 'postgres' | 'pglite';
export type NotificationHandler = (payload: string) => void;

/**
 * This process's subscribers per database: {@link notify} hands them the payload at once, so
 * the instance that made a change sees it before the mutation answers (the database's own
 * delivery follows, asynchronously, and is harmless a second time).
 */
const localSubscribers = new WeakMap<object, Map<string, NotificationHandler[]>>();

function subscribeLocally(db: object, channel: string, handler: NotificationHandler): void {
  let channels = localSubscribers.get(db);
  if (!channels) localSubscribers.set(db, (channels = new Map()));
  const handlers = channels.get(channel);
  if (handlers) handlers.push(handler);
  else channels.set(channel, [handler]);
}

export interface DatabaseHandle {
  db: Kysely<Database>;
  kind: DatabaseKind;
  /** Subscribes to a PostgreSQL notification channel; `onReconnect` runs when notifications may have been missed. */
  listen(channel: string, handler: NotificationHandler, onReconnect?: () => void): Promise<void>;
  close(): Promise<void>;
  /** PostgreSQL only: the pool's connections (for /metrics). */
  poolStats?: () => { total: number; idle: number; waiting: number };
  /** PGlite only: the whole cluster as a tar, to start copies from. */
  dump?: () => Promise<Blob>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  /** PGlite data directory; `memory://` for an in-memory database. */
  dataDir: string;
  poolSize?: number;
  /**
   * PostgreSQL: longest wait for a connection (a new one, or a free one of a
   * busy pool) before the query fails as unavailable (503). Default 5000 ms.
   */
  connectTimeoutMs?: number;
  log?: (event: string, fields: Record<string, unknown>) => void;
  /** Start an in-memory PGlite from this dump (`dumpDataDir`) instead of an empty cluster: much faster. */
  pgliteSnapshot?: Blob;
}

export class DataDirectoryLockedError extends Error {}

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options) : openPGlite(options.dataDir, options.pgliteSnapshot, options.log);
}

export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const LISTENER_RETRY_MIN_MS = 500;
const LISTENER_RETRY_MAX_MS = 5_000;

async function openPostgres(databaseUrl: string, options: DatabaseOptions): Promise<DatabaseHandle> {
  const connectionTimeoutMillis = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  // keepAlive: a connection whose peer vanished without a reset (a cut cable, a dead NAT entry) is noticed and dropped.
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.poolSize ?? 10, connectionTimeoutMillis, keepAlive: true });
  // pg-pool listens for errors only on idle clients (and reports them here); a
  // client lent out has no listener of its own, and a connection lost while
  // it is lent (a terminated backend, a cut network) makes it emit 'error'
  // with nobody listening, which ends the process. Every client gets a
  // permanent listener when it is created. The query under way fails with the
  // same error (a 503 for the request), and on release the pool discards the
  // broken client and opens a new one for the next borrower.
  pool.on('connect', (client) => {
    client.on('error', () => undefined);
  });
  pool.on('error', (error) => options.log?.('db.pool_error', { message: error.message }));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  let listener: pg.Client | undefined;
  const handlers = new Map<string, NotificationHandler[]>();
  const reconnectHandlers: Array<() => void> = [];
  let closed = false;
  let reconnectTimer: NodeJS.Timeout | undefined;
  let reconnectDelay = LISTENER_RETRY_MIN_MS;

  async function connectListener(): Promise<void> {
    const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis, keepAlive: true });
    client.on('notification', (message) => {
      for (const handler of handlers.get(message.channel) ?? []) handler(message.payload ?? '');
    });
    client.on('error', (error) => {
      options.log?.('db.listener_error', { message: error.message });
    });
    client.on('end', () => {
      // Only the connection in use matters; one that failed while connecting is retried by reconnectListener.
      if (listener !== client) return;
      listener = undefined;
      reconnectListener();
    });
    try {
      await client.connect();
      for (const channel of handlers.keys()) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    listener = client;
  }

  /**
   * Connects the notification client again, with a growing delay for as long
   * as the database stays away. Notifications sent meanwhile are lost, so the
   * `onReconnect` handlers (which drop caches whole) run once it is back.
   */
  function reconnectListener(): void {
    if (closed || reconnectTimer) return;
    reconnectTimer = setTimeout(() => {
      reconnectTimer = undefined;
      if (closed || listener) return;
      connectListener().then(
        () => {
          reconnectDelay = LISTENER_RETRY_MIN_MS;
          options.log?.('db.listener_reconnected', {});
          for (const handler of reconnectHandlers) handler();
        },
        (error: Error) => {
          options.log?.('db.listener_reconnect_failed', { message: error.message });
          reconnectDelay = Math.min(reconnectDelay * 2, LISTENER_RETRY_MAX_MS);
          reconnectListener();
        },
      );
    }, reconnectDelay);
    reconnectTimer.unref();
  }

  return {
    db,
    kind: 'postgres',
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async listen(channel, handler, onReconnect) {
      subscribeLocally(db, channel, handler);
      const existing = handlers.get(channel);
      if (existing) existing.push(handler);
      else handlers.set(channel, [handler]);
      if (onReconnect) reconnectHandlers.push(onReconnect);
      if (!listener) await connectListener();
      else if (!existing) await listener.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    },
    async close() {
      closed = true;
      clearTimeout(reconnectTimer);
      await listener?.end().catch(() => undefined);
      await db.destroy();
    },
  };
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * PGlite lets only one process use a data directory, and does not enforce it:
 * a lock file with the owner's pid does (a stale lock of a dead process is taken over).
 */
function lockDataDir(dataDir: string): () => void {
  const file = path.join(dataDir, 'gateway.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          unlinkSync(file);
        } catch {
          // already gone
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && isProcessAlive(owner)) {
        throw new DataDirectoryLockedError(
          `The embedded database in ${dataDir} is in use by process ${owner} (a running gateway). Stop it, or use the admin CLI without --direct to go through it.`,
        );
      }
      unlinkSync(file);
    }
  }
  throw new DataDirectoryLockedError(`Could not lock ${dataDir}`);
}

const PRIVATE_UMASK = 0o077;
/** File-backed PGlite handles open in this process, and the umask from before the first. */
let privateUmaskHolders = 0;
let umaskBeforePGlite: number | undefined;

/**
 * Makes the process umask owner-only (keeping any other bits it had) while
 * at least one file-backed PGlite is open, and gives the previous one back
 * when the last closes. Worker threads cannot change the umask: there it
 * stays, and the directory's 0700 still keeps other users out. Returns the
 * release function, idempotent.
 */
function holdPrivateUmask(): () => void {
  try {
    if (privateUmaskHolders === 0) {
      umaskBeforePGlite = process.umask(PRIVATE_UMASK);
      process.umask(umaskBeforePGlite | PRIVATE_UMASK);
    }
  } catch {
    return () => {};
  }
  privateUmaskHolders++;
  let released = false;
  return () => {
    if (released) return;
    released = true;
    privateUmaskHolders--;
    if (privateUmaskHolders === 0 && umaskBeforePGlite !== undefined) process.umask(umaskBeforePGlite);
  };
}

/**
 * Makes the data directory readable by its owner only: the directories 0700,
 * the files 0600 (symbolic links are left alone). PGlite unpacks a new
 * cluster with its files 0666 whatever the umask, and a directory made by an
 * older version may be 0755; prompts reach the WAL, so nothing in there may
 * be readable by another local user.
 */
function restrictDataDirectory(directory: string): void {
  chmodSync(directory, 0o700);
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const target = path.join(directory, entry.name);
    if (entry.isDirectory()) restrictDataDirectory(target);
    else if (entry.isFile() && (lstatSync(target).mode & 0o077) !== 0) chmodSync(target, 0o600);
  }
}

/** Restricts the data directory, or says why it could not (a directory owned by another user): a warning, not a failed start. */
function tryRestrictDataDirectory(dataDir: string, log: DatabaseOptions['log']): void {
  try {
    restrictDataDirectory(dataDir);
  } catch (error) {
    log?.('db.data_dir_permissions', { dataDir, message: (error as Error).message });
  }
}

/**
 * PostgreSQL settings of the embedded database. Its memory is a WebAssembly heap that never
 * shrinks, so what PostgreSQL reserves stays in the gateway's RSS: 16 MB of shared buffers
 * instead of 128 MB (a gateway's working set — keys, accounts, a few batches — fits well).
 */
const PGLITE_SETTINGS = ['shared_buffers=16MB'];

/**
 * Creates a new embedded cluster (initdb) in a short-lived child process: initdb grows the
 * WebAssembly heap to ~600 MB, which would stay in this process for good; opening the created
 * cluster afterwards costs about a third of that. The child inherits the private umask.
 */
async function createClusterInChild(dataDir: string): Promise<void> {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const script = 'const { PGlite } = require(process.argv[1]); PGlite.create(process.argv[2]).then((db) => db.close()).then(() => process.exit(0), (error) => { console.error(error && error.message); process.exit(1); });';
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script, entry, dataDir], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 4096) stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (exitCode) => resolve({ code: exitCode, stderr }));
  });
  if (code !== 0) throw new Error(`creating the embedded database failed (exit ${code}): ${stderr.trim()}`);
}

async function openPGlite(dataDir: string, snapshot?: Blob, log?: DatabaseOptions['log']): Promise<DatabaseHandle> {
  const { PGlite } = await import('@electric-sql/pglite');
  const inMemory = dataDir.startsWith('memory://');
  let unlock = () => {};
  let releaseUmask = () => {};
  if (!inMemory) {
    // Owner-only from the first byte: the directory is made 0700, and the files
    // PostgreSQL creates later (WAL segments, relation files, caches) get
    // 0600 through the umask, held owner-only for as long as PGlite is open.
    // It is the process's umask, so anything else the process writes
    // meanwhile is owner-only too, which suits a gateway: the only files it
    // writes are in its data directory.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    unlock = lockDataDir(dataDir);
    tryRestrictDataDirectory(dataDir, log);
    releaseUmask = holdPrivateUmask();
  }
  let pglite: InstanceType<typeof PGlite>;
  try {
    if (!inMemory && !existsSync(path.join(dataDir, 'PG_VERSION'))) await createClusterInChild(dataDir);
    pglite = await PGlite.create(inMemory ? undefined : dataDir, {
      startParams: [...PGlite.defaultStartParams, ...PGLITE_SETTINGS.flatMap((setting) => ['-c', setting])],
      parsers: { 20: (value: string) => Number(value) },
      ...(inMemory && snapshot ? { loadDataDir: snapshot } : {}),
    });
    // A new cluster was unpacked with its own (open) modes.
    if (!inMemory) tryRestrictDataDirectory(dataDir, log);
  } catch (error) {
    unlock();
    releaseUmask();
    throw new DataDirectoryLockedError(
      `Could not open the embedded database in ${dataDir} (is a gateway already running on it?): ${(error as Error).message}`,
    );
  }
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: new PGlitePool(pglite) }) });
  return {
    db,
    kind: 'pglite',
    dump: () => pglite.dumpDataDir('none'),
    async listen(channel, handler) {
      subscribeLocally(db, channel, handler);
      await pglite.listen(channel, handler);
    },
    async close() {
      await db.destroy();
      await pglite.close();
      unlock();
      releaseUmask();
    },
  };
}

export async function migrateToLatest(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((result) => result.status === 'Error');
  if (error || failed) {
    throw new Error(`Database migration failed${failed ? ` at ${failed.migrationName}` : ''}: ${String((error as Error)?.message ?? error)}`);
  }
}

/** True when the database answers and the newest migration has run (`/readyz`). */
export async function isDatabaseReady(db: Kysely<Database>): Promise<boolean> {
  try {
    const row = await sql<{ name: string }>`SELECT name FROM kysely_migration WHERE name = ${LATEST_MIGRATION}`.execute(db);
    return row.rows.length === 1;
  } catch {
    return false;
  }
}

/**
 * Sends a notification to every gateway instance; this one's subscribers on `db` receive it
 * before the promise resolves (the others when the database delivers it).
 */
export async function notify(db: Kysely<Database>, channel: string, payload: string): Promise<void> {
  await sql`SELECT pg_notify(${channel}, ${payload})`.execute(db);
  for (const handler of localSubscribers.get(db)?.get(channel) ?? []) {
    try {
      handler(payload);
    } catch {
      // A subscriber's failure is its own; the database's delivery still follows.
    }
  }
}
