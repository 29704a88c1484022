/**
 * Redis (the rate limit store) behind a proxy the test cuts: requests keep
 * completing without waiting on it, the circuit breaker keeps them from even
 * trying, the fail mode decides between "let through" and 503, and limits
 * are enforced again once Redis is back, without a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GuardedRateLimiter } from '../../server/ratelimit/guarded-rate-limiter.js';
import { billingCatalog, postChat, type Answer } from '../billing/billing-support.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait.js';

const redisTarget = new URL(process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379');
const LIMIT = 5;
const BREAKER_OPEN_MS = 2_000;

let proxy: TcpProxy;
let failOpen: TestGateway;
let failClosed: TestGateway;

beforeAll(async () => {
  proxy = await startTcpProxy({ host: redisTarget.hostname, port: Number(redisTarget.port || 6379) });
  const env = {
    REDIS_URL: `redis://127.0.0.1:${proxy.port}`,
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
  const { key } = await gateway.createAccountWithKey();
  const statuses = (await sendSequentially(gateway, key, LIMIT + 2)).map((answer) => answer.status);
  expect(statuses).toEqual([...Array<number>(LIMIT).fill(200), 429, 429]);
}

/** Sends requests until the limiter has closed its circuit again (Redis reconnected and a trial check succeeded). */
async function waitForRecovery(gateway: TestGateway): Promise<void> {
  const { key } = await gateway.createAccountWithKey();
  await waitFor(
    async () => {
      await postChat(gateway, key);
      return limiterOf(gateway).breakerState === 'closed';
    },
    { timeoutMs: 30_000, intervalMs: 100, message: 'the rate limiter to reach Redis again' },
  );
}

describe('a Redis outage', () => {
  it('fail mode open: requests complete without waiting on Redis and pass; limits are enforced again after it returns', async () => {
    await expectLimitEnforced(failOpen);
    const limiter = limiterOf(failOpen);

    await proxy.stop();
    const { key } = await failOpen.createAccountWithKey();
    const checksBefore = limiter.backendChecks;
    const uncheckedBefore = limiter.uncheckedChecks;
    const started = Date.now();
    const requests = 3 * LIMIT;
    let finished = 0;
    const answers = await Promise.all(
      Array.from({ length: requests }, async () => {
        const answer = await postChat(failOpen, key);
        finished++;
        return answer;
      }),
    );
    const elapsed = Date.now() - started;
    expect(finished).toBe(requests);
    // More than the limit got through: not enforced while Redis is away (fail open).
    expect(answers.map((answer) => answer.status)).toEqual(Array<number>(requests).fill(200));
    expect(limiter.uncheckedChecks - uncheckedBefore).toBe(requests);
    // Once the breaker opened, checks stopped going to Redis: at most the failures that opened it plus one trial per open period.
    expect(limiter.backendChecks - checksBefore).toBeLessThanOrEqual(5 + Math.floor(elapsed / BREAKER_OPEN_MS) + 1);
    expect(limiter.breakerState).not.toBe('closed');

    await proxy.start();
    await waitForRecovery(failOpen);
    await expectLimitEnforced(failOpen);
  });

  it('fail mode closed: 503 SERVICE_UNAVAILABLE with retry-after while Redis is away, served again after', async () => {
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
    await waitForRecovery(failClosed);
    await expectLimitEnforced(failClosed);
  });
});
