/**
 * OpenTelemetry traces over OTLP/HTTP, off unless an endpoint is configured.
 * Off, nothing here runs on a request: no tracer exists, the hook points see
 * `tracer === undefined` and call straight through (no span object, not even
 * a no-op one). On, each instance has its own tracer provider (never the
 * global one: a test process runs several gateways), spans go out in batches,
 * and the W3C `traceparent` of a client is honoured (its trace continued,
 * its sampling decision kept) and the attempt's own is sent upstream.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, defaultTextMapGetter, defaultTextMapSetter, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { IncomingHttpHeaders } from 'node:http';

export interface TracingOptions {
  /** OTLP/HTTP traces URL; undefined: tracing off. */
  url: string | undefined;
  serviceName: string;
  instanceId: string;
  /** Longest wait before a batch of spans is sent, ms. */
  batchDelayMs: number;
}

const propagator = new W3CTraceContextPropagator();

export class Tracing {
  /** Undefined while tracing is off: every hook point checks this first. */
  readonly tracer: Tracer | undefined;
  private readonly provider: BasicTracerProvider | undefined;

  constructor(options: TracingOptions) {
    if (!options.url) return;
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName, [ATTR_SERVICE_VERSION]: '0.1.0', 'service.instance.id': options.instanceId }),
      spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: options.url }), { scheduledDelayMillis: options.batchDelayMs })],
    });
    this.tracer = this.provider.getTracer('unified-model-gateway');
  }

  /** The server span of a request, continuing the client's trace when it sent a valid `traceparent`. */
  startServerSpan(name: string, headers: IncomingHttpHeaders, attributes: Attributes): Span | undefined {
    if (!this.tracer) return undefined;
    const parent = headers.traceparent ? propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter) : ROOT_CONTEXT;
    return this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
  }

  /** A child of `parent` (no parent: nothing — a span outside a request would start a trace of its own). */
  startChild(parent: Span | undefined, name: string, attributes: Attributes, kind: SpanKind = SpanKind.INTERNAL): Span | undefined {
    if (!this.tracer || !parent) return undefined;
    return this.tracer.startSpan(name, { kind, attributes }, trace.setSpan(ROOT_CONTEXT, parent));
  }

  async flush(): Promise<void> {
    await this.provider?.forceFlush();
  }

  async shutdown(): Promise<void> {
    await this.provider?.shutdown();
  }
}

/** The `traceparent` (and `tracestate`) that make the upstream's spans children of `span`. */
export function traceHeaders(span: Span): Record<string, string> {
  const headers: Record<string, string> = {};
  propagator.inject(trace.setSpan(ROOT_CONTEXT, span), headers, defaultTextMapSetter);
  return headers;
}

/** Ends a span as failed, with the error's type (never its message: it may quote a provider's answer). */
export function failSpan(span: Span, errorType: string): void {
  span.setAttribute('error.type', errorType);
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}
