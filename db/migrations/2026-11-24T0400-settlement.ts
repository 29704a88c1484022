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
 *
 * `umg_settle` writes a batch of finished requests in one statement (see
 * settleRows in db/queries/settlement.queries.ts): a function, so that each
 * connection plans its statements once, and so that the batch is one
 * statement and one transaction. It locks the batch's accounts first, in id
 * order, with the lock that does not conflict with the foreign-key checks of
 * its inserts (settlements of two instances queue instead of deadlocking);
 * its next statement, with a snapshot taken after the lock, sees the
 * accounts' and holds' latest state (everything that changes them locks the
 * account first).
 */
export const SETTLE_FUNCTION = `
  CREATE OR REPLACE FUNCTION umg_settle(p_instance text, p_batch text, p_rows json, p_prices jsonb) RETURNS SETOF text
  LANGUAGE plpgsql VOLATILE AS $settle$
  BEGIN
    PERFORM 1 FROM accounts
      WHERE id IN (SELECT DISTINCT r.a FROM json_to_recordset(p_rows) AS r(a text))
      ORDER BY id FOR NO KEY UPDATE;
    RETURN QUERY
    WITH rows AS (
        SELECT * FROM json_to_recordset(p_rows) AS r(q text, a text, k text, m text, e text, p text,
          it int, ot int, ct int, u bigint, s int, x text, st bool, ab bool, l int, c bigint, pi int, d int, t timestamptz, h bigint, b bool)
      ),
      inserted AS (
        INSERT INTO usage (request_id, account_id, key_id, model, endpoint, provider, input_tokens, output_tokens,
          cached_input_tokens, units, status, error_code, stream, aborted, latency_ms, cost, price, discount_percentage, created_at)
        SELECT q, a, k, m, e, p, it, ot, ct, u, s, x, st, ab, l, c, p_prices -> pi, d, t FROM rows WHERE b
        ON CONFLICT (request_id) DO NOTHING
        RETURNING request_id
      ),
      settled AS (
        SELECT a AS account_id, SUM(h) AS release, SUM(CASE WHEN b THEN c ELSE 0 END) AS cost, COUNT(*) FILTER (WHERE b) AS requests
        FROM rows WHERE NOT b OR q IN (SELECT request_id FROM inserted)
        GROUP BY a
      ),
      charges AS (
        SELECT s.account_id, s.cost, s.requests, a.current_credits, r.releasable AS release,
          LEAST(s.cost, GREATEST(0, a.current_credits + a.vault_credits - (a.held - r.releasable))) AS charge
        FROM settled s
        JOIN accounts a ON a.id = s.account_id
        LEFT JOIN credit_holds h ON h.instance_id = p_instance AND h.account_id = s.account_id
        CROSS JOIN LATERAL (SELECT LEAST(s.release, COALESCE(h.amount, 0)) AS releasable) r
      ),
      split AS (
        SELECT account_id, release, charge, cost - charge AS uncharged, requests,
          LEAST(charge, current_credits) AS from_current, charge - LEAST(charge, current_credits) AS from_vault
        FROM charges
      ),
      accounts_written AS (
        UPDATE accounts a SET held = a.held - s.release, current_credits = a.current_credits - s.from_current,
          vault_credits = a.vault_credits - s.from_vault, cycle_spent = a.cycle_spent + s.charge
        FROM split s WHERE a.id = s.account_id AND (s.release > 0 OR s.charge > 0)
      ),
      holds_written AS (
        UPDATE credit_holds h SET amount = h.amount - s.release
        FROM split s WHERE h.instance_id = p_instance AND h.account_id = s.account_id AND s.release > 0
      ),
      ledger_written AS (
        INSERT INTO ledger (account_id, kind, current_delta, vault_delta, uncharged, request_id, note)
        SELECT account_id, 'charge', -from_current, -from_vault, uncharged, p_batch, requests || ' requests'
        FROM split WHERE charge > 0 OR uncharged > 0
      )
      SELECT request_id FROM inserted;
  END
  $settle$`;
export async function up(db: Kysely<any>): Promise<void> {
  await sql`ALTER TABLE ledger ADD COLUMN uncharged bigint NOT NULL DEFAULT 0`.execute(db);
  await sql`ALTER TABLE usage DROP CONSTRAINT usage_pkey, DROP CONSTRAINT usage_request_id_key, ADD CONSTRAINT usage_pkey PRIMARY KEY (request_id)`.execute(db);
  await sql.raw(SETTLE_FUNCTION).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`DROP FUNCTION IF EXISTS umg_settle(text, text, json, jsonb)`.execute(db);
  await sql`ALTER TABLE usage DROP CONSTRAINT usage_pkey, ADD CONSTRAINT usage_request_id_key UNIQUE (request_id), ADD CONSTRAINT usage_pkey PRIMARY KEY (id)`.execute(db);
  await sql`ALTER TABLE ledger DROP COLUMN uncharged`.execute(db);
}
