import { readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import { parseDocument } from 'yaml';
import type { Database } from '../../db/schema.js';
import { deleteUndeclared, readCatalogRows, upsertModel, upsertProvider } from '../../db/queries/catalog.queries.js';
import { readSetting, writeSetting } from '../../db/queries/settings.queries.js';
import type { MicroPrice } from '../billing/money.js';
import type { ProviderConnection } from '../providers/types.js';
import { catalogFileSchema, toMicroPrice, type CatalogFile, type Endpoint, type ModelEntry, type ProviderEntry } from './catalog.schema.js';
import { DEMO_CATALOG } from './demo-catalog.js';
import { issuePath } from '../validation.js';
import { kindServesEndpoint } from '../providers/registry.js';
import { bedrockEndpoint } from '../providers/bedrock/bedrock-signing.js';
import { MIN_SECRET_LENGTH } from '../logger.js';
import { RestrictedFamilies, type RestrictedFamily } from '../restricted/families.js';

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
  /** The restricted family of the model in this catalog version (undefined when it needs no grant). */
  restrictedFamily: RestrictedFamily | undefined;
  /** Public JSON of the model, serialised once. */
  publicJson: { id: string; object: 'model'; created: number; owned_by: string };
}

export class CatalogConfigError extends Error {}

/** Line and column (1-based) of a character offset, for parse errors. */
function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, Math.max(0, offset));
  const line = before.split('\n').length;
  return `line ${line}, column ${offset - before.lastIndexOf('\n')}`;
}

/**
 * The file's text as a value: YAML for `.yaml`/`.yml`, JSON otherwise. A
 * syntax error says where, never quoting the text around it (a secret pasted
 * into the file by mistake would reach the log and the reload's answer).
 */
function parseCatalogText(filePath: string, text: string): unknown {
  if (/\.ya?ml$/i.test(filePath)) {
    const document = parseDocument(text, { prettyErrors: false });
    const error = document.errors[0];
    if (error) throw new Error(`not valid YAML at ${lineAndColumn(text, error.pos[0])}: ${error.message}`);
    return document.toJS();
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const position = /at position (\d+)/.exec(message);
    // V8 quotes the text around an unexpected token (`Unexpected token 'x', "…" is not valid JSON`): only the token is kept.
    const reason = message.split(/, (?:"|\.\.\.)/)[0]!.replace(/ in JSON at position \d+.*$/s, '');
    throw new Error(`not valid JSON${position ? ` at ${lineAndColumn(text, Number(position[1]))}` : ''}: ${reason}`);
  }
}

/** Reads and validates a catalog file (JSON, or YAML by its extension); errors name the file and the field. */
export function readCatalogFile(filePath: string): CatalogFile {
  let raw: unknown;
  try {
    raw = parseCatalogText(filePath, readFileSync(filePath, 'utf8'));
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

/** The settings key of the catalog's `families` (every instance builds its restricted families from it). */
const FAMILIES_SETTING = 'catalog_families';

/**
 * Writes the declared catalog to the database so that it is exactly what the
 * file declares: upserts what is declared, deletes what is not, keeps each
 * model's first `created` time, stores the families. Idempotent; safe to run
 * from several instances.
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
    await writeSetting(trx, FAMILIES_SETTING, catalog.families ?? {});
  });
}

/**
 * The `env:NAME` references of the catalog's providers (API keys, header
 * values) whose variable is unset or empty: such a provider starts without
 * its secret and its calls fail, so the start says which.
 */
export function findUnsetSecrets(catalog: Pick<CatalogFile, 'providers'>, env: NodeJS.ProcessEnv): Array<{ provider: string; variable: string }> {
  const unset: Array<{ provider: string; variable: string }> = [];
  for (const provider of catalog.providers) {
    const references = [provider.apiKey, ...Object.values(provider.headers ?? {}), provider.azure?.entraToken, ...awsReferences(provider)];
    for (const reference of references) {
      if (reference?.startsWith('env:') && !env[reference.slice(4)]) unset.push({ provider: provider.id, variable: reference.slice(4) });
    }
  }
  return unset;
}

/** The `env:` references of a provider's AWS credentials. */
function awsReferences(provider: ProviderEntry): string[] {
  const aws = provider.aws;
  return aws ? [aws.accessKeyId, aws.secretAccessKey, ...(aws.sessionToken ? [aws.sessionToken] : [])] : [];
}

/** Where a provider without `baseUrl` is reached: a Bedrock region's endpoint, or nowhere (the mock). */
function defaultBaseUrl(entry: ProviderEntry): string {
  return entry.kind === 'bedrock' && entry.aws ? bedrockEndpoint(entry.aws.region) : 'mock://';
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
    baseUrl: (entry.baseUrl ?? defaultBaseUrl(entry)).replace(/\/+$/, ''),
    apiKey: resolveSecret(entry.apiKey, env),
    headers,
    ...(entry.allowedBetas ? { allowedBetas: entry.allowedBetas } : {}),
    ...(entry.azure ? { azure: { apiVersion: entry.azure.apiVersion, entraToken: resolveSecret(entry.azure.entraToken, env) } } : {}),
    ...(entry.aws
      ? {
          aws: {
            region: entry.aws.region,
            accessKeyId: resolveSecret(entry.aws.accessKeyId, env),
            secretAccessKey: resolveSecret(entry.aws.secretAccessKey, env),
            sessionToken: resolveSecret(entry.aws.sessionToken, env),
          },
        }
      : {}),
    entry,
  };
}

/**
 * A provider's secrets: its API key, Azure's Entra ID token, its AWS credentials (the key id too:
 * not secret by AWS's rules, but no client needs to see it) and the header values taken from the
 * environment (values under 8 characters left out).
 */
export function providerSecrets(provider: ResolvedProvider): string[] {
  const secrets = new Set<string>();
  if (provider.apiKey) secrets.add(provider.apiKey);
  if (provider.azure?.entraToken) secrets.add(provider.azure.entraToken);
  if (provider.aws?.accessKeyId) secrets.add(provider.aws.accessKeyId);
  if (provider.aws?.secretAccessKey) secrets.add(provider.aws.secretAccessKey);
  if (provider.aws?.sessionToken) secrets.add(provider.aws.sessionToken);
  for (const [name, value] of Object.entries(provider.entry.headers ?? {})) {
    const resolved = provider.headers?.[name.toLowerCase()];
    if (value.startsWith('env:') && resolved) secrets.add(resolved);
  }
  return [...secrets].filter((secret) => secret.length >= MIN_SECRET_LENGTH);
}

function secretsOf(deployments: readonly ResolvedDeployment[]): string[] {
  return [...new Set(deployments.flatMap(({ provider }) => providerSecrets(provider)))];
}

/**
 * One version of the catalog, never changed once built: a request that
 * resolved a model keeps that model (its deployments, price and family) to
 * the end, whatever reload happens meanwhile.
 */
export interface CatalogSnapshot {
  readonly models: ReadonlyMap<string, CatalogModel>;
  /** In catalog order. */
  readonly ordered: readonly CatalogModel[];
  /** Every provider declared (one no model uses included), by id. */
  readonly providers: ReadonlyMap<string, ResolvedProvider>;
  /** The restricted families and their usage-check policies. */
  readonly restricted: RestrictedFamilies;
}

const EMPTY_SNAPSHOT: CatalogSnapshot = { models: new Map(), ordered: [], providers: new Map(), restricted: new RestrictedFamilies({}) };

/** Builds a snapshot from the catalog rows of the database and the environment's secrets. */
async function readCatalogSnapshot(db: Kysely<Database>, env: NodeJS.ProcessEnv): Promise<CatalogSnapshot> {
  const { providers: providerRows, models: modelRows } = await readCatalogRows(db);
  const families = (await readSetting(db, FAMILIES_SETTING)) as CatalogFile['families'] | undefined;
  const restricted = new RestrictedFamilies({ families: families ?? {} });
  const providers = new Map<string, ResolvedProvider>();
  for (const row of providerRows) providers.set(row.id, resolveProvider(row.options as unknown as ProviderEntry, env));
  const ordered: CatalogModel[] = [];
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
    ordered.push({
      id: row.id,
      ownedBy: row.owned_by,
      created: Number(row.created),
      entry,
      endpoints: new Set(entry.endpoints),
      price: toMicroPrice(entry.pricing),
      deployments,
      secrets: secretsOf(deployments),
      restrictedFamily: restricted.familyOf(entry),
      publicJson: { id: row.id, object: 'model', created: Number(row.created), owned_by: row.owned_by },
    });
  }
  return {
    models: new Map(ordered.map((model) => [model.id, model])),
    ordered,
    providers,
    restricted,
  };
}

/** Called in the same turn a new snapshot takes over, before any request can read it. */
export type CatalogSwapListener = (previous: CatalogSnapshot, next: CatalogSnapshot) => void;

/**
 * The in-memory catalog the hot path reads: the current snapshot, read from
 * the database at start and again on every reload (one instance's, or
 * another's announced through NOTIFY), and replaced whole.
 */
export class Catalog {
  private current: CatalogSnapshot = EMPTY_SNAPSHOT;
  /** The load under way, and one queued behind it (later calls share the queued one). */
  private running: Promise<unknown> = Promise.resolve();
  private queued: Promise<CatalogSnapshot> | undefined;
  private readonly listeners: CatalogSwapListener[] = [];

  /** @param env where `env:NAME` secrets of the providers are read. */
  constructor(readonly env: NodeJS.ProcessEnv = process.env) {}

  get snapshot(): CatalogSnapshot {
    return this.current;
  }

  get(modelId: string): CatalogModel | undefined {
    return this.current.models.get(modelId);
  }

  list(): readonly CatalogModel[] {
    return this.current.ordered;
  }

  /** Runs `listener` at every swap after this call (not for the current snapshot). */
  onSwap(listener: CatalogSwapListener): void {
    this.listeners.push(listener);
  }

  /**
   * Reads the catalog from the database and makes it the current snapshot.
   * Loads run one after the other, so the last one started is the one that
   * stays; calls made while one is queued share it.
   */
  load(db: Kysely<Database>): Promise<CatalogSnapshot> {
    if (this.queued) return this.queued;
    const next = this.running.then(
      () => this.loadNow(db),
      () => this.loadNow(db),
    );
    this.queued = next;
    this.running = next;
    return next;
  }

  private async loadNow(db: Kysely<Database>): Promise<CatalogSnapshot> {
    // From here on a new call queues another read: it may follow a change this one missed.
    this.queued = undefined;
    const next = await readCatalogSnapshot(db, this.env);
    const previous = this.current;
    this.current = next;
    for (const listener of this.listeners) listener(previous, next);
    return next;
  }
}
