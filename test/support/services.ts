/**
 * The services some suites need besides the gateway: Redis (the shared rate
 * limiter) and a PostgreSQL server (several instances on one database). CI
 * starts both (.ci/run), so there a missing one fails the suites that need
 * it; on a developer's machine those suites are skipped, saying why.
 */
import { Redis } from 'ioredis';
import pg from 'pg';

/** True under CI: `CI` set to anything but "", "0" or "false". */
export const underCI = !['', '0', 'false'].includes((process.env.CI ?? '').toLowerCase());

/**
 * The Redis database the tests use. Not database 0, where a developer's own
 * data may live: the machine's server, database 15 (TEST_REDIS_DB), unless
 * TEST_REDIS_URL names another server and database.
 */
export const TEST_REDIS_DB = 15;

/** The Redis the suites use: TEST_REDIS_URL, or database 15 of the machine's server. */
export function testRedisUrl(): string {
  return process.env.TEST_REDIS_URL ?? `redis://127.0.0.1:6379/${TEST_REDIS_DB}`;
}

/** Whether a Redis server answers PING at this URL (one attempt, one second at most). */
export async function redisIsUp(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/** Whether a PostgreSQL server accepts a connection at this URL (one second at most). */
export async function postgresIsUp(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * For `describe.skipIf(...)`: true (skip) only when the service is missing
 * outside CI, with a warning naming it. Under CI it answers false, and the
 * suite's `requireService` fails it.
 */
export function skipWithout(service: string, url: string, available: boolean): boolean {
  if (available || underCI) return false;
  console.warn(`${service} is not reachable at ${url}: the suites that need it are skipped here (under CI=true they fail).`);
  return true;
}

/** First line of a suite's beforeAll: fails the suite when a service it needs is missing. */
export function requireService(service: string, url: string, available: boolean): void {
  if (!available) {
    throw new Error(`${service} is not reachable at ${url}. It is part of the test environment (.ci/run starts it); under CI its absence fails the suites that need it.`);
  }
}
