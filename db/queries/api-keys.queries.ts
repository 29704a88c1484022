import type { Executor } from './executor.js';

/** Records when each key was last used, in one transaction. */
export async function writeKeysLastUsed(db: Executor, usedAt: ReadonlyMap<string, Date>): Promise<void> {
  for (const [keyId, at] of usedAt) {
    await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', keyId).execute();
  }
}
