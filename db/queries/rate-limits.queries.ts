import { sql } from 'kysely';
import type { Executor } from './executor.js';

/** Adds `take` to a key's count in a window and answers the new count, in one statement. */
export async function addToRateWindow(db: Executor, keyId: string, windowStart: Date, take: number): Promise<number> {
  const result = await sql<{ count: number }>`
    INSERT INTO rate_limits (key_id, window_start, count)
    VALUES (${keyId}, ${windowStart}, ${take})
    ON CONFLICT (key_id, window_start) DO UPDATE SET count = rate_limits.count + ${take}
    RETURNING count
  `.execute(db);
  return Number(result.rows[0]!.count);
}

/** Deletes the windows that started before `cutoff`. */
export async function deleteRateWindowsBefore(db: Executor, cutoff: Date): Promise<void> {
  await sql`DELETE FROM rate_limits WHERE window_start < ${cutoff}`.execute(db);
}
