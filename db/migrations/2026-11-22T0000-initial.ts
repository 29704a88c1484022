import { sql, type Kysely } from 'kysely';

/* eslint-disable @typescript-eslint/no-explicit-any -- migrations run against the schema of their own time */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('plan', 'text', (col) => col.notNull())
    .addColumn('disabled', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('current_credits', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('vault_credits', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('held', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('cycle_spent', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('daily_limit', 'bigint')
    .addColumn('ip_allowlist', 'jsonb', (col) => col.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('restricted_access', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('reset_cycle_days', 'integer', (col) => col.notNull().defaultTo(1))
    .addColumn('last_reset', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addCheckConstraint('accounts_balances_not_negative', sql`current_credits >= 0 AND vault_credits >= 0 AND held >= 0`)
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('name', 'text', (col) => col.notNull())
    .addColumn('key_hash', 'text', (col) => col.notNull().unique())
    .addColumn('display_prefix', 'text', (col) => col.notNull())
    .addColumn('last_four', 'text', (col) => col.notNull())
    .addColumn('enabled', 'boolean', (col) => col.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('last_used_at', 'timestamptz')
    .addColumn('deleted_at', 'timestamptz')
    .execute();
  await db.schema.createIndex('api_keys_account_idx').on('api_keys').column('account_id').execute();

  await db.schema
    .createTable('providers')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('base_url', 'text', (col) => col.notNull())
    .addColumn('api_key_ref', 'text')
    .addColumn('headers', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('options', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('models')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('owned_by', 'text', (col) => col.notNull())
    .addColumn('created', 'bigint', (col) => col.notNull())
    .addColumn('definition', 'jsonb', (col) => col.notNull())
    .addColumn('position', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('updated_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('usage')
    .addColumn('id', 'bigserial', (col) => col.primaryKey())
    .addColumn('request_id', 'text', (col) => col.notNull().unique())
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('key_id', 'text')
    .addColumn('model', 'text', (col) => col.notNull())
    .addColumn('endpoint', 'text', (col) => col.notNull())
    .addColumn('provider', 'text')
    .addColumn('input_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('output_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('cached_input_tokens', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('units', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('status', 'integer', (col) => col.notNull())
    .addColumn('error_code', 'text')
    .addColumn('stream', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('aborted', 'boolean', (col) => col.notNull().defaultTo(false))
    .addColumn('latency_ms', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('cost', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('price', 'jsonb', (col) => col.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('discount_percentage', 'integer', (col) => col.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('usage_account_created_idx').on('usage').columns(['account_id', 'created_at']).execute();

  await db.schema
    .createTable('ledger')
    .addColumn('id', 'bigserial', (col) => col.primaryKey())
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('kind', 'text', (col) => col.notNull())
    .addColumn('current_delta', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('vault_delta', 'bigint', (col) => col.notNull().defaultTo(0))
    .addColumn('usage_id', 'bigint')
    .addColumn('request_id', 'text')
    .addColumn('note', 'text')
    .addColumn('created_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('ledger_account_idx').on('ledger').column('account_id').execute();

  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (col) => col.primaryKey())
    .addColumn('value', 'jsonb', (col) => col.notNull())
    .execute();

  await db.schema
    .createTable('instances')
    .addColumn('id', 'text', (col) => col.primaryKey())
    .addColumn('started_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .addColumn('heartbeat_at', 'timestamptz', (col) => col.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('credit_holds')
    .addColumn('instance_id', 'text', (col) => col.notNull())
    .addColumn('account_id', 'text', (col) => col.notNull().references('accounts.id'))
    .addColumn('amount', 'bigint', (col) => col.notNull())
    .addPrimaryKeyConstraint('credit_holds_pk', ['instance_id', 'account_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const table of ['credit_holds', 'instances', 'settings', 'ledger', 'usage', 'models', 'providers', 'api_keys', 'accounts']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
