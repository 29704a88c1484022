import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';

/** Remembers when each key was last used and writes it every few seconds, off the request path. */
export class KeyUsageTracker {
  private seen = new Map<string, Date>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly db: Kysely<Database>, private readonly intervalMs = 5_000) {}

  start(): void {
    this.timer = setInterval(() => void this.flush().catch(() => undefined), this.intervalMs);
    this.timer.unref();
  }

  touch(keyId: string): void {
    this.seen.set(keyId, new Date());
  }

  async flush(): Promise<void> {
    if (this.seen.size === 0) return;
    const batch = this.seen;
    this.seen = new Map();
    await this.db.transaction().execute(async (trx) => {
      for (const [keyId, usedAt] of batch) {
        await trx.updateTable('api_keys').set({ last_used_at: usedAt }).where('id', '=', keyId).execute();
      }
    });
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
