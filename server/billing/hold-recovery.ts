import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { findAbandonedInstances, releaseInstanceHolds } from '../../db/queries/settlement.queries.js';
import type { Logger } from '../logger.js';

/**
 * Releases the holds of instances that stopped heartbeating (crashed or
 * killed), each instance in its own transaction.
 */
export async function recoverAbandonedHolds(db: Kysely<Database>, instanceId: string, log: Logger, staleAfterSeconds: number): Promise<void> {
  for (const abandoned of await findAbandonedInstances(db, instanceId, staleAfterSeconds)) {
    await db.transaction().execute((trx) => releaseInstanceHolds(trx, abandoned));
    log.warn('billing.recovered_holds', { instance: abandoned });
  }
}
