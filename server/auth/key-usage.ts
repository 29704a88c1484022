import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { writeKeysLastUsed } from '../../db/queries/api-keys.queries.js';

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
    await this.db.transaction().execute((trx) => writeKeysLastUsed(trx, batch));
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}
