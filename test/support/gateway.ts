import { randomBytes } from 'node:crypto';
import { sha256 } from '../../server/admin-token.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { inject } from 'vitest';
import { createAccount, createKey, updateAccount } from '../../server/accounts/accounts.service.js';
import type { CatalogFile } from '../../server/catalog/catalog.schema.js';
import { readConfig, type GatewayConfig } from '../../server/config.js';
import { startGateway, type RunningGateway } from '../../server/gateway.js';
import { createLogger } from '../../server/logger.js';
import { createTestDatabase, usingPostgres, type TestDatabase } from './database.js';
import { migrateToLatest, openDatabase, type DatabaseHandle } from '../../db/client.js';

let snapshot: Promise<Blob> | undefined;

/**
 * A migrated, empty in-memory PGlite cluster that every gateway copies: the
 * run's (pglite-snapshot.setup.ts), or else made once per test process.
 */
function migratedPGliteSnapshot(): Promise<Blob> {
  snapshot ??= (async () => {
    const file = inject('pgliteSnapshotFile');
    if (file) return new Blob([readFileSync(file)]);
    const database = await openDatabase({ dataDir: 'memory://' });
    await migrateToLatest(database.db);
    const dump = await database.dump!();
    await database.close();
    return dump;
  })();
  return snapshot;
}

export interface TestGatewayOptions {
  catalog?: CatalogFile;
  /** Use this database URL (several instances on one PostgreSQL). */
  databaseUrl?: string;
  /**
   * An in-memory PGlite from {@link openSharedPGlite}, shared with other gateways of this
   * process (several instances on one embedded database); the test closes it after them.
   */
  sharedPGlite?: DatabaseHandle;
  /** Force a fresh PostgreSQL database even in a PGlite run. */
  postgres?: boolean;
  env?: Record<string, string>;
  config?: Partial<GatewayConfig>;
  /** Collects every log line the gateway writes (at `debug` level), e.g. to check that no secret or prompt text is logged. */
  logLines?: string[];
}

export interface TestGateway {
  gateway: RunningGateway;
  url: string;
  adminToken: string;
  databaseUrl: string | undefined;
  /** An account with a key, ready to call the API. */
  createAccountWithKey(options?: { plan?: string; credits?: number; ipAllowlist?: string[]; restrictedAccess?: boolean; vaultCredits?: number; dailyLimit?: number }): Promise<{ accountId: string; key: string; keyId: string }>;
  disableAccount(accountId: string): Promise<void>;
  close(): Promise<void>;
}

const sharedAdminTokens = new WeakMap<DatabaseHandle, string>();

/** One admin token per shared database, as on a PostgreSQL one. */
function sharedAdminToken(database: DatabaseHandle): string {
  let token = sharedAdminTokens.get(database);
  if (!token) sharedAdminTokens.set(database, (token = `test-admin-${randomBytes(8).toString('hex')}`));
  return token;
}

/** A migrated in-memory PGlite for several gateways of this process ({@link TestGatewayOptions.sharedPGlite}); close it after them. */
export async function openSharedPGlite(): Promise<DatabaseHandle> {
  return openDatabase({ dataDir: 'memory://', pgliteSnapshot: await migratedPGliteSnapshot() });
}

/**
 * Starts a real gateway in this process on a random port: on a fresh
 * PostgreSQL database when the suite runs with DATABASE_URL (or when asked),
 * otherwise on an in-memory PGlite.
 */
export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  let database: TestDatabase | undefined;
  let databaseUrl = options.databaseUrl;
  if (!databaseUrl && !options.sharedPGlite && (usingPostgres || options.postgres)) {
    database = await createTestDatabase();
    databaseUrl = database.url;
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'umg-test-'));
  let catalogFile: string | undefined;
  if (options.catalog) {
    catalogFile = path.join(dir, 'catalog.json');
    writeFileSync(catalogFile, JSON.stringify(options.catalog));
  }
  // The admin token is the database's (every instance on it checks the same one): gateways
  // started on one PostgreSQL database share it; each in-memory one has its own.
  const adminToken = databaseUrl
    ? `test-admin-${sha256(databaseUrl).slice(0, 16)}`
    : options.sharedPGlite
      ? sharedAdminToken(options.sharedPGlite)
      : `test-admin-${randomBytes(8).toString('hex')}`;
  const env = { ...process.env, ...options.env };
  // Every test client comes from 127.0.0.1: the per-address limit on failed
  // authentications would cut suites that test refusals; tests of the limit set it.
  const read = readConfig({ AUTH_FAILURES_PER_MINUTE: '100000', ...env, DATABASE_URL: databaseUrl ?? '' });
  const config: GatewayConfig = {
    ...read,
    port: 0,
    host: '::',
    dataDir: databaseUrl ? dir : 'memory://',
    catalogFile,
    adminToken,
    createDemoAccount: false,
    bootstrapKey: undefined,
    logLevel: 'silent',
    usageFlushMs: 20,
    ...options.config,
  };
  const gateway = await startGateway(config, {
    logger: options.logLines
      ? createLogger('debug', (line) => void options.logLines!.push(line))
      : createLogger(process.env.TEST_LOG ? 'debug' : 'silent'),
    env,
    pgliteSnapshot: databaseUrl || options.sharedPGlite ? undefined : await migratedPGliteSnapshot(),
    database: options.sharedPGlite,
  });
  const db = gateway.services.db;
  return {
    gateway,
    url: gateway.url.replace('[::]', '127.0.0.1'),
    adminToken: config.adminToken ?? '',
    databaseUrl,
    async createAccountWithKey(accountOptions = {}) {
      const account = await createAccount(db, {
        name: 'test',
        plan: accountOptions.plan ?? 'pro',
        credits: accountOptions.credits ?? 100,
        vaultCredits: accountOptions.vaultCredits,
        ipAllowlist: accountOptions.ipAllowlist,
        restrictedAccess: accountOptions.restrictedAccess,
        dailyLimit: accountOptions.dailyLimit,
      });
      const { key, record } = await createKey(db, account.id, 'test');
      return { accountId: account.id, key, keyId: record.id };
    },
    async disableAccount(accountId) {
      await updateAccount(db, accountId, { disabled: true });
    },
    async close() {
      await gateway.stop();
      await database?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
