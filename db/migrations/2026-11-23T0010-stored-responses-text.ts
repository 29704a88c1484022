import { sql, type Kysely } from 'kysely';

/**
 * Stored conversations as JSON text instead of jsonb: jsonb refuses a
 * `\u0000` escape and lone surrogates, which a client may legitimately send
 * inside a string; `JSON.stringify` writes both as ASCII escapes, which text
 * keeps exactly.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the schema of their own time */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE stored_responses ALTER COLUMN conversation TYPE text USING conversation::text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE stored_responses ALTER COLUMN conversation TYPE jsonb USING conversation::jsonb`.execute(db);
}
