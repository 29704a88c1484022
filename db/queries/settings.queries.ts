import type { Executor } from './executor.js';

/** The value of a setting, or undefined. */
export async function readSetting(db: Executor, key: string): Promise<unknown> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value;
}

/**
 * Stores `value` under `key` unless the key exists, and answers the stored
 * value: the first instance to write wins, and every instance reads the same.
 */
export async function insertSettingIfAbsent(db: Executor, key: string, value: unknown): Promise<unknown> {
  await db
    .insertInto('settings')
    .values({ key, value: JSON.stringify(value) })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  return readSetting(db, key);
}

/** The value of a setting, the row locked until the transaction ends; undefined when unset. */
export async function readSettingForUpdate(db: Executor, key: string): Promise<unknown> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).forUpdate().executeTakeFirst();
  return row?.value;
}

/** Stores `value` under `key`, replacing what was there. */
export async function writeSetting(db: Executor, key: string, value: unknown): Promise<void> {
  const json = JSON.stringify(value);
  await db
    .insertInto('settings')
    .values({ key, value: json })
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: json }))
    .execute();
}
