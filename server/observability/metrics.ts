/**
 * The Prometheus metrics of one gateway instance, in their own registry (a
 * test process runs several gateways). Labels are bounded: route templates,
 * catalog model and provider ids, HTTP statuses and error codes from the
 * error table — never an account, a key, a raw path or free text.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { UsageRecord } from '../billing/billing.js';
import type { ProviderHealth } from '../providers/provider-health.js';

/** Seconds; the first buckets resolve single milliseconds (the gateway's own overhead), the last ones long generations. */
export const LATENCY_BUCKETS = [0.001, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

const HEALTH_VALUE = { healthy: 0, 'half-open': 1, cooling: 2 } as const;

/** Where gauges read their values at scrape time. */
export interface MetricSources {
  providerHealth: ProviderHealth;
  /** Usage rows waiting for the next settlement batch. */
  pendingUsageRows: () => number;
  /** PostgreSQL pool use; undefined on PGlite. */
  poolStats: (() => { total: number; idle: number; waiting: number }) | undefined;
}

export class GatewayMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'umg_http_requests_total',
    help: 'Requests answered, by route template, method, status, error code, catalog model and provider.',
    labelNames: ['route', 'method', 'status', 'code', 'model', 'provider'] as const,
    registers: [this.registry],
  });
  readonly requestDuration = new Histogram({
    name: 'umg_http_request_duration_seconds',
    help: 'From the request arriving to the last byte of the answer (or the client leaving).',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly timeToFirstByte = new Histogram({
    name: 'umg_http_time_to_first_byte_seconds',
    help: 'From the request arriving to the first byte of the answer body (the first token of a stream).',
    labelNames: ['route', 'model'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly upstreamDuration = new Histogram({
    name: 'umg_upstream_attempt_duration_seconds',
    help: 'One attempt on a deployment: until its answer (JSON) or its stream started, or it failed.',
    labelNames: ['provider', 'outcome'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  });
  readonly failovers = new Counter({
    name: 'umg_upstream_failovers_total',
    help: 'Attempts that failed and moved on to the next deployment, by the provider that failed.',
    labelNames: ['provider'] as const,
    registers: [this.registry],
  });
  readonly tokens = new Counter({
    name: 'umg_tokens_total',
    help: 'Tokens of the usage rows, by catalog model and direction (input, output, cached_input).',
    labelNames: ['model', 'direction'] as const,
    registers: [this.registry],
  });
  readonly credits = new Counter({
    name: 'umg_credits_charged_microcredits_total',
    help: 'Micro-credits charged by the usage rows (1 credit = 1,000,000), by catalog model.',
    labelNames: ['model'] as const,
    registers: [this.registry],
  });
  readonly usageRows = new Counter({
    name: 'umg_usage_rows_total',
    help: 'Usage rows recorded, by catalog model and status.',
    labelNames: ['model', 'status'] as const,
    registers: [this.registry],
  });
  readonly holdsOpen = new Gauge({
    name: 'umg_credit_holds_open',
    help: 'Requests holding credit that are not settled yet (this instance).',
    registers: [this.registry],
  });
  readonly rateLimited = new Counter({
    name: 'umg_rate_limit_refusals_total',
    help: 'Requests refused with 429 RATE_LIMITED, by route template.',
    labelNames: ['route'] as const,
    registers: [this.registry],
  });
  readonly openStreams = new Gauge({
    name: 'umg_open_streams',
    help: 'Server-sent-event answers being written.',
    registers: [this.registry],
  });

  constructor(sources: MetricSources) {
    const registers = [this.registry];
    new Gauge({
      name: 'umg_settlement_queue_rows',
      help: 'Usage rows waiting for the next settlement batch (this instance).',
      registers,
      collect() {
        this.set(sources.pendingUsageRows());
      },
    });
    new Gauge({
      name: 'umg_deployment_health',
      help: 'Deployments that failed since start: 0 healthy, 1 half-open (one probe may go), 2 cooling down (skipped).',
      labelNames: ['model', 'provider'] as const,
      registers,
      collect() {
        this.reset();
        for (const entry of sources.providerHealth.snapshot()) this.set({ model: entry.model, provider: entry.provider }, HEALTH_VALUE[entry.state]);
      },
    });
    new Gauge({
      name: 'umg_deployment_cooldowns',
      help: 'Times a deployment was cooled down since start.',
      labelNames: ['model', 'provider'] as const,
      registers,
      collect() {
        this.reset();
        for (const entry of sources.providerHealth.snapshot()) this.set({ model: entry.model, provider: entry.provider }, entry.cooldowns);
      },
    });
    const poolStats = sources.poolStats;
    if (poolStats) {
      new Gauge({
        name: 'umg_db_pool_connections',
        help: 'PostgreSQL pool connections: total open, idle, and queries waiting for one.',
        labelNames: ['state'] as const,
        registers,
        collect() {
          const stats = poolStats();
          this.set({ state: 'total' }, stats.total);
          this.set({ state: 'idle' }, stats.idle);
          this.set({ state: 'waiting' }, stats.waiting);
        },
      });
    }
    // Event-loop lag, heap, GC, CPU and descriptors of the process.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 10 });
  }

  /**
   * Drops the series labelled with a model or provider a catalog reload took
   * away, so that the label sets stay bounded by the catalog (an answer still
   * in flight for such a model counts it again, once).
   */
  async forgetCatalogLabels(models: ReadonlySet<string>, providers: ReadonlySet<string>): Promise<void> {
    if (models.size === 0 && providers.size === 0) return;
    const labelled = [this.requests, this.timeToFirstByte, this.upstreamDuration, this.failovers, this.tokens, this.credits, this.usageRows] as unknown as Counter<string>[];
    for (const metric of labelled) {
      const { values } = await metric.get();
      for (const { labels } of values as Array<{ labels: Record<string, string | number | undefined> }>) {
        const model = labels.model;
        const provider = labels.provider;
        if ((typeof model === 'string' && models.has(model)) || (typeof provider === 'string' && providers.has(provider))) {
          // A histogram's buckets carry `le` besides the metric's own labels.
          const { le: _bucket, ...own } = labels;
          metric.remove(own as Record<string, string>);
        }
      }
    }
  }

  /** Counts one usage row: tokens and credits by model. */
  recordUsage(entry: UsageRecord): void {
    const model = entry.model;
    if (entry.inputTokens > 0) this.tokens.inc({ model, direction: 'input' }, entry.inputTokens);
    if (entry.outputTokens > 0) this.tokens.inc({ model, direction: 'output' }, entry.outputTokens);
    if (entry.cachedInputTokens > 0) this.tokens.inc({ model, direction: 'cached_input' }, entry.cachedInputTokens);
    if (entry.cost > 0) this.credits.inc({ model }, entry.cost);
    this.usageRows.inc({ model, status: String(entry.status) });
  }
}
