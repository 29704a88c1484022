/**
 * `/metrics` after a scripted mix of requests, read with a Prometheus
 * text-format parser: request counters and histogram counts match what was
 * sent, per label; the token and credit counters match the usage rows; the
 * gauges settle back (holds, streams); labels never carry an account or key
 * id; the endpoint asks for METRICS_TOKEN, or moves to METRICS_PORT.
 */
import { readFileSync } from 'node:fs';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_UPSTREAM } from '../support/e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer, postJson } from '../support/http.js';
import { scrape } from '../support/prometheus.js';
import { flushAll, usageRowsOf } from '../support/usage.js';
import { waitFor } from '../support/wait.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { CHAT_ENDPOINT, OPENAI_SECRET, SECRET_ENV, chatModel, openAIProvider } from '../chat/chat-e2e.js';

/** A test that starts a gateway of its own: as long as a hook may take (a loaded machine starts one slowly). */
const SECOND_GATEWAY_TEST_MS = 180_000;

const TOKEN = 'metrics-token-0123456789';
const ROUTE = '/v1/chat/completions';
let primary: UpstreamServer;
let secondary: UpstreamServer;
let gateway: TestGateway;
let account: { accountId: string; key: string; keyId: string };
let limited: { accountId: string; key: string; keyId: string };

beforeAll(async () => {
  primary = await startOpenAIUpstream({ expectedApiKey: OPENAI_SECRET });
  secondary = await startOpenAIUpstream({ expectedApiKey: OPENAI_SECRET });
  gateway = await startTestGateway({
    env: { ...SECRET_ENV, METRICS_TOKEN: TOKEN, RATE_LIMITS: 'tiny=1' },
    config: { upstream: FAST_UPSTREAM },
    catalog: {
      providers: [openAIProvider('openai-a', primary.url, { maxRetries: 0 }), openAIProvider('openai-b', secondary.url, { maxRetries: 0 })],
      models: [
        chatModel('gpt-metered', 'openai-a', 'gpt-4o-mini'),
        chatModel('gpt-failover', 'openai-a', 'gpt-4o', { deployments: [{ provider: 'openai-b', priority: 1, weight: 1 }] }),
      ],
    },
  });
  account = await gateway.createAccountWithKey({ credits: 100 });
  limited = await gateway.createAccountWithKey({ credits: 100, plan: 'tiny' });
});

afterAll(async () => {
  await gateway?.close();
  await primary?.close();
  await secondary?.close();
});

describe('/metrics', () => {
  it('asks for the metrics token', async () => {
    expect((await fetch(`${gateway.url}/metrics`)).status).toBe(401);
    expect((await fetch(`${gateway.url}/metrics`, { headers: bearer('wrong') })).status).toBe(401);
    const answer = await fetch(`${gateway.url}/metrics`, { headers: bearer(TOKEN) });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toContain('text/plain');
  });

  it('counts a scripted mix per label, and its tokens and credits as the usage rows say', async () => {
    const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: account.key, maxRetries: 0 });
    const messages = [{ role: 'user' as const, content: 'count these words please' }];
    for (let index = 0; index < 3; index++) await client.chat.completions.create({ model: 'gpt-metered', messages });
    for (let index = 0; index < 2; index++) {
      const stream = await client.chat.completions.create({ model: 'gpt-metered', messages, stream: true, stream_options: { include_usage: true } });
      for await (const chunk of stream) void chunk;
    }
    // One failover: openai-a answers 500, openai-b serves.
    primary.script({ kind: 'status', status: 500 });
    await client.chat.completions.create({ model: 'gpt-failover', messages });
    // An upstream failure with nowhere to fall over.
    primary.script({ kind: 'status', status: 503 });
    const failed = await postJson(`${gateway.url}${CHAT_ENDPOINT}`, { model: 'gpt-metered', messages }, bearer(account.key));
    expect(failed.status).toBeGreaterThanOrEqual(500);
    // 4xx: an unknown model, two bad keys, one rate-limit refusal.
    expect((await postJson(`${gateway.url}${CHAT_ENDPOINT}`, { model: 'nope', messages }, bearer(account.key))).status).toBe(404);
    for (let index = 0; index < 2; index++) expect((await postJson(`${gateway.url}${CHAT_ENDPOINT}`, { model: 'gpt-metered', messages }, bearer('sk-umg-bogus-0000000000000000000000'))).status).toBe(401);
    expect((await postJson(`${gateway.url}${CHAT_ENDPOINT}`, { model: 'gpt-metered', messages }, bearer(limited.key))).status).toBe(200);
    expect((await postJson(`${gateway.url}${CHAT_ENDPOINT}`, { model: 'gpt-metered', messages }, bearer(limited.key))).status).toBe(429);

    await flushAll(gateway);
    const metrics = await scrape(gateway.url, TOKEN);
    const requests = (labels: Record<string, string>) => metrics.value('umg_http_requests_total', { route: ROUTE, method: 'POST', ...labels });
    expect(requests({ status: '200', code: 'none', model: 'gpt-metered', provider: 'openai-a' })).toBe(6);
    expect(requests({ status: '200', code: 'none', model: 'gpt-failover', provider: 'openai-b' })).toBe(1);
    expect(requests({ status: String(failed.status), code: 'UPSTREAM_ERROR', model: 'gpt-metered', provider: 'openai-a' })).toBe(1);
    expect(requests({ status: '404', code: 'MODEL_NOT_FOUND', model: 'unknown', provider: 'none' })).toBe(1);
    expect(metrics.sum('umg_http_requests_total', { route: ROUTE, status: '401' })).toBe(2);
    expect(requests({ status: '429', code: 'RATE_LIMITED', model: 'unknown', provider: 'none' })).toBe(1);
    expect(metrics.sum('umg_http_requests_total', { route: ROUTE })).toBe(12);
    expect(metrics.value('umg_rate_limit_refusals_total', { route: ROUTE })).toBe(1);

    // Histograms: one observation per request, per label set.
    expect(metrics.histogramCount('umg_http_request_duration_seconds', { route: ROUTE, method: 'POST', status: '200' })).toBe(7);
    expect(metrics.histogramCount('umg_http_request_duration_seconds', { route: ROUTE, method: 'POST', status: '401' })).toBe(2);
    expect(metrics.histogramCount('umg_http_time_to_first_byte_seconds', { route: ROUTE, model: 'gpt-metered' })).toBe(7);
    expect(metrics.histogramCount('umg_upstream_attempt_duration_seconds', { provider: 'openai-a', outcome: 'ok' })).toBe(6);
    expect(metrics.histogramCount('umg_upstream_attempt_duration_seconds', { provider: 'openai-a', outcome: 'error' })).toBe(2);
    expect(metrics.histogramCount('umg_upstream_attempt_duration_seconds', { provider: 'openai-b', outcome: 'ok' })).toBe(1);
    expect(metrics.value('umg_upstream_failovers_total', { provider: 'openai-a' })).toBe(1);
    // The first bucket bounds resolve a millisecond.
    expect(metrics.bucketBounds('umg_http_request_duration_seconds').slice(0, 3)).toEqual(['0.001', '0.002', '0.003']);

    // Tokens and credits equal the usage rows, per model.
    const rows = [...(await usageRowsOf(gateway, account.accountId)), ...(await usageRowsOf(gateway, limited.accountId))];
    // 3 + 2 streamed + the failover + the upstream failure + the limited account's one.
    expect(rows).toHaveLength(8);
    for (const model of ['gpt-metered', 'gpt-failover']) {
      const ofModel = rows.filter((row) => row.model === model);
      const input = ofModel.reduce((sum, row) => sum + row.input_tokens, 0);
      const output = ofModel.reduce((sum, row) => sum + row.output_tokens, 0);
      const cost = ofModel.reduce((sum, row) => sum + Number(row.cost), 0);
      expect(input).toBeGreaterThan(0);
      expect(metrics.value('umg_tokens_total', { model, direction: 'input' })).toBe(input);
      expect(metrics.value('umg_tokens_total', { model, direction: 'output' })).toBe(output);
      expect(metrics.value('umg_credits_charged_microcredits_total', { model })).toBe(cost);
    }
    expect(metrics.sum('umg_usage_rows_total')).toBe(8);

    // Gauges back at rest; process metrics present.
    expect(metrics.value('umg_credit_holds_open')).toBe(0);
    expect(metrics.value('umg_open_streams')).toBe(0);
    expect(metrics.value('umg_deployment_health', { model: 'gpt-metered', provider: 'openai-a' })).toBe(0);
    expect(metrics.families.has('nodejs_eventloop_lag_seconds')).toBe(true);
    expect(metrics.families.has('umg_settlement_queue_rows')).toBe(true);

    // Bounded labels: no account, key or raw path.
    const values = metrics.labelValues();
    for (const id of [account.accountId, account.keyId, limited.accountId, limited.keyId, account.key]) expect(values).not.toContain(id);
    expect(metrics.text).not.toContain(account.accountId);
  });

  it('counts an open stream while it is being written', async () => {
    primary.script({ kind: 'stall', afterChunks: 2, ms: 20_000 });
    const controller = new AbortController();
    const response = await fetch(`${gateway.url}${CHAT_ENDPOINT}`, {
      method: 'POST',
      headers: { ...bearer(account.key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-metered', messages: [{ role: 'user', content: 'hi' }], stream: true }),
      signal: controller.signal,
    });
    await response.body!.getReader().read();
    expect((await scrape(gateway.url, TOKEN)).value('umg_open_streams')).toBe(1);
    expect((await scrape(gateway.url, TOKEN)).value('umg_credit_holds_open')).toBe(1);
    controller.abort();
    await waitFor(async () => (await scrape(gateway.url, TOKEN)).value('umg_open_streams') === 0, { message: 'the stream to be counted closed' });
    await waitFor(async () => (await scrape(gateway.url, TOKEN)).value('umg_credit_holds_open') === 0, { message: 'the hold to be settled' });
  });

  it('counts a 405 on a known path under its route template, not `unmatched`', async () => {
    const answer = await fetch(`${gateway.url}${CHAT_ENDPOINT}`, { method: 'DELETE', headers: bearer(account.key) });
    expect(answer.status).toBe(405);
    await answer.arrayBuffer();
    await waitFor(async () => (await scrape(gateway.url, TOKEN)).sum('umg_http_requests_total', { method: 'DELETE' }) === 1, { message: 'the 405 to be counted' });
    const metrics = await scrape(gateway.url, TOKEN);
    expect(metrics.value('umg_http_requests_total', { route: ROUTE, method: 'DELETE', status: '405', code: 'METHOD_NOT_ALLOWED', model: 'unknown', provider: 'none' })).toBe(1);
    expect(metrics.sum('umg_http_requests_total', { route: 'unmatched' })).toBe(0);
  });

  it('serves /metrics on METRICS_PORT only when one is set', async () => {
    const separate = await startTestGateway({ env: { METRICS_PORT: '0' } });
    try {
      expect((await fetch(`${separate.url}/metrics`)).status).toBe(404);
      const port = (separate.gateway.services.observability as unknown as { metricsServer: { address(): { port: number } } }).metricsServer.address().port;
      const metrics = await scrape(`http://127.0.0.1:${port}`);
      expect(metrics.families.has('umg_http_requests_total')).toBe(true);
    } finally {
      await separate.close();
    }
  }, SECOND_GATEWAY_TEST_MS);

  it('has every metric the Grafana dashboard queries', async () => {
    const dashboard = JSON.parse(readFileSync(new URL('../../ops/grafana/gateway-dashboard.json', import.meta.url), 'utf8')) as { panels: { targets: { expr: string }[] }[] };
    const names = new Set(dashboard.panels.flatMap((panel) => panel.targets.flatMap((target) => target.expr.match(/\b(umg|nodejs)_[a-z0-9_]+/g) ?? [])));
    expect(names.size).toBeGreaterThan(10);
    const metrics = await scrape(gateway.url, TOKEN);
    for (const name of names) {
      // The pool gauge exists on PostgreSQL only.
      if (name === 'umg_db_pool_connections' && gateway.gateway.services.database.kind !== 'postgres') continue;
      const family = metrics.families.has(name) ? name : name.replace(/_(bucket|count|sum)$/, '');
      expect(metrics.families.has(family), name).toBe(true);
    }
  });
});
