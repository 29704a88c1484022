import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the schema of their own time */

/**
 * Settlement writes each usage row once, and one ledger entry per account and
 * batch. `ledger.uncharged` records the part of an entry's usage cost the
 * balance could not cover (balances never go negative), so Σ usage costs =
 * Σ charges + Σ uncharged. A usage row is looked up only by its request id
 * (idempotent inserts) and by account and time (/v1/usage): the request id
 * becomes the primary key and the serial id loses its index (one index less
 * to write per request; it still orders rows of the same instant).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE ledger ADD COLUMN uncharged bigint NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE usage DROP CONSTRAINT usage_pkey, DROP CONSTRAINT usage_request_id_key, ADD CONSTRAINT usage_pkey PRIMARY KEY (request_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE usage DROP CONSTRAINT usage_pkey, ADD CONSTRAINT usage_request_id_key UNIQUE (request_id), ADD CONSTRAINT usage_pkey PRIMARY KEY (id)`.execute(db);
  await sql`ALTER TABLE ledger DROP COLUMN uncharged`.execute(db);
}
