import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the schema of their own time */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('videos')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('key_id', 'text')
    .addColumn('request_id', 'text', (col) => col.notNull())
    .addColumn('model', 'text', (col) => col.notNull())
    .addColumn('prompt', 'text', (col) => col.notNull())
    .addColumn('size', 'text', (col) => col.notNull())
    .addColumn('seconds', 'double precision', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull().defaultTo('pending'))
    .addColumn('error', 'text')
    .addColumn('progress', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('duration', 'double precision')
    .addColumn('discount_percentage', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('input_reference', 'jsonb')
    .addColumn('assets', 'jsonb')
    .addColumn('provider_id', 'text')
    .addColumn('upstream_model', 'text')
    .addColumn('provider_job_id', 'text')
    .addColumn('attempts', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('polls', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('run_after', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('completed_at', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('videos_status_known', sql`status IN ('pending', 'processing', 'completed', 'failed')`)
    .execute();
  await db.schema.createIndex('videos_account_created_idx').on('videos').columns(['account_id', 'created_at', 'id']).execute();
  // What the workers look for: unfinished jobs by the time they are due.
  await sql`CREATE INDEX videos_due_idx ON videos (run_after) WHERE status IN ('pending', 'processing')`.execute(db);

  // GAPS.md "Videos": pending → processing → completed, pending → failed,
  // processing → failed; nothing leaves completed or failed. The queries only
  // move along these (UPDATE … WHERE status IN …); this refuses any other move
  // whatever code runs it.
  await sql`
    CREATE FUNCTION videos_check_transition() RETURNS trigger AS $$
    BEGIN
      IF NEW.status <> OLD.status AND NOT (
        (OLD.status = 'pending' AND NEW.status IN ('processing', 'failed')) OR
        (OLD.status = 'processing' AND NEW.status IN ('completed', 'failed'))
      ) THEN
        RAISE EXCEPTION 'video % cannot move from % to %', OLD.id, OLD.status, NEW.status;
      END IF;
      RETURN NEW;
    END
    $$ LANGUAGE plpgsql`.execute(db);
  await sql`CREATE TRIGGER videos_transition BEFORE UPDATE OF status ON videos FOR EACH ROW EXECUTE FUNCTION videos_check_transition()`.execute(db);

  await db.schema
    .createTable('job_holds')
    .addColumn('job_id', 'text', (col) => col.primaryKey())
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('amount', 'bigint', (col) => col.notNull())
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('job_holds_amount_positive', sql`amount > 0`)
    .execute();
  await db.schema.createIndex('job_holds_account_idx').on('job_holds').column('account_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('job_holds').ifExists().execute();
  await db.schema.dropTable('videos').ifExists().execute();
  await sql`DROP FUNCTION IF EXISTS videos_check_transition()`.execute(db);
}
