import { sql, type Kysely } from 'kysely';
import type { Database } from '../schema.js';

export interface UsageFilter {
  accountId: string;
  model?: string;
  from?: Date;
  to?: Date;
  /** Only this endpoint (`/v1/chat/completions`, …). */
  endpoint?: string;
  limit: number;
  offset: number;
}

/**
 * The account's charged requests, newest first: those that reached a provider
 * and answered, and any other that cost something (a request the client left
 * early), so that the list always adds up to what the balance lost.
 */
export async function listChargedUsage(db: Kysely<Database>, filter: UsageFilter) {
  let query = db
    .selectFrom('usage')
    .where('account_id', '=', filter.accountId)
    .where((eb) => eb.or([eb('status', '=', 200), eb('cost', '>', 0)]));
  if (filter.model) query = query.where('model', '=', filter.model);
  if (filter.from) query = query.where('created_at', '>=', filter.from);
  if (filter.to) query = query.where('created_at', '<', filter.to);
  if (filter.endpoint) query = query.where('endpoint', '=', filter.endpoint);
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit).offset(filter.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.count) };
}

/**
 * The dashboard's chart: the same charged rows as {@link listChargedUsage},
 * summed per UTC day and per model (cost in micro-credits).
 */
export async function chargedUsageTotals(db: Kysely<Database>, filter: { accountId: string; from: Date; to: Date }) {
  const base = db
    .selectFrom('usage')
    .where('account_id', '=', filter.accountId)
    .where((eb) => eb.or([eb('status', '=', 200), eb('cost', '>', 0)]))
    .where('created_at', '>=', filter.from)
    .where('created_at', '<', filter.to);
  const day = sql<string>`to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD')`;
  const [days, models] = await Promise.all([
    base
      .select([day.as('day'), sql<string>`sum(cost)`.as('cost'), sql<string>`count(*)`.as('requests')])
      .groupBy(day)
      .orderBy(day)
      .execute(),
    base
      .select(['model', sql<string>`sum(cost)`.as('cost'), sql<string>`count(*)`.as('requests')])
      .groupBy('model')
      .orderBy(sql`sum(cost)`, 'desc')
      .execute(),
  ]);
  return {
    days: days.map((row) => ({ day: row.day, cost: Number(row.cost), requests: Number(row.requests) })),
    models: models.map((row) => ({ model: row.model, cost: Number(row.cost), requests: Number(row.requests) })),
  };
}
