import { readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { deleteUndeclared, readCatalogRows, upsertModel, upsertProvider } from '../../db/queries/catalog.queries.js';
import { toMicroPrice, type MicroPrice } from '../billing/money.js';
import type { ProviderConnection } from '../providers/types.js';
import { catalogFileSchema, type CatalogFile, type Endpoint, type ModelEntry, type ProviderEntry } from './catalog.schema.js';
import { DEMO_CATALOG } from './demo-catalog.js';
import { issuePath } from '../validation.js';
import { kindServesEndpoint } from '../providers/registry.js';
import { MIN_SECRET_LENGTH } from '../upstream/secret-redactor.js';

export interface ResolvedDeployment {
  provider: ResolvedProvider;
  upstreamModel: string;
  priority: number;
  weight: number;
}

export interface ResolvedProvider extends ProviderConnection {
  entry: ProviderEntry;
}

/** A model as the hot path needs it: everything precomputed. */
export interface CatalogModel {
  id: string;
  ownedBy: string;
  created: number;
  entry: ModelEntry;
  endpoints: ReadonlySet<Endpoint>;
  price: MicroPrice;
  /** Deployments ordered by priority (the declared primary first). */
  deployments: ResolvedDeployment[];
  /**
   * The secrets of the model's providers (API keys, header values taken from
   * the environment), kept out of every error a client sees. Values shorter than
   * 8 characters are left out: they would blank ordinary words of a message.
   */
  secrets: string[];
  /** Public JSON of the model, serialised once. */
  publicJson: { id: string; object: 'model'; created: number; owned_by: string };
}

export class CatalogConfigError extends Error {}

/** Reads and validates a catalog file; errors name the file and the field. */
export function readCatalogFile(filePath: string): CatalogFile {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(filePath, 'utf8'));
  } catch (error) {
    throw new CatalogConfigError(`GATEWAY_CONFIG ${filePath}: ${(error as Error).message}`);
  }
  const result = catalogFileSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    throw new CatalogConfigError(`GATEWAY_CONFIG ${filePath}: ${issuePath(issue.path)}: ${issue.message}`);
  }
  return result.data;
}

export function loadCatalogSource(filePath: string | undefined): CatalogFile {
  const catalog = filePath ? readCatalogFile(filePath) : DEMO_CATALOG;
  const problem = findUnservedEndpoint(catalog);
  if (problem) throw new CatalogConfigError(`GATEWAY_CONFIG ${filePath ?? '(demo catalog)'}: ${problem}`);
  return catalog;
}

/**
 * A model that declares an endpoint one of its providers' kinds cannot serve
 * (speech on an `anthropic` provider, say) is refused when the catalog is
 * loaded, not on the first request.
 */
export function findUnservedEndpoint(catalog: CatalogFile): string | undefined {
  const kinds = new Map(catalog.providers.map((provider) => [provider.id, provider.kind]));
  for (const [index, model] of catalog.models.entries()) {
    const providers = [model.provider, ...(model.deployments ?? []).map((deployment) => deployment.provider)];
    for (const endpoint of model.endpoints) {
      for (const provider of providers) {
        const kind = kinds.get(provider);
        if (kind && !kindServesEndpoint(kind, endpoint)) {
          return `models.${index} (${model.id}): endpoint ${endpoint} cannot be served by provider "${provider}" of kind ${kind}`;
        }
      }
    }
  }
  return undefined;
}

/**
 * Writes the declared catalog to the database so that it is exactly what the
 * file declares: upserts what is declared, deletes what is not, keeps each
 * model's first `created` time. Idempotent; safe to run from several instances.
 */
export async function applyCatalog(db: Kysely<Database>, catalog: CatalogFile): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  await db.transaction().execute(async (trx) => {
    for (const provider of catalog.providers) {
      const row = {
        id: provider.id,
        kind: provider.kind,
        base_url: provider.baseUrl ?? 'mock://',
        api_key_ref: provider.apiKey ?? null,
        headers: JSON.stringify(provider.headers ?? {}),
        options: JSON.stringify(provider),
      };
      await upsertProvider(trx, row);
    }
    let position = 0;
    for (const model of catalog.models) {
      const row = { id: model.id, owned_by: model.ownedBy, created: now, definition: JSON.stringify(model), position: position++ };
      await upsertModel(trx, row);
    }
    const modelIds = catalog.models.map((model) => model.id);
    const providerIds = catalog.providers.map((provider) => provider.id);
    await deleteUndeclared(trx, modelIds, providerIds);
  });
}

/**
 * The `env:NAME` references of the catalog's providers (API keys, header
 * values) whose variable is unset or empty: such a provider starts without
 * its secret and its calls fail, so the start says which.
 */
export function findUnsetSecrets(catalog: CatalogFile, env: NodeJS.ProcessEnv): Array<{ provider: string; variable: string }> {
  const unset: Array<{ provider: string; variable: string }> = [];
  for (const provider of catalog.providers) {
    const references = [provider.apiKey, provider.vertex?.credentials, ...Object.values(provider.headers ?? {})];
    for (const reference of references) {
      if (reference?.startsWith('env:') && !env[reference.slice(4)]) unset.push({ provider: provider.id, variable: reference.slice(4) });
    }
  }
  return unset;
}

function resolveSecret(reference: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  if (!reference) return undefined;
  if (reference.startsWith('env:')) return env[reference.slice(4)];
  return reference;
}

function resolveProvider(entry: ProviderEntry, env: NodeJS.ProcessEnv): ResolvedProvider {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(entry.headers ?? {})) {
    const resolved = value.startsWith('env:') ? resolveSecret(value, env) : value;
    if (resolved !== undefined) headers[name.toLowerCase()] = resolved;
  }
  return {
    id: entry.id,
    kind: entry.kind,
    baseUrl: (entry.baseUrl ?? 'mock://').replace(/\/+$/, ''),
    apiKey: resolveSecret(entry.apiKey, env),
    headers,
    ...(entry.allowedBetas ? { allowedBetas: entry.allowedBetas } : {}),
    ...(entry.vertex
      ? { vertex: { project: entry.vertex.project, location: entry.vertex.location, credentials: resolveSecret(entry.vertex.credentials, env), tokenUrl: entry.vertex.tokenUrl } }
      : {}),
    entry,
  };
}

/** A provider's secrets: its API key and the header values taken from the environment (values under 8 characters left out). */
export function providerSecrets(provider: ResolvedProvider): string[] {
  const secrets = new Set<string>();
  if (provider.apiKey) secrets.add(provider.apiKey);
  for (const secret of vertexSecrets(provider.vertex?.credentials)) secrets.add(secret);
  for (const [name, value] of Object.entries(provider.entry.headers ?? {})) {
    const resolved = provider.headers?.[name.toLowerCase()];
    if (value.startsWith('env:') && resolved) secrets.add(resolved);
  }
  return [...secrets].filter((secret) => secret.length >= MIN_SECRET_LENGTH);
}

/** A Vertex service account key: the whole JSON text, and its private key and key id on their own (a provider could echo either). */
function vertexSecrets(credentials: string | undefined): string[] {
  if (!credentials) return [];
  const secrets = [credentials];
  try {
    const key = JSON.parse(credentials) as { private_key?: unknown; private_key_id?: unknown };
    if (typeof key.private_key === 'string') secrets.push(key.private_key, ...key.private_key.split('\n').filter((line) => line.length >= 40));
    if (typeof key.private_key_id === 'string') secrets.push(key.private_key_id);
  } catch {
    // Not JSON: the whole text is the secret.
  }
  return secrets;
}

function secretsOf(deployments: readonly ResolvedDeployment[]): string[] {
  return [...new Set(deployments.flatMap(({ provider }) => providerSecrets(provider)))];
}

/** The in-memory catalog the hot path reads; rebuilt from the database on start and on change. */
export class Catalog {
  private readonly models = new Map<string, CatalogModel>();
  private ordered: CatalogModel[] = [];
  /** `/v1/models` body, serialised once per catalog version. */
  listJson = '{"object":"list","data":[]}';

  get(modelId: string): CatalogModel | undefined {
    return this.models.get(modelId);
  }

  list(): readonly CatalogModel[] {
    return this.ordered;
  }

  async load(db: Kysely<Database>, env: NodeJS.ProcessEnv = process.env): Promise<void> {
    const { providers: providerRows, models: modelRows } = await readCatalogRows(db);
    const providers = new Map<string, ResolvedProvider>();
    for (const row of providerRows) providers.set(row.id, resolveProvider(row.options as unknown as ProviderEntry, env));
    const next: CatalogModel[] = [];
    for (const row of modelRows) {
      const entry = row.definition as unknown as ModelEntry;
      const primary = providers.get(entry.provider);
      if (!primary) continue;
      const deployments: ResolvedDeployment[] = [{ provider: primary, upstreamModel: entry.upstreamModel, priority: 0, weight: 1 }];
      for (const deployment of entry.deployments ?? []) {
        const provider = providers.get(deployment.provider);
        if (!provider) continue;
        deployments.push({
          provider,
          upstreamModel: deployment.upstreamModel ?? entry.upstreamModel,
          priority: deployment.priority ?? 0,
          weight: deployment.weight ?? 1,
        });
      }
      deployments.sort((a, b) => a.priority - b.priority);
      next.push({
        id: row.id,
        ownedBy: row.owned_by,
        created: Number(row.created),
        entry,
        endpoints: new Set(entry.endpoints),
        price: toMicroPrice(entry.pricing),
        deployments,
        secrets: secretsOf(deployments),
        publicJson: { id: row.id, object: 'model', created: Number(row.created), owned_by: row.owned_by },
      });
    }
    this.models.clear();
    for (const model of next) this.models.set(model.id, model);
    this.ordered = next;
    this.listJson = JSON.stringify({ object: 'list', data: next.map((model) => model.publicJson) });
  }
}
