/**
 * The PostgreSQL handle when connections go away: a backend terminated under
 * a borrowed client must not end the process, the pool must open new
 * connections, connects to an unreachable server must give up within the
 * connect timeout, and the notification client must come back by itself.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/support/database.js';
import { startTcpProxy, type TcpProxy } from '../test/support/tcp-proxy.js';
import { waitFor } from '../test/support/wait.js';
import { openDatabase, type DatabaseHandle } from './client.js';
import { isDatabaseUnavailable } from './errors.js';

let database: TestDatabase;
let admin: pg.Client;
const handles: DatabaseHandle[] = [];
const proxies: TcpProxy[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  admin = new pg.Client({ connectionString: database.url });
  await admin.connect();
});

afterAll(async () => {
  for (const handle of handles) await handle.close().catch(() => undefined);
  for (const proxy of proxies) await proxy.close();
  await admin?.end();
  await database?.drop();
});

async function open(url = database.url, connectTimeoutMs = 2_000): Promise<{ handle: DatabaseHandle; events: string[] }> {
  const events: string[] = [];
  const handle = await openDatabase({ databaseUrl: url, dataDir: '', poolSize: 4, connectTimeoutMs, log: (event) => events.push(event) });
  handles.push(handle);
  return { handle, events };
}

/** Terminates every other backend of the test database, as an operator or a failover would. */
async function terminateBackends(): Promise<number> {
  const { rows } = await admin.query<{ terminated: boolean }>(
    'SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
  );
  return rows.length;
}

async function backendCount(): Promise<number> {
  const { rows } = await admin.query<{ count: number }>('SELECT count(*)::int AS count FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  return rows[0].count;
}

function proxiedUrl(proxy: TcpProxy): string {
  const url = new URL(database.url);
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  return url.toString();
}

describe('the PostgreSQL pool when backends are terminated', () => {
  it('fails the borrowed client\'s work as "unavailable", keeps the process alive and serves the next queries on new connections', async () => {
    const { handle } = await open();
    const { db } = handle;
    // Borrowed by a transaction and idle between two statements: exactly the client pg-pool leaves without an error listener.
    const outcome = db.transaction().execute(async (trx) => {
      await sql`SELECT 1`.execute(trx);
      expect(await terminateBackends()).toBeGreaterThan(0);
      await waitFor(async () => (await backendCount()) === 0, { timeoutMs: 10_000, message: 'the backends to end' });
      await sql`SELECT 2`.execute(trx);
    });
    const failure = await outcome.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeDefined();
    expect(isDatabaseUnavailable(failure)).toBe(true);
    // The pool drops the broken client and opens a fresh connection.
    const { rows } = await sql<{ answer: number }>`SELECT 40 + 2 AS answer`.execute(db);
    expect(rows[0].answer).toBe(42);
  });

  it('survives repeated terminations under concurrent queries', async () => {
    const { handle } = await open();
    const { db } = handle;
    let running = true;
    const failures: unknown[] = [];
    let successes = 0;
    const worker = async () => {
      while (running) {
        try {
          await db.transaction().execute(async (trx) => {
            await sql`SELECT pg_sleep(0.005)`.execute(trx);
            await sql`SELECT 1`.execute(trx);
          });
          successes++;
        } catch (error) {
          failures.push(error);
        }
      }
    };
    const workers = Array.from({ length: 6 }, worker);
    for (let round = 0; round < 3; round++) {
      const before = successes;
      await waitFor(() => successes >= before + 10, { timeoutMs: 20_000, message: 'queries to succeed again' });
      await terminateBackends();
    }
    const before = successes;
    await waitFor(() => successes >= before + 10, { timeoutMs: 20_000, message: 'queries to succeed after the last termination' });
    running = false;
    await Promise.all(workers);
    expect(failures.length).toBeGreaterThan(0);
    // Every failure is one the gateway answers 503, none a surprise.
    expect(failures.filter((error) => !isDatabaseUnavailable(error))).toEqual([]);
  });

  it('reconnects the notification client and reports that notifications may have been missed', async () => {
    const { handle, events } = await open();
    const received: string[] = [];
    let reconnects = 0;
    await handle.listen('umg_test_channel', (payload) => received.push(payload), () => reconnects++);
    await sql`SELECT pg_notify('umg_test_channel', 'before')`.execute(handle.db);
    await waitFor(() => received.includes('before'), { message: 'the first notification' });
    await terminateBackends();
    await waitFor(() => reconnects === 1, { timeoutMs: 20_000, message: 'the listener to reconnect' });
    expect(events).toContain('db.listener_reconnected');
    await sql`SELECT pg_notify('umg_test_channel', 'after')`.execute(handle.db);
    await waitFor(() => received.includes('after'), { message: 'a notification after the reconnect' });
  });
});

describe('the PostgreSQL pool when the server is unreachable', () => {
  it('fails fast while the port is closed, gives up after the connect timeout on a silent network, keeps retrying the listener, and recovers', async () => {
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(database.url).port || 5432) });
    proxies.push(proxy);
    const { handle, events } = await open(proxiedUrl(proxy), 500);
    let reconnects = 0;
    await handle.listen('umg_test_outage', () => undefined, () => reconnects++);
    await sql`SELECT 1`.execute(handle.db);

    await proxy.stop();
    const refused = await sql`SELECT 1`.execute(handle.db).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isDatabaseUnavailable(refused)).toBe(true);

    // Connections are accepted and never answered: only the pool's connect timeout ends the wait.
    await proxy.blackhole();
    const silent = await sql`SELECT 1`.execute(handle.db).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isDatabaseUnavailable(silent)).toBe(true);
    expect(String((silent as Error).message)).toMatch(/timeout/);

    await waitFor(() => events.includes('db.listener_reconnect_failed'), { timeoutMs: 20_000, message: 'a failed listener reconnect' });
    await proxy.start();
    await waitFor(() => reconnects === 1, { timeoutMs: 30_000, message: 'the listener to reconnect after the outage' });
    const { rows } = await sql<{ answer: number }>`SELECT 42 AS answer`.execute(handle.db);
    expect(rows[0].answer).toBe(42);
  });
});
