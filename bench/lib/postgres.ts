/** A throw-away PostgreSQL database for the gateway target: created before, dropped after. */
import pg from 'pg';

export interface BenchDatabase {
  /** Connection string of the new database. */
  url: string;
  name: string;
  /** Process ids of the server backends connected to this database (their CPU is the gateway's too). */
  backendPids(): Promise<number[]>;
  drop(): Promise<void>;
}

function adminClient(serverUrl: string): pg.Client {
  return new pg.Client({ connectionString: serverUrl, connectionTimeoutMillis: 3000, query_timeout: 30_000 });
}

/** Creates `umg_bench_<pid>_<time>` on the server of `serverUrl` (which names a database to connect to first). */
export async function createBenchDatabase(serverUrl: string): Promise<BenchDatabase> {
  const url = new URL(serverUrl);
  if (url.hostname !== '127.0.0.1') throw new Error(`the PostgreSQL address must be 127.0.0.1, got ${url.hostname}`);
  const name = `umg_bench_${process.pid}_${Date.now().toString(36)}`;
  const client = adminClient(serverUrl);
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"`);
  } finally {
    await client.end().catch(() => undefined);
  }
  const databaseUrl = new URL(serverUrl);
  databaseUrl.pathname = `/${name}`;
  let dropped = false;
  return {
    url: databaseUrl.toString(),
    name,
    async backendPids() {
      const admin = adminClient(serverUrl);
      await admin.connect();
      try {
        const result = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [name]);
        return result.rows.map((row) => Number(row.pid));
      } finally {
        await admin.end().catch(() => undefined);
      }
    },
    async drop() {
      if (dropped) return;
      dropped = true;
      const admin = adminClient(serverUrl);
      await admin.connect();
      try {
        await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await admin.end().catch(() => undefined);
      }
    },
  };
}
