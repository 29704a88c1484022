import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
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

export interface DatabaseHandle {
  db: Kysely<Database>;
  kind: DatabaseKind;
  /** Subscribes to a PostgreSQL notification channel; `onReconnect` runs when notifications may have been missed. */
  listen(channel: string, handler: NotificationHandler, onReconnect?: () => void): Promise<void>;
  close(): Promise<void>;
  /** PGlite only: the whole cluster as a tar, to start copies from. */
  dump?: () => Promise<Blob>;
}

export interface DatabaseOptions {
  databaseUrl?: string;
  /** PGlite data directory; `memory://` for an in-memory database. */
  dataDir: string;
  poolSize?: number;
  log?: (event: string, fields: Record<string, unknown>) => void;
  /** Start an in-memory PGlite from this dump (`dumpDataDir`) instead of an empty cluster: much faster. */
  pgliteSnapshot?: Blob;
}

export class DataDirectoryLockedError extends Error {}

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options) : openPGlite(options.dataDir, options.pgliteSnapshot);
}

async function openPostgres(databaseUrl: string, options: DatabaseOptions): Promise<DatabaseHandle> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: options.poolSize ?? 10 });
  pool.on('error', (error) => options.log?.('db.pool_error', { message: error.message }));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  let listener: pg.Client | undefined;
  const handlers = new Map<string, NotificationHandler[]>();
  const reconnectHandlers: Array<() => void> = [];
  let closed = false;

  async function connectListener(): Promise<void> {
    const client = new pg.Client({ connectionString: databaseUrl });
    client.on('notification', (message) => {
      for (const handler of handlers.get(message.channel) ?? []) handler(message.payload ?? '');
    });
    client.on('error', (error) => {
      options.log?.('db.listener_error', { message: error.message });
    });
    client.on('end', () => {
      if (closed) return;
      listener = undefined;
      setTimeout(() => {
        connectListener()
          .then(() => reconnectHandlers.forEach((handler) => handler()))
          .catch((error: Error) => options.log?.('db.listener_reconnect_failed', { message: error.message }));
      }, 500).unref();
    });
    await client.connect();
    for (const channel of handlers.keys()) await client.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    listener = client;
  }

  return {
    db,
    kind: 'postgres',
    async listen(channel, handler, onReconnect) {
      const existing = handlers.get(channel);
      if (existing) existing.push(handler);
      else handlers.set(channel, [handler]);
      if (onReconnect) reconnectHandlers.push(onReconnect);
      if (!listener) await connectListener();
      else if (!existing) await listener.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    },
    async close() {
      closed = true;
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

async function openPGlite(dataDir: string, snapshot?: Blob): Promise<DatabaseHandle> {
  const { PGlite } = await import('@electric-sql/pglite');
  const inMemory = dataDir.startsWith('memory://');
  let unlock = () => {};
  if (!inMemory) {
    mkdirSync(dataDir, { recursive: true });
    unlock = lockDataDir(dataDir);
  }
  let pglite: InstanceType<typeof PGlite>;
  try {
    pglite = await PGlite.create(inMemory ? undefined : dataDir, {
      parsers: { 20: (value: string) => Number(value) },
      ...(inMemory && snapshot ? { loadDataDir: snapshot } : {}),
    });
  } catch (error) {
    unlock();
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
      await pglite.listen(channel, handler);
    },
    async close() {
      await db.destroy();
      await pglite.close();
      unlock();
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

/** Sends a notification to every gateway instance (including this one). */
export async function notify(db: Kysely<Database>, channel: string, payload: string): Promise<void> {
  await sql`SELECT pg_notify(${channel}, ${payload})`.execute(db);
}
