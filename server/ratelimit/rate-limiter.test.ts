import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../../db/client.js';
import type { Database } from '../../db/schema.js';
import * as rateLimitsMigration from '../../db/migrations/2026-11-22T0100-rate-limits.js';
import { createTestDatabase, postgresServerUrl, type TestDatabase } from '../../test/support/database.js';
import { postgresIsUp, redisIsUp, TEST_REDIS_DB, testRedisUrl } from '../../test/support/services.js';
import { DatabaseRateLimiter } from './database-rate-limiter.js';
import { GuardedRateLimiter } from './guarded-rate-limiter.js';
import { RedisRateLimiter } from './redis-rate-limiter.js';
import { createRateLimiter } from './create-rate-limiter.js';
import { UNLIMITED, minuteWindow, normalizeLimit, toRateLimitResult, type RateLimiter } from './rate-limiter.js';

const REDIS_URL = testRedisUrl();
/** 12:00:10 UTC on 22 November 2026: ten seconds into a window. */
const T = Date.UTC(2026, 10, 22, 12, 0, 10);
const WINDOW_END = Date.UTC(2026, 10, 22, 12, 1, 0);

let keySequence = 0;
const newKeyId = () => `key_${randomBytes(4).toString('hex')}_${++keySequence}`;

// Redis and PostgreSQL are part of the test environment (CI starts them): their absence is a failure, not a skip.
const redisAvailable = await redisIsUp(REDIS_URL);
const postgresAvailable = await postgresIsUp(postgresServerUrl());

/** The rate_limits migration runs here until db/migrations/index.ts lists it, and is skipped after. */
async function migrate(db: Kysely<Database>): Promise<void> {
  await migrateToLatest(db);
  const { rows } = await sql<{ table: string | null }>`SELECT to_regclass('rate_limits')::text AS table`.execute(db);
  if (rows[0].table === null) await rateLimitsMigration.up(db);
}

describe('fixed-window arithmetic', () => {
  it('aligns windows to whole minutes', () => {
    expect(minuteWindow(T)).toEqual({ start: Date.UTC(2026, 10, 22, 12, 0, 0), end: WINDOW_END });
    expect(minuteWindow(WINDOW_END)).toEqual({ start: WINDOW_END, end: WINDOW_END + 60_000 });
    expect(() => minuteWindow(Number.NaN)).toThrow(RangeError);
  });

  it('allows up to the limit and gives an honest retry time of at least one second', () => {
    expect(toRateLimitResult(1, 3, T)).toEqual({ allowed: true, remaining: 2, retryAfterSeconds: 50 });
    expect(toRateLimitResult(3, 3, T)).toEqual({ allowed: true, remaining: 0, retryAfterSeconds: 50 });
    expect(toRateLimitResult(4, 3, T)).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 50 });
    expect(toRateLimitResult(4, 3, WINDOW_END - 1)).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    expect(toRateLimitResult(4, 3, WINDOW_END - 1_001).retryAfterSeconds).toBe(2);
    expect(toRateLimitResult(4, 3, WINDOW_END - 60_000).retryAfterSeconds).toBe(60);
  });

  it('accepts whole non-negative limits', () => {
    expect(normalizeLimit(0)).toBe(0);
    expect(normalizeLimit(20.7)).toBe(20);
    expect(() => normalizeLimit(-1)).toThrow(RangeError);
    expect(() => normalizeLimit(Number.NaN)).toThrow(RangeError);
  });
});

interface Backend {
  /** Two limiters as two gateway instances would have them (separate connections where the backend has any). */
  first: RateLimiter;
  second: RateLimiter;
  /** The stored count of a key in the window containing `now`, 0 when nothing is stored. */
  storedCount(keyId: string, now: number): Promise<number>;
}

/** The behaviour every backend must have; `getBackend` is read inside each test, after beforeAll. */
function describeLimiterContract(getBackend: () => Backend): void {
  it('allows the limit, then refuses within the same minute', async () => {
    const { first } = getBackend();
    const keyId = newKeyId();
    const results = [];
    for (let index = 0; index < 7; index++) results.push(await first.check(keyId, 5, T + index * 1_000));
    expect(results.map((result) => result.allowed)).toEqual([true, true, true, true, true, false, false]);
    expect(results.map((result) => result.remaining)).toEqual([4, 3, 2, 1, 0, 0, 0]);
    expect(results.map((result) => result.retryAfterSeconds)).toEqual([50, 49, 48, 47, 46, 45, 44]);
    expect(await first.check(keyId, 5, WINDOW_END - 200)).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
  });

  it('shares the count between instances', async () => {
    const { first, second, storedCount } = getBackend();
    const keyId = newKeyId();
    const verdicts = [];
    for (let index = 0; index < 8; index++) {
      const limiter = index % 2 === 0 ? first : second;
      verdicts.push((await limiter.check(keyId, 6, T)).allowed);
    }
    expect(verdicts).toEqual([true, true, true, true, true, true, false, false]);
    expect(await storedCount(keyId, T)).toBe(8);
  });

  it('allows again in the next window', async () => {
    const { first, second } = getBackend();
    const keyId = newKeyId();
    for (let index = 0; index < 3; index++) expect((await first.check(keyId, 3, T)).allowed).toBe(true);
    expect((await second.check(keyId, 3, T)).allowed).toBe(false);
    const refused = await first.check(keyId, 3, WINDOW_END - 1);
    expect(refused).toEqual({ allowed: false, remaining: 0, retryAfterSeconds: 1 });
    // Exactly when the refusal said: the window that starts at WINDOW_END is fresh.
    expect(await second.check(keyId, 3, WINDOW_END)).toEqual({ allowed: true, remaining: 2, retryAfterSeconds: 60 });
    expect(await first.check(keyId, 3, WINDOW_END + 30_000)).toEqual({ allowed: true, remaining: 1, retryAfterSeconds: 30 });
  });

  it('counts each key on its own', async () => {
    const { first } = getBackend();
    const [keyA, keyB] = [newKeyId(), newKeyId()];
    expect((await first.check(keyA, 1, T)).allowed).toBe(true);
    expect((await first.check(keyA, 1, T)).allowed).toBe(false);
    expect((await first.check(keyB, 1, T)).allowed).toBe(true);
  });

  it('admits exactly the limit of 50 concurrent checks from two instances', async () => {
    const { first, second, storedCount } = getBackend();
    const keyId = newKeyId();
    const results = await Promise.all(Array.from({ length: 50 }, (_, index) => (index % 2 === 0 ? first : second).check(keyId, 20, T)));
    const allowed = results.filter((result) => result.allowed);
    expect(allowed).toHaveLength(20);
    // Each admitted request saw a distinct count.
    expect(allowed.map((result) => result.remaining).sort((left, right) => left - right)).toEqual(Array.from({ length: 20 }, (_, index) => index));
    expect(await storedCount(keyId, T)).toBe(50);
  });

  it('treats a limit of 0 as unlimited without storing anything', async () => {
    const { first, storedCount } = getBackend();
    const keyId = newKeyId();
    for (let index = 0; index < 3; index++) expect(await first.check(keyId, 0, T)).toEqual(UNLIMITED);
    expect(await storedCount(keyId, T)).toBe(0);
  });

  it('uses the current time when none is given', async () => {
    const { first, storedCount } = getBackend();
    const keyId = newKeyId();
    const before = Date.now();
    const result = await first.check(keyId, 10);
    expect(result.allowed).toBe(true);
    expect(result.remaining).toBe(9);
    expect(result.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(result.retryAfterSeconds).toBeLessThanOrEqual(60);
    // Unless the minute turned during the call, the count is in the window of `before`.
    if (minuteWindow(before).start === minuteWindow(Date.now()).start) expect(await storedCount(keyId, before)).toBe(1);
  });

  it('rejects a negative limit', async () => {
    await expect(getBackend().first.check(newKeyId(), -1, T)).rejects.toThrow(RangeError);
  });
}

describe('RedisRateLimiter', () => {
  it('reaches the Redis server', () => expect(redisAvailable).toBe(true));
  // A prefix of its own per run, so runs never see each other's counters.
  const keyPrefix = `umg:rl:test-${randomBytes(6).toString('hex')}:`;
  let inspector: Redis;
  let backend: Backend;

  beforeAll(async () => {
    inspector = new Redis(REDIS_URL);
    const first = new RedisRateLimiter(REDIS_URL, { keyPrefix });
    const second = new RedisRateLimiter(REDIS_URL, { keyPrefix });
    backend = {
      first,
      second,
      async storedCount(keyId, now) {
        const value = await inspector.get(`${keyPrefix}${keyId}:${minuteWindow(now).start / 60_000}`);
        return Number(value ?? 0);
      },
    };
  });

  afterAll(async () => {
    await backend?.first.close();
    await backend?.second.close();
    if (inspector) {
      const keys = await inspector.keys(`${keyPrefix}*`);
      if (keys.length > 0) await inspector.del(...keys);
      await inspector.quit();
    }
  });

  describeLimiterContract(() => backend);

  it('keeps counters under umg:rl: with an expiry shortly after their window', async () => {
    const keyId = newKeyId();
    await backend.first.check(keyId, 5, T);
    const key = `${keyPrefix}${keyId}:${minuteWindow(T).start / 60_000}`;
    expect(key.startsWith('umg:rl:')).toBe(true);
    const ttl = await inspector.pttl(key);
    // 50 s left in the window plus one minute of grace.
    expect(ttl).toBeGreaterThan(100_000);
    expect(ttl).toBeLessThanOrEqual(110_000);
    await backend.first.check(keyId, 5, T + 20_000);
    expect(await inspector.pttl(key)).toBeGreaterThan(100_000 - 5_000);
  });

  it('uses the default umg:rl: prefix and leaves a borrowed connection open', async () => {
    const client = new Redis(REDIS_URL);
    const limiter = new RedisRateLimiter(client);
    const keyId = `test-${randomBytes(6).toString('hex')}`;
    await limiter.check(keyId, 5, T);
    const key = `umg:rl:${keyId}:${minuteWindow(T).start / 60_000}`;
    expect(await client.get(key)).toBe('1');
    await limiter.close();
    expect(await client.del(key)).toBe(1);
    await client.quit();
  });

  it.skipIf(process.env.TEST_REDIS_URL !== undefined)('writes into the tests\' own database (15), never database 0, by default', async () => {
    expect(REDIS_URL).toBe(`redis://127.0.0.1:6379/${TEST_REDIS_DB}`);
    const keyId = newKeyId();
    await backend.first.check(keyId, 5, T);
    const key = `${keyPrefix}${keyId}:${minuteWindow(T).start / 60_000}`;
    const databaseZero = new Redis('redis://127.0.0.1:6379/0');
    try {
      expect(await inspector.get(key)).toBe('1');
      expect(await databaseZero.exists(key)).toBe(0);
    } finally {
      await databaseZero.quit();
    }
  });

  it('is what createRateLimiter builds when given a Redis URL', async () => {
    const limiter = createRateLimiter({ redisUrl: REDIS_URL, db: undefined as unknown as Kysely<Database> });
    expect(limiter).toBeInstanceOf(GuardedRateLimiter);
    expect(limiter.backend).toBeInstanceOf(RedisRateLimiter);
    await limiter.close();
  });
});

describe('DatabaseRateLimiter on PostgreSQL', () => {
  it('reaches the PostgreSQL server', () => expect(postgresAvailable).toBe(true));
  let database: TestDatabase;
  let handles: DatabaseHandle[] = [];
  let backend: Backend;

  beforeAll(async () => {
    database = await createTestDatabase();
    // Two pools on one database: two gateway instances.
    handles = [
      await openDatabase({ databaseUrl: database.url, dataDir: '', poolSize: 10 }),
      await openDatabase({ databaseUrl: database.url, dataDir: '', poolSize: 10 }),
    ];
    await migrate(handles[0].db);
    backend = {
      first: new DatabaseRateLimiter(handles[0].db),
      second: new DatabaseRateLimiter(handles[1].db),
      storedCount: (keyId, now) => storedDatabaseCount(handles[0].db, keyId, now),
    };
  });

  afterAll(async () => {
    await backend?.first.close();
    await backend?.second.close();
    for (const handle of handles) await handle.close();
    await database?.drop();
  });

  describeLimiterContract(() => backend);

  it('prunes windows older than the retention', async () => {
    await expectPruning(handles[0].db);
  });
});

describe('DatabaseRateLimiter on PGlite', () => {
  let handle: DatabaseHandle;
  let backend: Backend;

  beforeAll(async () => {
    handle = await openDatabase({ dataDir: 'memory://' });
    await migrate(handle.db);
    backend = {
      first: new DatabaseRateLimiter(handle.db),
      second: new DatabaseRateLimiter(handle.db),
      storedCount: (keyId, now) => storedDatabaseCount(handle.db, keyId, now),
    };
  });

  afterAll(async () => {
    await backend?.first.close();
    await backend?.second.close();
    await handle?.close();
  });

  describeLimiterContract(() => backend);

  it('prunes windows older than the retention', async () => {
    await expectPruning(handle.db);
  });

  it('is what createRateLimiter builds without a Redis URL', async () => {
    const limiter = createRateLimiter({ db: handle.db });
    expect(limiter.backend).toBeInstanceOf(DatabaseRateLimiter);
    expect((await limiter.check(newKeyId(), 2, T)).allowed).toBe(true);
    await limiter.close();
  });
});

async function storedDatabaseCount(db: Kysely<Database>, keyId: string, now: number): Promise<number> {
  const { rows } = await sql<{ count: number }>`
    SELECT count FROM rate_limits WHERE key_id = ${keyId} AND window_start = ${new Date(minuteWindow(now).start)}
  `.execute(db);
  return rows.length === 0 ? 0 : Number(rows[0].count);
}

async function expectPruning(db: Kysely<Database>): Promise<void> {
  const keyId = newKeyId();
  // Far from the other tests' windows, so their rows stay.
  const past = Date.UTC(2020, 0, 1, 0, 0, 30);
  await new DatabaseRateLimiter(db).check(keyId, 5, past);
  await new DatabaseRateLimiter(db).check(keyId, 5, past + 4 * 60_000);
  expect(await storedDatabaseCount(db, keyId, past)).toBe(1);

  // A new instance prunes on its first check; close() waits for that.
  const pruner = new DatabaseRateLimiter(db, { retentionMs: 5 * 60_000 });
  await pruner.check(keyId, 5, past + 6 * 60_000);
  await pruner.close();
  expect(await storedDatabaseCount(db, keyId, past)).toBe(0);
  expect(await storedDatabaseCount(db, keyId, past + 4 * 60_000)).toBe(1);
  expect(await storedDatabaseCount(db, keyId, past + 6 * 60_000)).toBe(1);
}
