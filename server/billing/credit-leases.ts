/**
 * Per-instance credit leases, kept in memory.
 *
 * When an account has plenty of credit, a hold taken in PostgreSQL is made
 * larger than the request needs (the "headroom", see Billing.hold); the
 * headroom stays reserved in `accounts.held` under this instance, and the
 * next holds of that account are served from it here, without a database
 * round trip. Headroom is never refilled locally: a request's own hold is
 * released by its settlement, and new headroom comes only with the next
 * database hold. Headroom unused for a while, or asked for by another
 * instance that ran short, is handed back.
 */
export interface LeaseRelease {
  accountId: string;
  amount: number;
}

interface Lease {
  free: number;
  lastUsed: number;
}

export class LeaseBook {
  private readonly leases = new Map<string, Lease>();

  /** Serves a hold from the account's headroom; false when there is not enough. */
  take(accountId: string, amount: number, now = Date.now()): boolean {
    const lease = this.leases.get(accountId);
    if (!lease || lease.free < amount) return false;
    lease.free -= amount;
    lease.lastUsed = now;
    return true;
  }

  /** Headroom granted by a database hold. */
  add(accountId: string, amount: number, now = Date.now()): void {
    if (amount <= 0) return;
    const lease = this.leases.get(accountId);
    if (lease) {
      lease.free += amount;
      lease.lastUsed = now;
    } else {
      this.leases.set(accountId, { free: amount, lastUsed: now });
    }
  }

  /** Headroom of this account (0 when none). */
  free(accountId: string): number {
    return this.leases.get(accountId)?.free ?? 0;
  }

  /** Takes back all headroom of one account, or of every account. */
  drain(accountId?: string): LeaseRelease[] {
    const released: LeaseRelease[] = [];
    for (const [id, lease] of this.leases) {
      if (accountId !== undefined && id !== accountId) continue;
      if (lease.free > 0) released.push({ accountId: id, amount: lease.free });
      this.leases.delete(id);
    }
    return released;
  }

  /** Takes back the headroom of accounts unused for `idleMs`. */
  drainIdle(idleMs: number, now = Date.now()): LeaseRelease[] {
    const released: LeaseRelease[] = [];
    for (const [id, lease] of this.leases) {
      if (now - lease.lastUsed < idleMs) continue;
      if (lease.free > 0) released.push({ accountId: id, amount: lease.free });
      this.leases.delete(id);
    }
    return released;
  }
}
