import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../../db/client.js';
import { DatabaseRateLimiter } from './database-rate-limiter.js';

let database: DatabaseHandle;

beforeAll(async () => {
  database = await openDatabase({ dataDir: 'memory://' });
  await migrateToLatest(database.db);
});

afterAll(async () => {
  await database?.close();
});

describe('DatabaseRateLimiter reserving ahead for high limits', () => {
  it('never allows more than the limit across instances, and wastes at most what each reserved ahead', async () => {
    const a = new DatabaseRateLimiter(database.db);
    const b = new DatabaseRateLimiter(database.db);
    const now = Date.UTC(2026, 10, 22, 12, 0, 5);
    const limit = 640; // reserves 10 ahead per round trip
    let allowed = 0;
    for (let index = 0; index < 700; index++) {
      const result = await (index % 2 === 0 ? a : b).check('key-high', limit, now);
      if (result.allowed) allowed++;
    }
    expect(allowed).toBeLessThanOrEqual(limit);
    expect(allowed).toBeGreaterThanOrEqual(limit - 2 * 10);
    const rows = await database.db.selectFrom('rate_limits').selectAll().where('key_id', '=', 'key-high').execute();
    // One row, counted in steps of 11: far fewer statements than checks.
    expect(rows).toHaveLength(1);
  });

  it('serves concurrent checks of one key from one reservation: one upsert, not one per check', async () => {
    const limiter = new DatabaseRateLimiter(database.db);
    const now = Date.UTC(2026, 10, 22, 12, 2, 5);
    const limit = 64 * 64; // reserves 63 ahead: one round trip covers 64 requests
    const results = await Promise.all(Array.from({ length: 50 }, () => limiter.check('key-concurrent', limit, now)));
    expect(results.every((result) => result.allowed)).toBe(true);
    const row = await database.db.selectFrom('rate_limits').select('count').where('key_id', '=', 'key-concurrent').executeTakeFirstOrThrow();
    // Each check reserving on its own would have counted 50 × 64.
    expect(Number(row.count)).toBe(64);
    // The reservation's spare is used up in order: 63 left after the first, 14 after all 50.
    expect(results.map((result) => result.remaining).sort((a, b) => a - b)[0]).toBe(limit - 64 + 14);
  });

  it('refuses every concurrent check past the limit, however many wait on one reservation', async () => {
    const limiter = new DatabaseRateLimiter(database.db);
    const now = Date.UTC(2026, 10, 22, 12, 3, 5);
    const results = await Promise.all(Array.from({ length: 200 }, () => limiter.check('key-over', 128, now)));
    expect(results.filter((result) => result.allowed)).toHaveLength(128);
  });

  it('stays exact below 64 per minute', async () => {
    const a = new DatabaseRateLimiter(database.db);
    const b = new DatabaseRateLimiter(database.db);
    const now = Date.UTC(2026, 10, 22, 12, 1, 5);
    const results = [];
    for (let index = 0; index < 30; index++) results.push(await (index % 2 === 0 ? a : b).check('key-low', 20, now));
    expect(results.filter((result) => result.allowed)).toHaveLength(20);
    expect(results.slice(0, 20).every((result) => result.allowed)).toBe(true);
  });
});
