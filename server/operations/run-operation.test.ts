/**
 * The operation pipeline alone, without a gateway: a fake call for the
 * deployment's adapter, an in-memory billing that keeps holds and usage rows,
 * real routing (provider health, failover) and a real meter.
 */
import type { Kysely } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import type { Database } from '../../db/schema.js';
import type { AuthContext } from '../auth/authenticate.js';
import type { UsageEntry } from '../billing/billing.js';
import type { CatalogModel, ResolvedDeployment } from '../catalog/catalog.js';
import { modelEntrySchema, providerEntrySchema, toMicroPrice } from '../catalog/catalog.schema.js';
import { GatewayError, UpstreamError } from '../errors.js';
import { createLogger } from '../logger.js';
import { ProviderHealth } from '../providers/provider-health.js';
import { UpstreamClient } from '../upstream/upstream-client.js';
import { runOperation, type OperationDeps, type OperationRunContext } from './run-operation.js';

/** Billing as a meter sees it: holds against a balance, usage rows queued. */
class InMemoryBilling {
  readonly holds: Array<{ accountId: string; amount: number }> = [];
  readonly rows: UsageEntry[] = [];
  constructor(private balance: number) {}

  hold(accountId: string, amount: number): Promise<void> {
    if (amount > this.balance) return Promise.reject(new GatewayError('INSUFFICIENT_CREDITS', 'The account balance cannot cover this request.'));
    this.balance -= amount;
    this.holds.push({ accountId, amount });
    return Promise.resolve();
  }

  record(entry: UsageEntry): void {
    this.rows.push(entry);
  }
}

const log = createLogger('silent');
const upstream = new UpstreamClient(log);
afterAll(() => upstream.close());

function deployment(id: string, priority: number): ResolvedDeployment {
  const entry = providerEntrySchema.parse({ id, kind: 'openai', baseUrl: `http://127.0.0.1:9/${id}` });
  return { provider: { id, kind: 'openai', baseUrl: entry.baseUrl!, entry }, upstreamModel: `${id}-model`, priority, weight: 1 };
}

/** An embeddings model at 2 credits per million input tokens, served by `primary` then `backup`. */
function embeddingsModel(): CatalogModel {
  const entry = modelEntrySchema.parse({
    id: 'embed-small',
    ownedBy: 'test',
    provider: 'primary',
    upstreamModel: 'primary-model',
    endpoints: ['/v1/embeddings'],
    pricing: { input: 2, output: 0 },
    deployments: [{ provider: 'backup', priority: 1 }],
  });
  return {
    id: entry.id,
    ownedBy: entry.ownedBy,
    created: 0,
    entry,
    endpoints: new Set(entry.endpoints),
    price: toMicroPrice(entry.pricing),
    deployments: [deployment('primary', 0), deployment('backup', 1)],
    secrets: [],
    restrictedFamily: undefined,
    publicJson: { id: entry.id, object: 'model', created: 0, owned_by: entry.ownedBy },
  };
}

function setup(balance = 1_000_000_000) {
  const model = embeddingsModel();
  const billing = new InMemoryBilling(balance);
  const services: OperationDeps = {
    catalog: { get: (id) => (id === model.id ? model : undefined) },
    discounts: { percentageFor: () => 0 },
    billing,
    observability: { hold: (_observation, _amount, run) => run(), usage: () => undefined, attempt: (_observation, _operation, _model, _deployment, _index, run) => run() },
    providerHealth: new ProviderHealth({ failures: 100, windowMs: 60_000, cooldownMs: 60_000 }),
    upstream,
    config: { upstream: { connectTimeoutMs: 1_000, firstByteTimeoutMs: 1_000, idleTimeoutMs: 1_000, maxRetries: 0, retryBaseDelayMs: 1 } },
    log,
    // The usage check writes to the database only for a restricted family; this model has none.
    db: {} as Kysely<Database>,
  };
  const auth = { account: { id: 'acct-1' }, key: { id: 'key-1' } } as AuthContext;
  const context: OperationRunContext = { services, auth, requestId: 'req-1', receivedAt: performance.now(), signal: new AbortController().signal };
  return { model, billing, context };
}

const down = (provider: string) => new UpstreamError('the provider is overloaded', { status: 503, provider, retryable: true });

/** 1,000 input tokens held, at 2 credits per million: 2,000 micro-credits. */
const HOLD = { inputTokens: 1_000, outputTokens: 0 };
const HELD = 2_000;

describe('runOperation', () => {
  it('holds, falls over from a failing deployment to the next, and settles the usage of the one that answered', async () => {
    const { billing, context } = setup();
    const tried: string[] = [];
    const answer = await runOperation(context, {
      endpoint: '/v1/embeddings',
      operation: 'embeddings',
      model: 'embed-small',
      plan: () => ({
        hold: HOLD,
        stream: false,
        call: async ({ deployment }) => {
          tried.push(deployment.upstreamModel);
          // Every attempt runs after the hold.
          expect(billing.holds).toEqual([{ accountId: 'acct-1', amount: HELD }]);
          if (deployment.provider.id === 'primary') throw down('primary');
          return { answer: `vectors from ${deployment.provider.id}`, usage: { inputTokens: 600, outputTokens: 0 } };
        },
      }),
    });
    expect(answer).toBe('vectors from backup');
    expect(tried).toEqual(['primary-model', 'backup-model']);
    expect(billing.rows).toHaveLength(1);
    expect(billing.rows[0]).toMatchObject({
      requestId: 'req-1',
      accountId: 'acct-1',
      keyId: 'key-1',
      model: 'embed-small',
      endpoint: '/v1/embeddings',
      provider: 'backup',
      inputTokens: 600,
      status: 200,
      errorCode: null,
      aborted: false,
      cost: 1_200,
      heldAmount: HELD,
    });
  });

  it('holds, and when every deployment fails releases the hold with one uncharged row and throws the failure', async () => {
    const { billing, context } = setup();
    const tried: string[] = [];
    const run = runOperation(context, {
      endpoint: '/v1/embeddings',
      operation: 'embeddings',
      model: 'embed-small',
      plan: () => ({
        hold: HOLD,
        stream: false,
        call: ({ deployment }) => {
          tried.push(deployment.provider.id);
          return Promise.reject(down(deployment.provider.id));
        },
      }),
    });
    const error = await run.catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GatewayError);
    expect(tried).toEqual(['primary', 'backup']);
    expect(billing.holds).toEqual([{ accountId: 'acct-1', amount: HELD }]);
    expect(billing.rows).toHaveLength(1);
    expect(billing.rows[0]).toMatchObject({ provider: null, status: (error as GatewayError).status, errorCode: (error as GatewayError).code, cost: 0, heldAmount: HELD });
    expect((error as GatewayError).status).toBeGreaterThanOrEqual(500);
  });

  it('does not fall over on a failure the next deployment would share (the request itself was refused)', async () => {
    const { billing, context } = setup();
    const tried: string[] = [];
    const error = await runOperation(context, {
      endpoint: '/v1/embeddings',
      operation: 'embeddings',
      model: 'embed-small',
      plan: () => ({
        hold: HOLD,
        stream: false,
        call: ({ deployment }) => {
          tried.push(deployment.provider.id);
          return Promise.reject(new UpstreamError('bad input', { status: 400, provider: deployment.provider.id, retryable: false }));
        },
      }),
    }).catch((caught: unknown) => caught);
    expect(tried).toEqual(['primary']);
    expect(error).toMatchObject({ status: 400 });
    expect(billing.rows).toMatchObject([{ status: 400, cost: 0, heldAmount: HELD }]);
  });

  it('holds nothing and calls no provider when the model, the plan or the balance refuses', async () => {
    const { billing, context } = setup(1_000);
    let calls = 0;
    const spec = (model: unknown, refuse: boolean) =>
      runOperation(context, {
        endpoint: '/v1/embeddings',
        operation: 'embeddings',
        model,
        plan: () => {
          if (refuse) throw new GatewayError('INVALID_REQUEST', 'the operation refused the request');
          return {
            hold: HOLD,
            stream: false,
            call: () => {
              calls++;
              return Promise.resolve({ answer: 'never', usage: HOLD });
            },
          };
        },
      });
    await expect(spec('no-such-model', false)).rejects.toMatchObject({ code: 'MODEL_NOT_FOUND' });
    await expect(spec('embed-small', true)).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    // 2,000 micro-credits cannot be held on a balance of 1,000.
    await expect(spec('embed-small', false)).rejects.toMatchObject({ code: 'INSUFFICIENT_CREDITS' });
    expect(calls).toBe(0);
    expect(billing.holds).toEqual([]);
    expect(billing.rows).toEqual([]);
  });
});
