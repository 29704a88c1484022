import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the schema of their own time */

/** Request counters per API key and one-minute window, for the database rate limiter (no Redis). */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rate_limits')
    .addColumn('key_id', 'text', (col) => col.notNull())
    .addColumn('window_start', 'timestamptz', (col) => col.notNull())
    .addColumn('count', 'integer', (col) => col.notNull().defaultTo(0))
    .addPrimaryKeyConstraint('rate_limits_pk', ['key_id', 'window_start'])
    .execute();
  // Pruning deletes by window alone, across all keys.
  await db.schema.createIndex('rate_limits_window_idx').on('rate_limits').column('window_start').execute();
  // Every check writes here: an unlogged table skips the write-ahead log. A crash empties it,
  // which only forgets the current minute's counts.
  await sql`ALTER TABLE rate_limits SET UNLOGGED`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rate_limits').ifExists().execute();
}
