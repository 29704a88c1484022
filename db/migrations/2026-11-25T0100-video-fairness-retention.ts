import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the schema of their own time */

/**
 * Fair video jobs and the retention of finished videos' files:
 * - the claim and the create count an account's unfinished videos
 *   (`videos_unfinished_account_idx`);
 * - `expires_at`: when a finished video's files are (or were) deleted; set at
 *   completion (and failure: a failed video may still hold its input
 *   reference) from `VIDEO_RETENTION_HOURS`, null while they are kept for ever;
 *   the sweep looks for passed ones among the videos that still have files.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('videos').addColumn('expires_at', 'timestamptz').execute();
  await sql`CREATE INDEX videos_unfinished_account_idx ON videos (account_id) WHERE status IN ('pending', 'processing')`.execute(db);
  await sql`CREATE INDEX videos_expiry_idx ON videos (expires_at) WHERE assets IS NOT NULL OR input_reference IS NOT NULL`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP INDEX IF EXISTS videos_expiry_idx`.execute(db);
  await sql`DROP INDEX IF EXISTS videos_unfinished_account_idx`.execute(db);
  await db.schema.alterTable('videos').dropColumn('expires_at').execute();
}
