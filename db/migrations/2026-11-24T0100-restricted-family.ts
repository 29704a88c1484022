import { sql, type Kysely } from 'kysely';

/**
 * The restricted model family (SPEC "What the service does"): access grants per account and
 * family, and the staff review queue of flagged or rejected usage checks with the actions taken.
 */
/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the schema of their own time */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('access_grants')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('family', 'text', (col) => col.notNull())
    .addColumn('granted_by', 'text', (col) => col.notNull())
    .addColumn('granted_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('expires_at', 'timestamptz')
    .addColumn('note', 'text')
    .addColumn('revoked_at', 'timestamptz')
    .addColumn('revoked_by', 'text')
    .addColumn('revoke_note', 'text')
    .execute();
  // At most one unrevoked grant per account and family; revoked ones stay as history.
  await sql`CREATE UNIQUE INDEX access_grants_current_idx ON access_grants (account_id, family) WHERE revoked_at IS NULL`.execute(db);
  await db.schema.createIndex('access_grants_family_idx').on('access_grants').columns(['family', 'account_id']).execute();

  await db.schema
    .createTable('usage_reviews')
    .addColumn('id', 'text', (col) => col.primaryKey())
    // Keyset order of the queue (newest first) and the cursor of its pages.
    .addColumn('seq', 'bigserial', (col) => col.notNull().unique())
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('key_id', 'text')
    .addColumn('model', 'text', (col) => col.notNull())
    .addColumn('family', 'text', (col) => col.notNull())
    .addColumn('endpoint', 'text', (col) => col.notNull())
    .addColumn('request_id', 'text', (col) => col.notNull())
    .addColumn('client_address', 'text')
    .addColumn('decision', 'text', (col) => col.notNull())
    .addColumn('rule_id', 'text')
    .addColumn('matched_rules', 'jsonb', (col) => col.notNull())
    .addColumn('categories', 'jsonb', (col) => col.notNull())
    .addColumn('scores', 'jsonb', (col) => col.notNull())
    .addColumn('roleplay', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('excerpt', 'text', (col) => col.notNull())
    .addColumn('status', 'text', (col) => col.notNull().defaultTo('open'))
    .addColumn('resolution', 'text')
    .addColumn('resolved_by', 'text')
    .addColumn('resolved_at', 'timestamptz')
    .addColumn('resolution_note', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('usage_reviews_decision_known', sql`decision IN ('flag', 'reject')`)
    .addCheckConstraint('usage_reviews_status_known', sql`status IN ('open', 'resolved')`)
    // SPEC limits: a prompt excerpt of up to 400 characters, whatever code writes it.
    .addCheckConstraint('usage_reviews_excerpt_short', sql`char_length(excerpt) <= 400`)
    .execute();
  await db.schema.createIndex('usage_reviews_status_idx').on('usage_reviews').columns(['status', 'seq']).execute();
  await db.schema.createIndex('usage_reviews_account_idx').on('usage_reviews').columns(['account_id', 'seq']).execute();

  await db.schema
    .createTable('usage_review_actions')
    .addColumn('id', 'bigserial', (col) => col.primaryKey())
    .addColumn('review_id', 'text', (col) => col.notNull().references('usage_reviews.id'))
    .addColumn('account_id', 'text', (col) => col.notNull())
    .addColumn('action', 'text', (col) => col.notNull())
    .addColumn('actor', 'text', (col) => col.notNull())
    .addColumn('note', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('usage_review_actions_known', sql`action IN ('dismiss', 'warn', 'revoke_grant', 'disable_account')`)
    .execute();
  await db.schema.createIndex('usage_review_actions_review_idx').on('usage_review_actions').columns(['review_id', 'id']).execute();
  await db.schema.createIndex('usage_review_actions_account_idx').on('usage_review_actions').columns(['account_id', 'action']).execute();

  // Access now comes from grants: an account that held the old account-wide flag keeps its
  // access as a grant on the family that flag stood for.
  await sql`
    INSERT INTO access_grants (id, account_id, family, granted_by, note)
    SELECT 'grant_' || md5(id), id, 'restricted', 'migration', 'from the restricted_access flag'
      FROM accounts WHERE restricted_access`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('usage_review_actions').ifExists().execute();
  await db.schema.dropTable('usage_reviews').ifExists().execute();
  await db.schema.dropTable('access_grants').ifExists().execute();
}
