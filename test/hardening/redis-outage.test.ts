/**
 * Redis (the rate limit store) behind a proxy the test cuts: requests keep
 * completing without waiting on it, the circuit breaker keeps them from even
 * trying, the fail mode decides between "let through" and 503, and limits
 * are enforced again once Redis is back, without a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_FAILURE_THRESHOLD } from '../../server/ratelimit/circuit-breaker.js';
import { GuardedRateLimiter } from '../../server/ratelimit/guarded-rate-limiter.js';
import { minuteWindow } from '../../server/ratelimit/rate-limiter.js';
import { billingCatalog, postChat } from '../billing/billing-support.js';
import type { Answer } from '../support/http.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { testRedisUrl } from '../support/services.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait.js';

const redisTarget = new URL(testRedisUrl());
const LIMIT = 5;
const BREAKER_OPEN_MS = 2_000;

let proxy: TcpProxy;
let failOpen: TestGateway;
let failClosed: TestGateway;

beforeAll(async () => {
  proxy = await startTcpProxy({ host: redisTarget.hostname, port: Number(redisTarget.port || 6379) });
  const env = {
    // The same database as the target's (the tests' own, never 0 by default), through the proxy.
    REDIS_URL: `redis://127.0.0.1:${proxy.port}${redisTarget.pathname}`,
    RATE_LIMITS: `pro=${LIMIT}`,
    RATE_LIMIT_BREAKER_OPEN_MS: String(BREAKER_OPEN_MS),
  };
  failOpen = await startTestGateway({ catalog: billingCatalog(), env: { ...env, RATE_LIMIT_FAIL_MODE: 'open' } });
  failClosed = await startTestGateway({ catalog: billingCatalog(), env: { ...env, RATE_LIMIT_FAIL_MODE: 'closed' } });
});

afterAll(async () => {
  await failOpen?.close();
  await failClosed?.close();
  await proxy?.close();
});

function limiterOf(gateway: TestGateway): GuardedRateLimiter {
  const limiter = gateway.gateway.services.rateLimiter;
  expect(limiter).toBeInstanceOf(GuardedRateLimiter);
  return limiter as GuardedRateLimiter;
}

/** `count` requests of one key, one after the other (each waits for the previous verdict). */
async function sendSequentially(gateway: TestGateway, key: string, count: number): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let index = 0; index < count; index++) answers.push(await postChat(gateway, key));
  return answers;
}

async function expectLimitEnforced(gateway: TestGateway): Promise<void> {
  for (;;) {
    const { key } = await gateway.createAccountWithKey();
    const window = minuteWindow(Date.now()).start;
    const statuses = (await sendSequentially(gateway, key, LIMIT + 2)).map((answer) => answer.status);
    // A new minute in the middle starts the count again: try once more, within one window.
    if (minuteWindow(Date.now()).start !== window) continue;
    expect(statuses).toEqual([...Array<number>(LIMIT).fill(200), 429, 429]);
    return;
  }
}

/** Sends requests until one is counted in Redis again (the client reconnected, the breaker closed). */
async function waitForRedis(gateway: TestGateway): Promise<void> {
  const limiter = limiterOf(gateway);
  const { key } = await gateway.createAccountWithKey();
  await waitFor(
    async () => {
      const unchecked = limiter.uncheckedChecks;
      await postChat(gateway, key);
      return limiter.uncheckedChecks === unchecked && limiter.breakerState === 'closed';
    },
    { timeoutMs: 30_000, intervalMs: 100, message: 'the rate limiter to reach Redis' },
  );
}

describe('a Redis outage', () => {
  it('fail mode open: requests complete without waiting on Redis and pass; limits are enforced again after it returns', async () => {
    await waitForRedis(failOpen);
    await expectLimitEnforced(failOpen);
    const limiter = limiterOf(failOpen);

    await proxy.stop();
    const { key } = await failOpen.createAccountWithKey();
    const checksBefore = limiter.backendChecks;
    const uncheckedBefore = limiter.uncheckedChecks;
    const started = Date.now();
    const requests = 3 * LIMIT;
    let finished = 0;
    // One after the other, so that each check sees the breaker's state after the previous one.
    const answers: Answer[] = [];
    for (let index = 0; index < requests; index++) {
      answers.push(await postChat(failOpen, key));
      finished++;
    }
    const elapsed = Date.now() - started;
    expect(finished).toBe(requests);
    // More than the limit got through: not enforced while Redis is away (fail open).
    expect(answers.map((answer) => answer.status)).toEqual(Array<number>(requests).fill(200));
    expect(limiter.uncheckedChecks - uncheckedBefore).toBe(requests);
    // Once the breaker opened, checks stopped going to Redis: the failures that opened it plus at most one trial per open period.
    expect(limiter.backendChecks - checksBefore).toBeLessThanOrEqual(DEFAULT_FAILURE_THRESHOLD + Math.floor(elapsed / BREAKER_OPEN_MS) + 1);
    expect(limiter.breakerState).not.toBe('closed');

    await proxy.start();
    await waitForRedis(failOpen);
    await expectLimitEnforced(failOpen);
  });

  it('fail mode closed: 503 SERVICE_UNAVAILABLE with retry-after while Redis is away, served again after', async () => {
    // Its client may still be reconnecting after the previous test's outage.
    await waitForRedis(failClosed);
    await expectLimitEnforced(failClosed);

    await proxy.stop();
    const { key } = await failClosed.createAccountWithKey();
    const answers = await sendSequentially(failClosed, key, 8);
    for (const answer of answers) {
      expect(answer.status).toBe(503);
      expect(answer.body).toMatchObject({ error: { code: 'SERVICE_UNAVAILABLE', type: 'api_error' } });
      expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
    expect(limiterOf(failClosed).breakerState).not.toBe('closed');

    await proxy.start();
    await waitForRedis(failClosed);
    await expectLimitEnforced(failClosed);
  });
});
