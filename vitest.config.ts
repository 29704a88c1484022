import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'server/**/*.test.ts', 'routers/**/*.test.ts', 'compat/**/*.test.ts', 'db/**/*.test.ts'],
    // One migrated PGlite cluster per run, copied by every in-memory test gateway.
    globalSetup: ['test/support/pglite-snapshot.setup.ts'],
    // Budgets for a shared two-core machine under load, not expectations: a
    // timeout only decides how long a hung test takes to be reported. Seen at
    // a load average of 18–20 on two cores: an in-memory gateway started in a
    // fresh test process 30 s (before the run-wide snapshot; ~8 s after), a
    // gateway process spawned with tsx 10–25 s to answer, one admin CLI run
    // 10–23 s, the slowest single test ~25 s. The heaviest beforeAll hooks
    // start two gateways on a new PostgreSQL database plus upstream servers,
    // or wait up to 16 s for the 18:00 Berlin discount rotation to pass; one
    // such hook timed out at the old 60 s. 180 s is three times that; 90 s per
    // test is more than three times the slowest one seen. Files that spawn
    // processes inside a test set their own, larger budgets.
    testTimeout: 90_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: true,
    maxWorkers: 2,
  },
});
