/**
 * Failed authentications per client address, counted in memory per
 * instance in fixed one-minute windows. Past the limit an address is
 * refused (429) before its key is even looked up, so a client guessing keys
 * costs neither database queries nor hashing.
 */
const WINDOW_MS = 60_000;
/** Addresses tracked at most; the map is cleared when full (a flood of addresses then costs what it did before). */
const MAX_ADDRESSES = 100_000;

export class AuthFailureLimiter {
  private windowStart = 0;
  private readonly failures = new Map<string, number>();

  constructor(private readonly perMinute: number, private readonly now: () => number = Date.now) {}

  private roll(): void {
    const now = this.now();
    if (now - this.windowStart >= WINDOW_MS) {
      this.windowStart = now - (now % WINDOW_MS);
      this.failures.clear();
    }
  }

  /** Seconds until the address may try again, or 0 when it may now. */
  blockedFor(address: string): number {
    if (this.perMinute <= 0) return 0;
    this.roll();
    if ((this.failures.get(address) ?? 0) < this.perMinute) return 0;
    return Math.max(1, Math.ceil((this.windowStart + WINDOW_MS - this.now()) / 1000));
  }

  record(address: string): void {
    if (this.perMinute <= 0) return;
    this.roll();
    if (this.failures.size >= MAX_ADDRESSES && !this.failures.has(address)) this.failures.clear();
    this.failures.set(address, (this.failures.get(address) ?? 0) + 1);
  }
}
