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
