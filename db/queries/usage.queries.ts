import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

export interface UsageFilter {
  accountId: string;
  model?: string;
  from?: Date;
  to?: Date;
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
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit).offset(filter.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('count')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.count) };
}
