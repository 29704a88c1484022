/** `closed`: calls go through. `open`: calls are refused without trying. `half-open`: one trial call is under way. */
export type CircuitState = 'closed' | 'open' | 'half-open';

export interface CircuitBreakerOptions {
  /** Consecutive failures that open the circuit. Default 5. */
  failureThreshold?: number;
  /** How long the circuit stays open before a trial call is let through, ms. Default 10 000. */
  openMs?: number;
  /** The clock (tests). */
  now?: () => number;
}

export const DEFAULT_FAILURE_THRESHOLD = 5;
export const DEFAULT_OPEN_MS = 10_000;

/**
 * Stops calling a backend that keeps failing, so that requests do not each
 * pay for finding out: after `failureThreshold` failures in a row the
 * circuit opens and every call is refused at once for `openMs`; then one
 * trial call goes through (half-open) and its outcome closes the circuit or
 * opens it for another period. The caller reports each outcome with
 * `succeed()` or `fail()`.
 */
export class CircuitBreaker {
  private readonly failureThreshold: number;
  private readonly openMs: number;
  private readonly now: () => number;
  private consecutiveFailures = 0;
  private openedAt: number | undefined;
  private trialStartedAt: number | undefined;

  constructor(options: CircuitBreakerOptions = {}) {
    this.failureThreshold = Math.max(1, options.failureThreshold ?? DEFAULT_FAILURE_THRESHOLD);
    this.openMs = Math.max(0, options.openMs ?? DEFAULT_OPEN_MS);
    this.now = options.now ?? Date.now;
  }

  get state(): CircuitState {
    if (this.openedAt === undefined) return 'closed';
    return this.trialStartedAt === undefined ? 'open' : 'half-open';
  }

  /**
   * Whether a call may go to the backend now. When the open period is over
   * this lets exactly one trial through; a trial that never reported back
   * (it hung) is replaced by a new one after another open period.
   */
  tryPass(): boolean {
    if (this.openedAt === undefined) return true;
    const now = this.now();
    if (this.trialStartedAt !== undefined) {
      if (now - this.trialStartedAt < this.openMs) return false;
    } else if (now - this.openedAt < this.openMs) {
      return false;
    }
    this.trialStartedAt = now;
    return true;
  }

  succeed(): void {
    this.consecutiveFailures = 0;
    this.openedAt = undefined;
    this.trialStartedAt = undefined;
  }

  /** Counts a failure; true when it opened the circuit (or a failed trial opened it again). */
  fail(): boolean {
    this.consecutiveFailures++;
    const trialFailed = this.trialStartedAt !== undefined;
    this.trialStartedAt = undefined;
    if (trialFailed || (this.openedAt === undefined && this.consecutiveFailures >= this.failureThreshold)) {
      this.openedAt = this.now();
      return true;
    }
    return false;
  }

  /** Milliseconds until the next trial may go through; 0 while closed. */
  retryInMs(): number {
    if (this.openedAt === undefined) return 0;
    const since = this.trialStartedAt ?? this.openedAt;
    return Math.max(0, since + this.openMs - this.now());
  }
}
