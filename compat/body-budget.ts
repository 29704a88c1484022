/**
 * Bytes of request bodies held in memory at once across all requests of this
 * instance. A body reserves its bytes as they arrive and gives them back when
 * its request ends; past the budget a body is refused (503) instead of
 * growing the heap: many slow or large uploads cannot exhaust memory.
 */
export class BodyBudget {
  private used = 0;

  constructor(readonly limitBytes: number) {}

  /** Takes `bytes` from the budget; false (nothing taken) when they do not fit. */
  take(bytes: number): boolean {
    if (this.used + bytes > this.limitBytes) return false;
    this.used += bytes;
    return true;
  }

  give(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }

  get usedBytes(): number {
    return this.used;
  }
}
