/**
 * The one pipeline of every billed request, written once: resolve the model
 * (and whether the account may use it), the operation's own checks, the
 * restricted family's usage check, the hold, the failover loop over the
 * model's deployments and settlement — the usage row of an answer, or the
 * failure's row that hands the hold back. An operation brings only its plan:
 * what to hold and its own call of the chosen deployment's adapter.
 */
import type { CatalogModel } from '../catalog/catalog.js';
import type { Endpoint } from '../catalog/catalog.schema.js';
import { Meter, type MeterDeps, type MeteredUsage } from './metering.js';
import { resolveModel, routeDeployments, type DeploymentAttempt, type ModelDeps, type OperationContext, type RoutingDeps } from './routing.js';
import type { Operation } from '../providers/registry.js';
import { checkRestrictedUsage, type UsageCheckContext, type UsageCheckRequest } from '../restricted/usage-check.js';

/** The parts of the gateway an operation uses, each narrow (a gateway's `Services` has them all). */
export type OperationDeps = MeterDeps & RoutingDeps & ModelDeps & UsageCheckContext['services'];

/** A request as the pipeline sees it. */
export type OperationRunContext = Pick<OperationContext, 'auth' | 'requestId' | 'receivedAt' | 'signal' | 'clientAddress' | 'observation'> & { services: OperationDeps };

/** One try on one deployment, as an operation's call gets it. */
export interface OperationStep<Op extends Operation> extends DeploymentAttempt<Op> {
  model: CatalogModel;
  /** The request's meter, for an answer that settles itself when it ends (a stream). */
  meter: Meter;
  /** Aborted when nobody reads a streamed answer (see stream-guard.ts); its upstream calls stop with it. */
  abandoned: AbortController;
}

/**
 * What a call answers: an answer served whole with the usage it is charged
 * (settled here, status 200, by the deployment that served it), or an answer
 * that settles the meter itself as it is read (a stream, a byte body).
 */
export type Served<Answer> = { answer: Answer; usage: MeteredUsage } | { answer: Answer; settlesWhenRead: true };

/** What an operation decides once its model is known (its own checks done): how much to hold and how to call a deployment. */
export interface OperationPlan<Op extends Operation, Answer> {
  /** The most the request can use, held before any provider is called. */
  hold: MeteredUsage;
  /** The usage row's `stream` flag. */
  stream: boolean;
  /** The texts the restricted family's usage check reads (the chat family); other operations have none. */
  usageCheck?: UsageCheckRequest;
  /** The answer is read after this returns (a stream, a byte body): its upstream calls also stop when nobody reads it. */
  readLater?: boolean;
  call(step: OperationStep<Op>): Promise<Served<Answer>>;
}

export interface OperationSpec<Op extends Operation, Answer> {
  endpoint: Endpoint;
  operation: Op;
  /** The model the client named (checked here: a non-empty id of a model serving `endpoint`). */
  model: unknown;
  /** The operation's own checks against the model, before anything is held; throws to refuse. */
  plan(model: CatalogModel): OperationPlan<Op, Answer> | Promise<OperationPlan<Op, Answer>>;
}

/**
 * Runs one billed operation. Nothing is held before the model, the
 * operation's checks and the usage check have passed; once held, the request
 * ends with exactly one usage row however it ends: the call's usage, the
 * answer's own settlement when it is read later, or — when every deployment
 * failed or the client left — an uncharged row that releases the hold, and
 * the error (provider secrets removed) is thrown.
 */
export async function runOperation<Op extends Operation, Answer>(context: OperationRunContext, spec: OperationSpec<Op, Answer>): Promise<Answer> {
  const { services, auth } = context;
  const model = resolveModel(services, auth, spec.model, spec.endpoint);
  const plan = await spec.plan(model);
  if (plan.usageCheck) await checkRestrictedUsage(context, model, spec.endpoint, plan.usageCheck);
  const meter = new Meter({ deps: services, auth, requestId: context.requestId, receivedAt: context.receivedAt, observation: context.observation, model, endpoint: spec.endpoint, stream: plan.stream });
  await meter.hold(plan.hold);
  const abandoned = new AbortController();
  try {
    return await routeDeployments(
      context,
      model,
      spec.operation,
      async (attempt) => {
        const served = await plan.call({ ...attempt, model, meter, abandoned });
        if ('usage' in served) meter.settle({ usage: served.usage, status: 200, errorCode: null, aborted: false, provider: attempt.deployment.provider.id });
        return served.answer;
      },
      plan.readLater ? { signal: AbortSignal.any([context.signal, abandoned.signal]) } : {},
    );
  } catch (error) {
    throw meter.fail(error);
  }
}
