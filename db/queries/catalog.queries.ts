import type { Selectable } from 'kysely';
import type { Database } from '../schema.js';
import type { Executor } from './executor.js';

export type ProviderRow = Selectable<Database['providers']>;
export type ModelRow = Selectable<Database['models']>;

export interface ProviderRecord {
  id: string;
  kind: string;
  base_url: string;
  api_key_ref: string | null;
  headers: string;
  options: string;
}

export interface ModelRecord {
  id: string;
  owned_by: string;
  created: number;
  definition: string;
  position: number;
}

/** Inserts or updates a provider row. */
export async function upsertProvider(db: Executor, row: ProviderRecord): Promise<void> {
  await db
    .insertInto('providers')
    .values(row)
    .onConflict((oc) => oc.column('id').doUpdateSet({ ...row, updated_at: new Date() }))
    .execute();
}

/** Inserts or updates a model row, keeping the `created` time of its first insert. */
export async function upsertModel(db: Executor, row: ModelRecord): Promise<void> {
  await db
    .insertInto('models')
    .values(row)
    .onConflict((oc) => oc.column('id').doUpdateSet({ owned_by: row.owned_by, definition: row.definition, position: row.position, updated_at: new Date() }))
    .execute();
}

/** Deletes the models and providers a catalog no longer declares. */
export async function deleteUndeclared(db: Executor, modelIds: readonly string[], providerIds: readonly string[]): Promise<void> {
  await db.deleteFrom('models').where('id', 'not in', modelIds.length ? [...modelIds] : ['']).execute();
  await db.deleteFrom('providers').where('id', 'not in', providerIds.length ? [...providerIds] : ['']).execute();
}

/** Every provider, and every model in catalog order. */
export async function readCatalogRows(db: Executor): Promise<{ providers: ProviderRow[]; models: ModelRow[] }> {
  const providers = await db.selectFrom('providers').selectAll().execute();
  const models = await db.selectFrom('models').selectAll().orderBy('position').orderBy('id').execute();
  return { providers, models };
}
