/**
 * Traces, received by an in-process OTLP/HTTP receiver: a streamed chat with
 * one failover (the first deployment answers 500, the second serves) under a
 * client's `traceparent` gives one trace — the server span continuing the
 * client's, children for authorisation, the credit hold, both upstream
 * attempts (the first failed) and the settlement, GenAI attributes and no
 * prompt text — and each upstream saw its attempt's `traceparent`. With
 * tracing off no tracer exists and nothing is sent upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_UPSTREAM } from '../support/e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer } from '../support/http.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { usageRowOf } from '../support/usage.js';
import { waitFor } from '../support/wait.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { CHAT_ENDPOINT, OPENAI_SECRET, SECRET_ENV, chatModel, openAIProvider } from '../chat/chat-e2e.js';

/** A test that starts a gateway of its own: as long as a hook may take (a loaded machine starts one slowly). */
const SECOND_GATEWAY_TEST_MS = 180_000;

const PROMPT = 'a private question about my garden gnome';
const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';
let receiver: OtlpReceiver;
let primary: UpstreamServer;
let secondary: UpstreamServer;
let gateway: TestGateway;
let key: string;

function catalog() {
  return {
    providers: [openAIProvider('openai-a', primary.url, { maxRetries: 0 }), openAIProvider('openai-b', secondary.url, { maxRetries: 0 })],
    models: [chatModel('gpt-traced', 'openai-a', 'gpt-4o-mini', { deployments: [{ provider: 'openai-b', priority: 1, weight: 1 }] })],
  };
}

async function streamChat(target: TestGateway, apiKey: string, headers: Record<string, string> = {}): Promise<{ requestId: string; text: string }> {
  const response = await fetch(`${target.url}${CHAT_ENDPOINT}`, {
    method: 'POST',
    headers: { ...bearer(apiKey), 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'gpt-traced', messages: [{ role: 'user', content: PROMPT }], stream: true, stream_options: { include_usage: true } }),
  });
  expect(response.status).toBe(200);
  return { requestId: response.headers.get('x-request-id')!, text: await response.text() };
}

function traceparentOf(header: string | undefined): { traceId: string; parentId: string } {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(header ?? '');
  expect(match, `traceparent ${header}`).not.toBeNull();
  return { traceId: match![1]!, parentId: match![2]! };
}

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  primary = await startOpenAIUpstream({ expectedApiKey: OPENAI_SECRET });
  secondary = await startOpenAIUpstream({ expectedApiKey: OPENAI_SECRET });
  gateway = await startTestGateway({
    env: { ...SECRET_ENV, OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: '20', OTEL_SERVICE_NAME: 'umg-test' },
    config: { upstream: FAST_UPSTREAM },
    catalog: catalog(),
  });
  ({ key } = await gateway.createAccountWithKey({ credits: 100 }));
});

afterAll(async () => {
  await gateway?.close();
  await primary?.close();
  await secondary?.close();
  await receiver?.close();
});

describe('traces', () => {
  it('traces a streamed chat with one failover under the client trace, and propagates traceparent upstream', async () => {
    primary.script({ kind: 'status', status: 500 });
    const { requestId, text } = await streamChat(gateway, key, { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` });
    expect(text).toContain('[DONE]');
    const row = await usageRowOf(gateway, requestId);

    const inTrace = (): ReceivedSpan[] => receiver.spans.filter((span) => span.traceId === CLIENT_TRACE);
    const serverSpan = (): ReceivedSpan | undefined => inTrace().find((span) => span.kind === 2);
    await waitFor(() => serverSpan() !== undefined && inTrace().length >= 6, { message: 'the spans of the request to be exported' });
    const server = serverSpan()!;
    expect(server).toMatchObject({ name: 'POST /v1/chat/completions', parentSpanId: CLIENT_SPAN, statusCode: 0 });
    expect(server.resource['service.name']).toBe('umg-test');
    expect(server.attributes).toMatchObject({
      'http.request.method': 'POST',
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
      'gen_ai.request.model': 'gpt-traced',
      'gen_ai.usage.input_tokens': row.input_tokens,
      'gen_ai.usage.output_tokens': row.output_tokens,
      'gateway.request_id': requestId,
      'gateway.provider': 'openai-b',
      'gateway.attempts': 2,
    });

    const children = inTrace().filter((span) => span.parentSpanId === server.spanId);
    expect(children.map((span) => span.name).sort()).toEqual(['chat gpt-4o-mini', 'chat gpt-4o-mini', 'gateway.auth', 'gateway.credit_hold', 'gateway.settle']);
    const attempts = children.filter((span) => span.name === 'chat gpt-4o-mini').sort((a, b) => Number(a.attributes['gateway.attempt']) - Number(b.attributes['gateway.attempt']));
    expect(attempts[0]).toMatchObject({ kind: 3, statusCode: 2 });
    expect(attempts[0]!.attributes).toMatchObject({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gateway.provider': 'openai-a',
      'gateway.attempt': 1,
      'error.type': 'http_500',
      'http.response.status_code': 500,
    });
    expect(attempts[1]).toMatchObject({ kind: 3, statusCode: 0 });
    expect(attempts[1]!.attributes).toMatchObject({ 'gateway.provider': 'openai-b', 'gateway.attempt': 2 });
    const settle = children.find((span) => span.name === 'gateway.settle')!;
    expect(settle.attributes).toMatchObject({ 'gen_ai.usage.input_tokens': row.input_tokens, 'gen_ai.usage.output_tokens': row.output_tokens, 'gateway.cost_microcredits': Number(row.cost) });

    // Each upstream saw its own attempt's span as parent, in the client's trace.
    const first = traceparentOf(primary.requests.at(-1)!.headers.traceparent);
    const second = traceparentOf(secondary.requests.at(-1)!.headers.traceparent);
    expect(first).toEqual({ traceId: CLIENT_TRACE, parentId: attempts[0]!.spanId });
    expect(second).toEqual({ traceId: CLIENT_TRACE, parentId: attempts[1]!.spanId });

    // No prompt text, key or provider secret in anything exported.
    const exported = receiver.bodies.join('\n');
    expect(exported).not.toContain('garden gnome');
    expect(exported).not.toContain(key);
    expect(exported).not.toContain(OPENAI_SECRET);
  });

  it('starts a trace of its own without a client traceparent, and ignores a malformed one', async () => {
    for (const headers of [{}, { traceparent: 'not-a-traceparent' }] as Record<string, string>[]) {
      const { requestId } = await streamChat(gateway, key, headers);
      await waitFor(() => receiver.spans.some((span) => span.kind === 2 && span.attributes['gateway.request_id'] === requestId), { message: 'the server span' });
      const server = receiver.spans.find((span) => span.kind === 2 && span.attributes['gateway.request_id'] === requestId)!;
      expect(server.parentSpanId === '' || server.parentSpanId === 'undefined').toBe(true);
      expect(server.traceId).not.toBe(CLIENT_TRACE);
      expect(traceparentOf(primary.requests.at(-1)!.headers.traceparent).traceId).toBe(server.traceId);
    }
  });

  it('with tracing off has no tracer and sends no traceparent upstream', async () => {
    const quiet = await startTestGateway({ env: SECRET_ENV, config: { upstream: FAST_UPSTREAM }, catalog: catalog() });
    try {
      expect(quiet.gateway.services.observability.tracing.tracer).toBeUndefined();
      const account = await quiet.createAccountWithKey({ credits: 100 });
      await streamChat(quiet, account.key, { traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01` });
      expect(primary.requests.at(-1)!.headers.traceparent).toBeUndefined();
    } finally {
      await quiet.close();
    }
  }, SECOND_GATEWAY_TEST_MS);
});
