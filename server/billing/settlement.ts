/**
 * Writing a batch of finished requests: one transaction of one statement (lock
 * the accounts, then usage rows with their final cost, hold releases, one
 * balance update and one ledger entry per account). See
 * db/queries/settlement.queries.ts.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { settleRows } from '../../db/queries/settlement.queries.js';
import { isHoldRelease, toSettlementRow, type SettlementEntry } from './usage-entry.js';

/** What settlement remembers about entries across attempts of the same batch. */
export class SettlementMemory {
  /** Entries of a batch whose transaction failed (its commit may still have happened). */
  readonly uncertain = new WeakSet<SettlementEntry>();
  /** Ids given to requests whose own id was already taken by another request. */
  private readonly derivedIds = new WeakMap<SettlementEntry, string>();

  /** The id a usage row is stored under: the request's, or one derived from it when another request had taken it. */
  requestIdOf(entry: SettlementEntry): string {
    return this.derivedIds.get(entry) ?? entry.requestId;
  }

  derive(entry: SettlementEntry): void {
    this.derivedIds.set(entry, `${entry.requestId}~${randomBytes(6).toString('hex')}`);
  }
}

/**
 * Writes one batch in one transaction. A usage row's request id is unique:
 * an entry whose id is already stored was either written by an earlier
 * attempt of this batch whose commit went unacknowledged (it is "uncertain":
 * its charge and release happened with that commit, nothing more is done)
 * or another request took the id (clients may choose their x-request-id):
 * it is then written under a derived id in a second statement (rare).
 */
export async function writeBatch(db: Kysely<Database>, instanceId: string, batch: SettlementEntry[], memory: SettlementMemory): Promise<void> {
  // Two entries of one batch never share an id: the later one is billed under an id of its own.
  const seen = new Set<string>();
  for (const entry of batch) {
    if (isHoldRelease(entry)) continue;
    if (seen.has(memory.requestIdOf(entry))) memory.derive(entry);
    seen.add(memory.requestIdOf(entry));
  }
  await db.transaction().execute(async (trx) => {
    const batchId = `batch-${randomBytes(8).toString('hex')}`;
    let pending = batch;
    for (let round = 0; round < 2 && pending.length > 0; round++) {
      const inserted = await settleRows(trx, { instanceId, batchId: round === 0 ? batchId : `${batchId}-2`, rows: pending.map((entry) => toSettlementRow(entry, memory.requestIdOf(entry))) });
      const collided = pending.filter((entry) => !isHoldRelease(entry) && !inserted.has(memory.requestIdOf(entry)) && !memory.uncertain.has(entry));
      for (const entry of collided) memory.derive(entry);
      pending = collided;
    }
  });
}
