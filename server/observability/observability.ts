/**
 * The gateway's observability, one long-lived part of Services: request
 * metrics and the access log (compat middleware), traces, and the small
 * hooks the pipeline calls — authorisation, the credit hold, each upstream
 * attempt, each usage row. Each hook is one call at its site and costs next
 * to nothing with tracing off (a counter or two, no span).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { timingSafeEqual, createHash } from 'node:crypto';
import { SpanKind, SpanStatusCode, type Span } from '@opentelemetry/api';
import type Koa from 'koa';
import type { UsageRecord } from '../billing/billing.js';
import type { ResolvedDeployment } from '../catalog/catalog.js';
import type { ObservabilityConfig } from '../config.js';
import { GatewayError, UpstreamError, ClientAbortedError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { UpstreamHttpRequest } from '../providers/types.js';
import { accessLogEntry, writeAccessLog } from './access-log.js';
import { GatewayMetrics, type MetricSources } from './metrics.js';
import { RequestObservation } from './observation.js';
import { Tracing, failSpan, traceHeaders } from './tracing.js';

export interface ObservabilityOptions {
  config: ObservabilityConfig;
  log: Logger;
  instanceId: string;
  sources: MetricSources;
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function byteLength(chunk: unknown): number {
  if (typeof chunk === 'string') return Buffer.byteLength(chunk);
  return (chunk as { byteLength?: number } | null | undefined)?.byteLength ?? 0;
}

/** What an attempt's failure was, as a bounded word (never the provider's message). */
function errorTypeOf(error: unknown): string {
  if (error instanceof ClientAbortedError) return 'client_aborted';
  if (error instanceof UpstreamError) return error.timeout ? 'timeout' : error.status === 0 ? 'connection' : `http_${error.status}`;
  if (error instanceof GatewayError) return error.code;
  return 'error';
}

export class Observability {
  readonly metrics: GatewayMetrics;
  readonly tracing: Tracing;
  private readonly tokenHash: Buffer | undefined;
  private metricsServer: Server | undefined;

  constructor(private readonly options: ObservabilityOptions) {
    this.metrics = new GatewayMetrics(options.sources);
    this.tracing = new Tracing({ url: options.config.otlpTracesUrl, serviceName: options.config.serviceName, instanceId: options.instanceId, batchDelayMs: options.config.traceBatchDelayMs });
    this.tokenHash = options.config.metricsToken ? sha256(options.config.metricsToken) : undefined;
  }

  /**
   * Koa middleware, right after the error handler: observes the request,
   * and when its answer has ended (finished or cut off) counts it, ends its
   * span and writes its access line.
   */
  middleware(clientAddressOf: (ctx: Koa.Context) => string): Koa.Middleware {
    const { metrics, tracing, options } = this;
    return (ctx, next) => {
      const observation = new RequestObservation(ctx.state.requestId as string, ctx.method);
      ctx.state.observation = observation;
      const req = ctx.req;
      const res = ctx.res;
      observation.span = tracing.tracer
        ? tracing.startServerSpan(ctx.method, req.headers, { 'http.request.method': ctx.method, 'url.path': ctx.path, 'gateway.request_id': observation.requestId })
        : undefined;
      // The first body byte (time to first byte, a stream's first frame) and the bytes out.
      const write = res.write;
      const end = res.end;
      const note = (chunk: unknown) => {
        const size = byteLength(chunk);
        if (size === 0) return;
        if (observation.firstByteAt === undefined) {
          observation.firstByteAt = performance.now();
          if (String(res.getHeader('content-type') ?? '').startsWith('text/event-stream')) {
            observation.streaming = true;
            metrics.openStreams.inc();
          }
        }
        observation.bytesOut += size;
      };
      res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
        note(chunk);
        return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
      } as ServerResponse['write'];
      res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
        if (typeof chunk !== 'function') note(chunk);
        return (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
      } as ServerResponse['end'];
      res.once('close', () => {
        const endedAt = performance.now();
        const aborted = !res.writableFinished;
        observation.route = (ctx as { _matchedRoute?: string })._matchedRoute ?? observation.route;
        const status = aborted && !res.headersSent ? 499 : res.statusCode;
        const code = (ctx.state.errorCode as string | undefined) ?? observation.errorCode ?? (aborted ? 'CLIENT_ABORTED' : null);
        const labels = { route: observation.route, method: observation.method, status: String(status) };
        metrics.requests.inc({ ...labels, code: code ?? 'none', model: observation.model ?? 'unknown', provider: observation.provider ?? 'none' });
        metrics.requestDuration.observe(labels, (endedAt - observation.startedAt) / 1000);
        if (observation.firstByteAt !== undefined) metrics.timeToFirstByte.observe({ route: observation.route, model: observation.model ?? 'unknown' }, (observation.firstByteAt - observation.startedAt) / 1000);
        if (code === 'RATE_LIMITED') metrics.rateLimited.inc({ route: observation.route });
        if (observation.streaming) metrics.openStreams.dec();
        if (observation.span) endServerSpan(observation.span, observation, status, code, aborted);
        const declared = Number(req.headers['content-length']);
        writeAccessLog(
          options.log,
          options.config.accessLog,
          accessLogEntry(observation, { status, code, aborted, endedAt, bytesIn: Number.isFinite(declared) ? declared : 0, clientAddress: clientAddressOf(ctx) }),
        );
      });
      return next();
    };
  }

  /** `/metrics` on the main port: 404 when it is served on its own port, 401 without the token when one is set. */
  async serveMetrics(ctx: Koa.Context): Promise<void> {
    if (this.options.config.metricsPort !== undefined) throw new GatewayError('NOT_FOUND', `No route ${ctx.method} ${ctx.path}.`);
    if (!this.authorizedScrape(ctx.get('authorization'))) throw new GatewayError('UNAUTHORIZED_ADMIN', 'The metrics token is missing or wrong.');
    ctx.type = this.metrics.registry.contentType;
    ctx.body = await this.metrics.registry.metrics();
  }

  private authorizedScrape(header: string | undefined): boolean {
    if (!this.tokenHash) return true;
    const match = /^Bearer (.+)$/i.exec(header ?? '');
    return match !== null && timingSafeEqual(sha256(match[1]!), this.tokenHash);
  }

  /** With METRICS_PORT: a server of its own that answers `/metrics` only. */
  async listen(host: string): Promise<string | undefined> {
    const port = this.options.config.metricsPort;
    if (port === undefined) return undefined;
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
      }
      if (!this.authorizedScrape(req.headers.authorization)) {
        res.writeHead(401, { 'content-type': 'text/plain' }).end('unauthorized\n');
        return;
      }
      this.metrics.registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': this.metrics.registry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    this.metricsServer = server;
    const address = server.address();
    const bound = typeof address === 'object' && address ? address.port : port;
    return `http://${host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${bound}`;
  }

  /** Authorisation of a request (its span; the account and key ids for the access log). */
  async authorize<T extends { account: { id: string }; key: { id: string } }>(observation: RequestObservation | undefined, run: () => Promise<T>): Promise<T> {
    const span = this.tracing.startChild(observation?.span, 'gateway.auth', {});
    try {
      const auth = await run();
      if (observation) {
        observation.accountId = auth.account.id;
        observation.keyId = auth.key.id;
      }
      span?.end();
      return auth;
    } catch (error) {
      if (span) failSpan(span, errorTypeOf(error));
      throw error;
    }
  }

  /** The credit hold of a request (its span; the open-holds gauge). */
  async hold(observation: RequestObservation | undefined, amount: number, run: () => Promise<void>): Promise<void> {
    const span = this.tracing.startChild(observation?.span, 'gateway.credit_hold', { 'gateway.hold_microcredits': amount });
    try {
      await run();
      if (amount > 0) this.metrics.holdsOpen.inc();
      span?.end();
    } catch (error) {
      if (span) failSpan(span, errorTypeOf(error));
      throw error;
    }
  }

  /** One attempt on one deployment: its span (a CLIENT span per the GenAI conventions), duration and outcome. */
  async attempt<T>(observation: RequestObservation | undefined, operation: string, modelId: string, deployment: ResolvedDeployment, index: number, run: () => Promise<T>): Promise<T> {
    const provider = deployment.provider.id;
    if (observation) {
      if (index > 0 && observation.provider) this.metrics.failovers.inc({ provider: observation.provider });
      observation.attempts++;
      observation.provider = provider;
      observation.deployment = `${provider}/${deployment.upstreamModel}`;
      observation.model ??= modelId;
    }
    const span = this.tracing.startChild(
      observation?.span,
      `${operation} ${deployment.upstreamModel}`,
      {
        'gen_ai.operation.name': operation,
        'gen_ai.provider.name': deployment.provider.kind,
        'gen_ai.request.model': deployment.upstreamModel,
        'gateway.model': modelId,
        'gateway.provider': provider,
        'gateway.attempt': index + 1,
      },
      SpanKind.CLIENT,
    );
    if (observation && span) observation.attemptSpan = span;
    const started = performance.now();
    try {
      const result = await run();
      this.metrics.upstreamDuration.observe({ provider, outcome: 'ok' }, (performance.now() - started) / 1000);
      span?.end();
      return result;
    } catch (error) {
      this.metrics.upstreamDuration.observe({ provider, outcome: error instanceof ClientAbortedError ? 'aborted' : 'error' }, (performance.now() - started) / 1000);
      if (span) {
        if (error instanceof UpstreamError && error.status > 0) span.setAttribute('http.response.status_code', error.status);
        failSpan(span, errorTypeOf(error));
      }
      throw error;
    } finally {
      if (observation && observation.attemptSpan === span) observation.attemptSpan = undefined;
    }
  }

  /** A usage row: token and credit counters; the request's model, tokens and cost for its access line and span. */
  usage(observation: RequestObservation | undefined, entry: UsageRecord, releasedHold: boolean): void {
    this.metrics.recordUsage(entry);
    if (releasedHold) this.metrics.holdsOpen.dec();
    if (!observation || observation.requestId !== entry.requestId) return;
    observation.model = entry.model;
    observation.provider = entry.provider ?? observation.provider;
    observation.accountId = entry.accountId;
    observation.keyId = entry.keyId;
    observation.inputTokens = entry.inputTokens;
    observation.outputTokens = entry.outputTokens;
    observation.cost = entry.cost;
    observation.errorCode ??= entry.errorCode;
    const span = this.tracing.startChild(observation.span, 'gateway.settle', {
      'gen_ai.usage.input_tokens': entry.inputTokens,
      'gen_ai.usage.output_tokens': entry.outputTokens,
      'gateway.cost_microcredits': entry.cost,
      'gateway.usage_status': entry.status,
    });
    span?.end();
  }

  async close(): Promise<void> {
    const server = this.metricsServer;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
    await this.tracing.shutdown().catch(() => undefined);
  }
}

/** An upstream request with the attempt's `traceparent` while tracing; the request itself otherwise. */
export function withTraceContext(request: UpstreamHttpRequest, observation: RequestObservation | undefined): UpstreamHttpRequest {
  const span = observation?.attemptSpan;
  return span ? { ...request, headers: { ...request.headers, ...traceHeaders(span) } } : request;
}

function endServerSpan(span: Span, observation: RequestObservation, status: number, code: string | null, aborted: boolean): void {
  span.updateName(`${observation.method} ${observation.route}`);
  span.setAttribute('http.route', observation.route);
  span.setAttribute('http.response.status_code', status);
  if (observation.model) span.setAttribute('gen_ai.request.model', observation.model);
  if (observation.provider) span.setAttribute('gateway.provider', observation.provider);
  span.setAttribute('gateway.attempts', observation.attempts);
  if (observation.inputTokens || observation.outputTokens) {
    span.setAttribute('gen_ai.usage.input_tokens', observation.inputTokens);
    span.setAttribute('gen_ai.usage.output_tokens', observation.outputTokens);
  }
  if (aborted) span.setAttribute('gateway.client_aborted', true);
  if (code) span.setAttribute('error.type', code);
  if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
