/**
 * The migration that brings grants (2026-11-24T0100-restricted-family) turns the old
 * account-wide `restricted_access` flag into a grant on the legacy `restricted` family, so an
 * account that had access keeps it, on a database migrated step by step (PostgreSQL when the
 * suite runs with DATABASE_URL, PGlite otherwise).
 */
import { Migrator, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../../db/client.js';
import { migrationProvider } from '../../db/migrations/index.js';
import { createTestDatabase, usingPostgres, type TestDatabase } from '../support/database.js';

let database: DatabaseHandle;
let postgres: TestDatabase | undefined;

beforeAll(async () => {
  postgres = usingPostgres ? await createTestDatabase() : undefined;
  database = await openDatabase(postgres ? { databaseUrl: postgres.url, dataDir: 'memory://' } : { dataDir: 'memory://' });
});

afterAll(async () => {
  await database?.close();
  await postgres?.drop();
});

describe('the restricted-family migration', () => {
  it('keeps the access of accounts that held the legacy flag, as a grant', async () => {
    const migrator = new Migrator({ db: database.db, provider: migrationProvider });
    const before = await migrator.migrateTo('2026-11-23T0200-videos');
    expect(before.error).toBeUndefined();
    await sql`INSERT INTO accounts (id, name, plan, restricted_access, last_reset, ip_allowlist) VALUES
      ('acct_flag', 'flag', 'pro', true, now(), '[]'), ('acct_plain', 'plain', 'pro', false, now(), '[]')`.execute(database.db);
    await migrateToLatest(database.db);
    const grants = await database.db.selectFrom('access_grants').selectAll().execute();
    expect(grants).toEqual([
      expect.objectContaining({ account_id: 'acct_flag', family: 'restricted', granted_by: 'migration', revoked_at: null, expires_at: null }),
    ]);
  });
});
