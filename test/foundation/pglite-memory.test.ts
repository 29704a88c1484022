/**
 * The embedded database's memory: a new cluster is created (initdb) in a child process, so the
 * gateway's WebAssembly heap is only what opening the cluster costs, and its shared buffers are
 * 16 MB. Both show in a fresh data directory opened the way `npm start` opens it.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../db/client.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'umg-pglite-memory-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('embedded database memory', () => {
  it('creates a new cluster outside this process and opens it with small shared buffers', { timeout: 180_000 }, async () => {
    const dataDir = path.join(root, 'data');
    const externalBefore = process.memoryUsage().external;
    const database = await openDatabase({ dataDir });
    try {
      expect(existsSync(path.join(dataDir, 'PG_VERSION'))).toBe(true);
      const { rows } = await sql<{ shared_buffers: string }>`SHOW shared_buffers`.execute(database.db);
      expect(rows[0]?.shared_buffers).toBe('16MB');
      // initdb in this process would leave its ~600 MB heap here; opening costs ~150 MB.
      const grownMb = (process.memoryUsage().external - externalBefore) / 1048576;
      expect(grownMb).toBeLessThan(400);
    } finally {
      await database.close();
    }
    // A second open finds the cluster and creates nothing.
    const again = await openDatabase({ dataDir });
    const { rows } = await sql<{ one: number }>`SELECT 1 AS one`.execute(again.db);
    expect(rows[0]?.one).toBe(1);
    await again.close();
  });
});
