/**
 * Catalog reload without a restart. `reloadCatalog` (SIGHUP, `admin.catalog.reload`)
 * reads GATEWAY_CONFIG again, validates it whole, writes it to the database
 * and announces it; every instance on the database (this one at once, the
 * others through NOTIFY) then reads the catalog from the database and swaps
 * its snapshot. A file that fails validation changes nothing anywhere.
 *
 * Requests in flight keep the model they resolved (snapshots are never
 * changed); what the instance derives from the catalog — restricted families,
 * provider health, the logger's secrets, metric labels — follows each swap.
 */
import { notify, type DatabaseHandle } from '../db/client.js';
import type { Logger } from './logger.js';
import type { Services } from './services.js';
import { applyCatalog, CatalogConfigError, findUnsetSecrets, loadCatalogSource, type Catalog, type CatalogSnapshot } from './catalog/catalog.js';

/** The notification every instance reloads its catalog on. */
export const CATALOG_CHANNEL = 'umg_catalog';

/** What a reload did, as the admin procedure answers it. */
export interface CatalogReloadResult {
  file: string;
  /** Models and providers of the new catalog. */
  models: number;
  providers: number;
  /** Model ids new to the catalog, gone from it, and kept with another definition. */
  added: string[];
  removed: string[];
  changed: string[];
  /** `env:NAME` references this instance cannot resolve (those providers' calls fail here). */
  unsetSecrets: Array<{ provider: string; variable: string }>;
}

/** What asked for a reload (logged). */
export type ReloadTrigger = 'sighup' | 'admin';

function unsetSecretsOf(snapshot: CatalogSnapshot, env: NodeJS.ProcessEnv): CatalogReloadResult['unsetSecrets'] {
  return findUnsetSecrets({ providers: [...snapshot.providers.values()].map((provider) => provider.entry) }, env);
}

function compare(previous: CatalogSnapshot, next: CatalogSnapshot): Pick<CatalogReloadResult, 'added' | 'removed' | 'changed'> {
  const added = next.ordered.filter((model) => !previous.models.has(model.id)).map((model) => model.id);
  const removed = previous.ordered.filter((model) => !next.models.has(model.id)).map((model) => model.id);
  const changed = next.ordered
    .filter((model) => {
      const before = previous.models.get(model.id);
      return before !== undefined && JSON.stringify(before.entry) !== JSON.stringify(model.entry);
    })
    .map((model) => model.id);
  return { added, removed, changed };
}

/**
 * Brings what is derived from the catalog in line with a new snapshot, in
 * the turn it takes over: the restricted families, the logger's secrets
 * (added, never removed: a request in flight may still see an old one), the
 * health of deployments that are gone, and metric series of models and
 * providers that are gone.
 */
export function followSwap(services: Services, catalog: Catalog, previous: CatalogSnapshot, next: CatalogSnapshot): void {
  services.restricted = next.restricted;
  services.log.addSecrets(next.ordered.flatMap((model) => model.secrets));
  const deployed = new Set(next.ordered.flatMap((model) => model.deployments.map((deployment) => `${model.id}\u0000${deployment.provider.id}`)));
  services.providerHealth.forget((model, provider) => deployed.has(`${model}\u0000${provider}`));
  const goneModels = new Set([...previous.models.keys()].filter((id) => !next.models.has(id)));
  const goneProviders = new Set([...previous.providers.keys()].filter((id) => !next.providers.has(id)));
  services.observability.metrics
    .forgetCatalogLabels(goneModels, goneProviders)
    .catch((error: Error) => services.log.warn('catalog.metrics_prune_failed', { message: error.message }));
  const { added, removed, changed } = compare(previous, next);
  // The instance that reloaded reads the catalog twice (its own load, then the database's notification): the second changes nothing and says nothing.
  if (added.length + removed.length + changed.length > 0 || goneProviders.size > 0) {
    services.log.info('catalog.loaded', { instance: services.instanceId, models: next.ordered.length, added, removed, changed });
  }
  for (const { provider, variable } of unsetSecretsOf(next, catalog.env)) {
    const before = previous.providers.get(provider);
    if (before && JSON.stringify(before.entry) === JSON.stringify(next.providers.get(provider)?.entry)) continue;
    services.log.warn('catalog.secret_unset', { provider, variable, message: `Provider "${provider}" references env:${variable}, which is not set: its calls will fail.` });
  }
}

/**
 * Keeps this instance's catalog equal to the database's: reloads it when an
 * instance announces a new one, and when notifications may have been missed.
 */
export async function followCatalog(database: DatabaseHandle, catalog: Catalog, log: Logger): Promise<void> {
  const reload = () => {
    catalog.load(database.db).catch((error: Error) => log.warn('catalog.reload_failed', { source: 'database', message: error.message }));
  };
  await database.listen(CATALOG_CHANNEL, reload, reload);
  // A reload made between this instance's first read and its subscription is not missed.
  reload();
}

/**
 * Reads GATEWAY_CONFIG again and, when it is valid, makes it the catalog of
 * every instance on the database; answers once this instance serves it.
 * Throws {@link CatalogConfigError} (nothing changed) when the file is
 * missing, unreadable or invalid.
 */
export async function reloadCatalog(services: Services, trigger: ReloadTrigger): Promise<CatalogReloadResult> {
  try {
    const result = await applyCatalogFile(services);
    services.log.info('catalog.reloaded', { trigger, file: result.file, models: result.models, added: result.added, removed: result.removed, changed: result.changed });
    return result;
  } catch (error) {
    const message = error instanceof CatalogConfigError ? `${error.message} (the running catalog stays)` : `The catalog could not be written to the database: ${(error as Error).message}`;
    services.log.warn('catalog.reload_failed', { trigger, message });
    throw error;
  }
}

async function applyCatalogFile(services: Services): Promise<CatalogReloadResult> {
  const file = services.config.catalogFile;
  if (!file) throw new CatalogConfigError('GATEWAY_CONFIG is not set: this instance serves the built-in demo catalog, and there is no file to reload.');
  const source = loadCatalogSource(file);
  const previous = services.catalog.snapshot;
  await applyCatalog(services.db, source);
  // This instance's subscriber starts its reload inside notify(); the load below joins it.
  await notify(services.db, CATALOG_CHANNEL, services.instanceId);
  const next = await services.catalog.load(services.db);
  return {
    file,
    models: next.ordered.length,
    providers: next.providers.size,
    ...compare(previous, next),
    unsetSecrets: unsetSecretsOf(next, services.catalog.env),
  };
}
