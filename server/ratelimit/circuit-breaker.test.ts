import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from './circuit-breaker.js';

function breakerWithClock(failureThreshold = 3, openMs = 1_000) {
  const clock = { now: 0 };
  const breaker = new CircuitBreaker({ failureThreshold, openMs, now: () => clock.now });
  return { breaker, clock };
}

describe('CircuitBreaker', () => {
  it('opens after the threshold of consecutive failures, and a success in between starts the count again', () => {
    const { breaker } = breakerWithClock(3);
    expect(breaker.fail()).toBe(false);
    expect(breaker.fail()).toBe(false);
    breaker.succeed();
    expect(breaker.fail()).toBe(false);
    expect(breaker.fail()).toBe(false);
    expect(breaker.state).toBe('closed');
    expect(breaker.tryPass()).toBe(true);
    expect(breaker.fail()).toBe(true);
    expect(breaker.state).toBe('open');
    expect(breaker.tryPass()).toBe(false);
  });

  it('lets one trial through after the open period; its success closes the circuit', () => {
    const { breaker, clock } = breakerWithClock(1, 1_000);
    breaker.fail();
    clock.now = 400;
    expect(breaker.tryPass()).toBe(false);
    expect(breaker.retryInMs()).toBe(600);
    clock.now = 1_000;
    expect(breaker.tryPass()).toBe(true);
    expect(breaker.state).toBe('half-open');
    // Only one trial at a time.
    expect(breaker.tryPass()).toBe(false);
    breaker.succeed();
    expect(breaker.state).toBe('closed');
    expect(breaker.retryInMs()).toBe(0);
    expect(breaker.tryPass()).toBe(true);
  });

  it('opens again for a whole period when the trial fails', () => {
    const { breaker, clock } = breakerWithClock(1, 1_000);
    breaker.fail();
    clock.now = 1_500;
    expect(breaker.tryPass()).toBe(true);
    expect(breaker.fail()).toBe(true);
    expect(breaker.state).toBe('open');
    clock.now = 2_400;
    expect(breaker.tryPass()).toBe(false);
    clock.now = 2_500;
    expect(breaker.tryPass()).toBe(true);
  });

  it('replaces a trial that never reported back', () => {
    const { breaker, clock } = breakerWithClock(1, 1_000);
    breaker.fail();
    clock.now = 1_000;
    expect(breaker.tryPass()).toBe(true);
    clock.now = 1_999;
    expect(breaker.tryPass()).toBe(false);
    clock.now = 2_000;
    expect(breaker.tryPass()).toBe(true);
  });
});
