import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors.js';
import { GuardedRateLimiter, type RateLimitFailMode } from './guarded-rate-limiter.js';
import type { RateLimitResult, RateLimiter } from './rate-limiter.js';

/** A backend that answers or fails as the test says, counting its calls. */
class ScriptedLimiter implements RateLimiter {
  calls = 0;
  failing = false;
  async check(): Promise<RateLimitResult> {
    this.calls++;
    if (this.failing) throw new Error('connect ECONNREFUSED 127.0.0.1:6379');
    return { allowed: false, remaining: 0, retryAfterSeconds: 12 };
  }
  async close(): Promise<void> {}
}

function guarded(failMode: RateLimitFailMode) {
  const backend = new ScriptedLimiter();
  const clock = { now: 0 };
  const logged: Array<{ event: string; fields: Record<string, unknown> }> = [];
  const limiter = new GuardedRateLimiter(backend, {
    failMode,
    breaker: { failureThreshold: 3, openMs: 5_000, now: () => clock.now },
    log: (event, fields) => logged.push({ event, fields }),
  });
  return { backend, clock, limiter, logged };
}

describe('GuardedRateLimiter', () => {
  it('passes the backend\'s verdict through while it works', async () => {
    const { backend, limiter } = guarded('open');
    expect(await limiter.check('key', 10)).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 12 });
    expect(backend.calls).toBe(1);
    expect(limiter.breakerState).toBe('closed');
  });

  it('fails open: requests pass, the backend is left alone once the circuit opens, one warning, and checks resume after a successful trial', async () => {
    const { backend, clock, limiter, logged } = guarded('open');
    backend.failing = true;
    for (let index = 0; index < 20; index++) expect((await limiter.check('key', 10)).allowed).toBe(true);
    // Three failures open the circuit; the other seventeen never reach the store.
    expect(backend.calls).toBe(3);
    expect(limiter.backendChecks).toBe(3);
    expect(limiter.uncheckedChecks).toBe(20);
    expect(limiter.breakerState).toBe('open');
    expect(logged.filter((entry) => entry.event === 'ratelimit.unavailable')).toHaveLength(1);
    expect(logged[0].fields).toMatchObject({ failMode: 'open', message: 'connect ECONNREFUSED 127.0.0.1:6379' });

    backend.failing = false;
    clock.now = 5_000;
    expect((await limiter.check('key', 10)).allowed).toBe(false);
    expect(limiter.breakerState).toBe('closed');
    expect(logged.map((entry) => entry.event)).toContain('ratelimit.recovered');
  });

  it('fails closed: 503 SERVICE_UNAVAILABLE with the time until the next trial as retry-after', async () => {
    const { backend, clock, limiter } = guarded('closed');
    backend.failing = true;
    const errors: GatewayError[] = [];
    for (let index = 0; index < 5; index++) {
      errors.push(await limiter.check('key', 10).then(() => { throw new Error('allowed'); }, (error: GatewayError) => error));
    }
    expect(errors.every((error) => error instanceof GatewayError && error.code === 'SERVICE_UNAVAILABLE' && error.status === 503)).toBe(true);
    expect(errors[0].retryAfter).toBe(1);
    expect(errors[4].retryAfter).toBe(5);
    expect(backend.calls).toBe(3);
    clock.now = 2_000;
    const later = await limiter.check('key', 10).catch((error: GatewayError) => error);
    expect((later as GatewayError).retryAfter).toBe(3);
  });

  it('never asks the backend about unlimited keys, and refuses bad arguments without counting them as failures', async () => {
    const { backend, limiter } = guarded('closed');
    expect((await limiter.check('key', 0)).allowed).toBe(true);
    for (let index = 0; index < 5; index++) await expect(limiter.check('key', -1)).rejects.toThrow(RangeError);
    await expect(limiter.check('key', 5, Number.NaN)).rejects.toThrow(RangeError);
    expect(backend.calls).toBe(0);
    expect(limiter.breakerState).toBe('closed');
  });
});
