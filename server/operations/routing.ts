/**
 * Routing, shared by every operation: which model, whether the account may
 * use it, which deployments in which order, what a bridge reports and
 * whether strict mode refuses it, and the one failover loop over deployments.
 */
import type { AuthContext } from '../auth/authenticate.js';
import type { Catalog, CatalogModel, ResolvedDeployment } from '../catalog/catalog.js';
import type { Endpoint } from '../catalog/catalog.schema.js';
import { GatewayError, UpstreamError } from '../errors.js';
import type { BridgeReport } from '../providers/canonical.js';
import { adapterFor, type Operation, type OperationAdapters } from '../providers/registry.js';
import type { UpstreamTransport } from '../providers/types.js';
import type { GatewayConfig } from '../config.js';
import type { Observability } from '../observability/observability.js';
import type { Services } from '../services.js';
import { createTransport } from '../upstream/transport.js';
import type { RequestObservation } from '../observability/observation.js';
import { hasLiveGrant } from '../restricted/grants.js';

/** Everything an operation needs from its procedure's context. */
export interface OperationContext {
  services: Services;
  auth: AuthContext;
  requestId: string;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  /** Request headers a procedure may forward or obey (anthropic-version, anthropic-beta, x-gateway-strict). */
  headers: Readonly<Record<string, string | undefined>>;
  /** Query string of the public route (e.g. `beta=true`). */
  query: string;
  /** `performance.now()` when the request arrived. */
  receivedAt: number;
  /** Whether the caller can read a streamed answer (compat and internal callers can; plain `/trpc` HTTP cannot). */
  canStream: boolean;
  /** The client's address (kept with a usage review of the restricted family). */
  clientAddress?: string;
  /** What the request did, for metrics, the access log and spans (absent for background jobs). */
  observation?: RequestObservation;
}

/** What model resolution reads: the catalog and the restricted families. */
export interface ModelDeps {
  catalog: Pick<Catalog, 'get'>;
}

/** Resolves the model and checks what the account may do with it, before anything is held or sent. */
export function resolveModel(services: ModelDeps, auth: AuthContext, modelId: unknown, endpoint: Endpoint): CatalogModel {
  if (typeof modelId !== 'string' || modelId === '') {
    throw new GatewayError('INVALID_REQUEST', "Invalid value for 'model': a model id is required.", { param: 'model' });
  }
  const model = services.catalog.get(modelId);
  if (!model) throw new GatewayError('MODEL_NOT_FOUND', `The model '${modelId}' does not exist.`, { param: 'model' });
  if (!model.endpoints.has(endpoint)) {
    throw new GatewayError('UNSUPPORTED_ENDPOINT', `The model '${modelId}' does not support ${endpoint}.`, { param: 'model' });
  }
  // A restricted family needs a live grant, checked from the cached account (expiry at request time).
  const family = model.restrictedFamily;
  if (family !== undefined && !hasLiveGrant(auth.account, family.name, Date.now())) {
    throw new GatewayError('ACCESS_NOT_GRANTED', `The model '${modelId}' belongs to the restricted family '${family.name}', which this account has no access grant for.`, { param: 'model' });
  }
  return model;
}

/** A stream asked for by a caller that cannot read one is refused before anything is held. */
export function assertCanStream(context: OperationContext, stream: boolean): void {
  if (stream && !context.canStream) {
    throw new GatewayError('INVALID_REQUEST', 'Streamed answers are served on the /v1 routes, not over /trpc.', { param: 'stream' });
  }
}

/** Deployments in the order to try: by priority, and weighted-random within one priority. */
export function orderDeployments(deployments: readonly ResolvedDeployment[], random = Math.random): ResolvedDeployment[] {
  if (deployments.length <= 1) return [...deployments];
  const ordered: ResolvedDeployment[] = [];
  const byPriority = new Map<number, ResolvedDeployment[]>();
  for (const deployment of deployments) {
    const group = byPriority.get(deployment.priority);
    if (group) group.push(deployment);
    else byPriority.set(deployment.priority, [deployment]);
  }
  for (const priority of [...byPriority.keys()].sort((a, b) => a - b)) {
    const group = [...byPriority.get(priority)!];
    while (group.length > 0) {
      const total = group.reduce((sum, deployment) => sum + deployment.weight, 0);
      let pick = random() * total;
      let index = 0;
      while (index < group.length - 1 && pick >= group[index]!.weight) {
        pick -= group[index]!.weight;
        index++;
      }
      ordered.push(group.splice(index, 1)[0]!);
    }
  }
  return ordered;
}

/** Strict mode: the `x-gateway-strict` header, else the model's `strict` setting. */
export function isStrict(context: OperationContext, model: CatalogModel): boolean {
  const header = context.headers['x-gateway-strict'];
  if (header !== undefined) return header === 'true' || header === '1';
  return model.entry.strict === true;
}

export function mergeReports(a: BridgeReport, b: BridgeReport): BridgeReport {
  return { dropped: [...new Set([...a.dropped, ...b.dropped])], approximated: [...new Set([...a.approximated, ...b.approximated])] };
}

/** Header values carry ISO-8859-1 at most: other characters of a reported name are escaped, never a 500. */
function toHeaderValue(names: readonly string[]): string {
  return names.join(', ').replace(/[^\x20-\x7e]/g, (character) => encodeURIComponent(character));
}

/** Fidelity: the headers naming what a bridge dropped or approximated; in strict mode a drop is refused instead. */
export function fidelityHeaders(report: BridgeReport, strict: boolean): Record<string, string> {
  if (strict && report.dropped.length > 0) {
    throw new GatewayError('UNSUPPORTED_FEATURE', `The selected provider cannot carry: ${report.dropped.join(', ')} (strict mode).`, {
      param: report.dropped[0] ?? null,
    });
  }
  const headers: Record<string, string> = {};
  if (report.dropped.length > 0) headers['x-gateway-dropped-params'] = toHeaderValue(report.dropped);
  if (report.approximated.length > 0) headers['x-gateway-approximated-params'] = toHeaderValue(report.approximated);
  return headers;
}

/** Failures that another deployment may not share: the provider unreachable, overloaded, slow or failing. */
export function canFallOver(error: UpstreamError): boolean {
  return error.retryable || error.timeout || error.status === 0 || error.status >= 500 || error.status === 429;
}

export interface DeploymentAttempt<Op extends Operation> {
  deployment: ResolvedDeployment;
  adapter: OperationAdapters[Op];
  transport: UpstreamTransport;
  /** Whether another deployment follows this one. */
  last: boolean;
}

/** What the failover loop uses: deployment health, the upstream client and its timeouts, attempt metrics and the log. */
export interface RoutingDeps extends Pick<Services, 'providerHealth' | 'upstream' | 'log'> {
  config: Pick<GatewayConfig, 'upstream'>;
  observability: Pick<Observability, 'attempt'>;
}

/** What the failover loop needs of its caller: a request's context, or a background job's (videos). */
export interface RoutingContext {
  services: RoutingDeps;
  requestId: string;
  signal: AbortSignal;
  observation?: RequestObservation;
}

export interface RouteOptions {
  /** Retries per deployment; the provider's own setting otherwise. */
  maxRetries?: number;
  /** Abort signal of the upstream calls (the client's, or one that also stops an abandoned answer). */
  signal?: AbortSignal;
}

/**
 * Runs `attempt` on the model's deployments in order until one answers:
 * a failure another deployment may not share (see {@link canFallOver}) moves
 * to the next one; anything else — and the last deployment's failure — is
 * thrown.
 */
export async function routeDeployments<Op extends Operation, Result>(
  context: RoutingContext,
  model: CatalogModel,
  operation: Op,
  attempt: (step: DeploymentAttempt<Op>) => Promise<Result>,
  options: RouteOptions = {},
): Promise<Result> {
  const { services } = context;
  const servable = orderDeployments(model.deployments).filter((deployment) => adapterFor(deployment.provider.kind, operation) !== undefined);
  // Cooled-down deployments are skipped while another remains (provider-health.ts).
  const deployments = services.providerHealth.arrange(model.id, servable);
  if (deployments.length === 0) throw new GatewayError('UNSUPPORTED_ENDPOINT', `No provider of '${model.id}' serves this operation.`, { param: 'model' });
  let lastError: unknown;
  for (let index = 0; index < deployments.length; index++) {
    const deployment = deployments[index]!;
    const transport = createTransport({
      client: services.upstream,
      provider: deployment.provider,
      signal: options.signal ?? context.signal,
      timeouts: services.config.upstream,
      maxRetries: options.maxRetries,
      observation: context.observation,
    });
    try {
      const step = { deployment, adapter: adapterFor(deployment.provider.kind, operation)!, transport, last: index === deployments.length - 1 };
      return await services.providerHealth.track(model.id, deployment, () => services.observability.attempt(context.observation, operation, model.id, deployment, index, () => attempt(step)));
    } catch (error) {
      lastError = error;
      if (error instanceof UpstreamError && canFallOver(error) && index < deployments.length - 1) {
        services.log.warn('upstream.failover', { requestId: context.requestId, provider: deployment.provider.id, status: error.status });
        continue;
      }
      throw error;
    }
  }
  throw lastError ?? new GatewayError('UPSTREAM_ERROR', 'No deployment could serve the request.');
}
