import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * The PostgreSQL server the tests use when they need a real one: the same as
 * DATABASE_URL when that is set, otherwise the machine's server (CI provides
 * one at 127.0.0.1:5432, user postgres, trust auth).
 */
export function postgresServerUrl(): string {
  return process.env.TEST_POSTGRES_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A new, empty database on the server, dropped by `drop()`. */
export async function createTestDatabase(serverUrl = postgresServerUrl()): Promise<TestDatabase> {
  const name = `umg_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  try {
    await admin.connect();
  } catch (error) {
    // Not skipped, here or under CI: the suites that ask for a database are about PostgreSQL.
    const { hostname, port } = new URL(serverUrl);
    throw new Error(`PostgreSQL is not reachable at ${hostname || 'localhost'}:${port || 5432} (TEST_POSTGRES_URL, DATABASE_URL, or the machine's server; .ci/run starts one)`, { cause: error });
  }
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: serverUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

/** True when the suite runs on PostgreSQL (DATABASE_URL set), false on embedded PGlite. */
export const usingPostgres = Boolean(process.env.DATABASE_URL);
