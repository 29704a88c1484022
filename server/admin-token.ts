import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { notify, type DatabaseHandle } from '../db/client.js';
import type { Database } from '../db/schema.js';
import { insertSettingIfAbsent, readSetting, writeSetting } from '../db/queries/settings.queries.js';
import type { GatewayConfig } from './config.js';
import type { Logger } from './logger.js';

/**
 * The admin token of a fleet: one per database. Its SHA-256 is stored in the
 * settings table, and every instance on the database checks that hash (kept
 * in memory, followed through a notification when it changes). It is set by
 * GATEWAY_ADMIN_TOKEN (an instance starting with it makes it the database's
 * token), by `admin-token:rotate`, or generated on the first start of an
 * empty database, when it is also written to DATA_DIR/admin-token. That file
 * is written only then, and never replaced.
 */

export const ADMIN_TOKEN_FILE = 'admin-token';
export const ADMIN_TOKEN_CHANNEL = 'umg_admin_token';
const ADMIN_SETTING = 'admin_token_hash';

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export function adminTokenFilePath(dataDir: string): string {
  return path.join(dataDir, ADMIN_TOKEN_FILE);
}

/** An in-memory database has no data directory to write a file into. */
function hasDataDirectory(dataDir: string): boolean {
  return !dataDir.startsWith('memory://');
}

export function readAdminTokenFile(dataDir: string): string | undefined {
  try {
    return readFileSync(adminTokenFilePath(dataDir), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

export function generateAdminToken(): string {
  return `umg-admin-${randomBytes(24).toString('base64url')}`;
}

/** The hash every instance checks, or undefined before the first start. */
export async function readAdminTokenHash(db: Kysely<Database>): Promise<string | undefined> {
  const stored = await readSetting(db, ADMIN_SETTING);
  return typeof stored === 'string' ? stored : undefined;
}

/** Makes `token` the database's admin token and tells every instance. */
async function storeAdminToken(db: Kysely<Database>, token: string): Promise<string> {
  const hash = sha256(token);
  await writeSetting(db, ADMIN_SETTING, hash);
  await notify(db, ADMIN_TOKEN_CHANNEL, 'changed');
  return hash;
}

/** A new admin token for every instance on this database; the only time it is shown. */
export async function rotateAdminToken(db: Kysely<Database>): Promise<string> {
  const token = generateAdminToken();
  await storeAdminToken(db, token);
  return token;
}

/** A token file in DATA_DIR that is not the database's token would make the CLI on this machine fail: say so at start. */
function warnOfStaleFile(config: GatewayConfig, hash: string, log: Logger): void {
  if (!hasDataDirectory(config.dataDir)) return;
  const fileToken = readAdminTokenFile(config.dataDir);
  if (fileToken !== undefined && sha256(fileToken) !== hash) {
    log.warn('admin.token_file_stale', {
      file: adminTokenFilePath(config.dataDir),
      message: "This file's token is not this database's admin token (the CLI reading it gets 401). Delete it, or set GATEWAY_ADMIN_TOKEN for the CLI.",
    });
  }
}

/**
 * At start: the admin token's hash. GATEWAY_ADMIN_TOKEN becomes the
 * database's token (so the same value on every instance is the fleet's
 * token). Without it the database's token stays; on an empty database a
 * token file already in DATA_DIR is taken over, or a new token is generated
 * and written there (never over an existing file).
 */
export async function ensureAdminToken(db: Kysely<Database>, config: GatewayConfig, log: Logger): Promise<string> {
  const existing = await readAdminTokenHash(db);
  if (config.adminToken) {
    const hash = sha256(config.adminToken);
    if (existing !== hash) {
      await storeAdminToken(db, config.adminToken);
      // Another token was in force: every instance on the database now takes this one.
      if (existing !== undefined) log.warn('admin.token_replaced', { source: 'GATEWAY_ADMIN_TOKEN' });
    }
    warnOfStaleFile(config, hash, log);
    return hash;
  }
  if (existing !== undefined) {
    warnOfStaleFile(config, existing, log);
    return existing;
  }
  const fileToken = hasDataDirectory(config.dataDir) ? readAdminTokenFile(config.dataDir) : undefined;
  if (fileToken !== undefined) {
    const stored = (await insertSettingIfAbsent(db, ADMIN_SETTING, sha256(fileToken))) as string;
    if (stored === sha256(fileToken)) log.info('admin.token_adopted', { file: adminTokenFilePath(config.dataDir) });
    return stored;
  }
  const token = generateAdminToken();
  const hash = sha256(token);
  // Another instance starting at the same moment may win; then its token is the one.
  const stored = (await insertSettingIfAbsent(db, ADMIN_SETTING, hash)) as string;
  if (stored !== hash) return stored;
  if (!hasDataDirectory(config.dataDir)) return hash;
  mkdirSync(config.dataDir, { recursive: true });
  const file = adminTokenFilePath(config.dataDir);
  try {
    // `wx`: never over a file that appeared meanwhile.
    writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
    chmodSync(file, 0o600);
    log.info('admin.token_created', { file });
  } catch (error) {
    log.warn('admin.token_file_not_written', { file, message: (error as Error).message });
  }
  return hash;
}

/**
 * Keeps `target.adminTokenHash` equal to the database's: re-read when an
 * instance announces a change, and when notifications may have been missed.
 * Only admin calls read it; the API's hot path is not involved.
 */
export async function followAdminToken(database: DatabaseHandle, target: { adminTokenHash: string }, log: Logger): Promise<void> {
  const reload = () => {
    readAdminTokenHash(database.db).then(
      (hash) => {
        if (hash !== undefined) target.adminTokenHash = hash;
      },
      (error: Error) => log.warn('admin.token_reload_failed', { message: error.message }),
    );
  };
  await database.listen(ADMIN_TOKEN_CHANNEL, reload, reload);
  // A change made between this instance's first read and its subscription is not missed.
  reload();
}
