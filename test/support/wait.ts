/**
 * Waiting in tests: on a condition, with a deadline, never for a fixed time.
 * The machine that runs the suite may be a busy two-core box, so a deadline
 * is a budget for the worst case (generous), not a claim about speed.
 */

/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** How long the condition may take to hold before the wait fails; 10 s unless told. */
  timeoutMs?: number;
  /** Pause between two checks; 25 ms unless told. */
  intervalMs?: number;
  /** What is awaited, for the failure message ("the usage row of req_1 to be written"). */
  message?: string;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Resolves as soon as `condition` answers true; checks it at once, then every
 * `intervalMs`, and rejects once `timeoutMs` has passed without it holding. A
 * condition that throws ends the wait with its error (catch inside the
 * condition what only means "not yet", such as a refused connection).
 */
export async function waitFor(condition: () => boolean | Promise<boolean>, options: WaitForOptions = {}): Promise<void> {
  const { timeoutMs = 10_000, intervalMs = 25, message = 'the condition' } = options;
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() >= deadline) throw new Error(`${message} did not hold within ${timeoutMs} ms`);
    await delay(Math.min(intervalMs, Math.max(0, deadline - Date.now())));
  }
}
