/**
 * What the Azure kind sends and how it reads Azure's errors: the URL of each
 * operation in both URL styles, the api-version, the authentication headers,
 * and Azure's error bodies (content filter, rate limit, unknown deployment).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CanonicalRequest } from '../canonical.js';
import type { ProviderConnection } from '../types.js';
import { azureChatAdapter, azureChatDefinition } from './azure.adapter.js';
import { parseAzureError } from './azure-errors.js';
import { buildAzureHeaders, buildAzureUrl, isAzureV1Base } from './azure-url.js';

const ENDPOINT = 'https://contoso-east.openai.azure.com';
const KEY = 'f3b1c9d27a8e4b6d9c0e1f2a3b4c5d6e';
const TOKEN = 'eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.entra-token';

const deploymentStyle: ProviderConnection = { id: 'azure-east', kind: 'azure', baseUrl: ENDPOINT, apiKey: KEY, azure: { apiVersion: '2024-10-21' } };
const v1Style: ProviderConnection = { id: 'azure-v1', kind: 'azure', baseUrl: `${ENDPOINT}/openai/v1`, apiKey: KEY };

const request: CanonicalRequest = {
  model: 'gpt-4o-prod',
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
  topK: 5,
  stream: true,
};

const readFixture = (name: string): string => readFileSync(new URL(`./__fixtures__/${name}`, import.meta.url), 'utf8');

describe('Azure URLs', () => {
  it('puts deployment operations under the deployment, with the api-version', () => {
    for (const operation of ['/chat/completions', '/embeddings', '/images/generations', '/images/edits', '/audio/speech', '/audio/transcriptions', '/audio/translations'] as const) {
      expect(buildAzureUrl(deploymentStyle, operation, 'gpt-4o-prod')).toBe(`${ENDPOINT}/openai/deployments/gpt-4o-prod${operation}?api-version=2024-10-21`);
    }
  });

  it('sends Responses to the resource, not a deployment', () => {
    expect(buildAzureUrl(deploymentStyle, '/responses', 'gpt-4o-prod')).toBe(`${ENDPOINT}/openai/responses?api-version=2024-10-21`);
  });

  it('escapes a deployment name and ignores a trailing slash on the endpoint', () => {
    expect(buildAzureUrl({ ...deploymentStyle, baseUrl: `${ENDPOINT}/` }, '/chat/completions', 'my model/1')).toBe(
      `${ENDPOINT}/openai/deployments/my%20model%2F1/chat/completions?api-version=2024-10-21`,
    );
  });

  it('uses OpenAI paths on the v1 API base, with an api-version only when one is configured', () => {
    expect(isAzureV1Base(v1Style.baseUrl)).toBe(true);
    expect(isAzureV1Base(ENDPOINT)).toBe(false);
    expect(buildAzureUrl(v1Style, '/chat/completions', 'gpt-4o-prod')).toBe(`${ENDPOINT}/openai/v1/chat/completions`);
    expect(buildAzureUrl(v1Style, '/responses', 'gpt-4o-prod')).toBe(`${ENDPOINT}/openai/v1/responses`);
    expect(buildAzureUrl({ ...v1Style, azure: { apiVersion: 'preview' } }, '/embeddings', 'emb')).toBe(`${ENDPOINT}/openai/v1/embeddings?api-version=preview`);
  });
});

describe('Azure headers', () => {
  it('sends the key as api-key, never as a bearer token', () => {
    expect(buildAzureHeaders(deploymentStyle)).toEqual({ 'content-type': 'application/json', 'api-key': KEY });
  });

  it('sends an Entra ID token as the bearer instead of a key', () => {
    expect(buildAzureHeaders({ ...v1Style, apiKey: undefined, azure: { entraToken: TOKEN } })).toEqual({ 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` });
  });

  it('adds configured headers (lower-cased, replacing ours) and leaves out the content type when asked', () => {
    expect(buildAzureHeaders({ ...deploymentStyle, headers: { 'X-Ms-Useragent': 'umg', 'Api-Key': 'other-key-value' } }, null)).toEqual({
      'api-key': 'other-key-value',
      'x-ms-useragent': 'umg',
    });
  });
});

describe('the Azure chat adapter', () => {
  it('passes chat completions and Responses through, and bridges messages', () => {
    expect(Object.keys(azureChatAdapter.native)).toEqual(['chat', 'responses']);
  });

  it('builds the bridged request with the OpenAI body at the deployment URL, and reports what the bridge dropped', () => {
    const { request: httpRequest, report } = azureChatDefinition.buildChatRequest(deploymentStyle, request);
    expect(httpRequest).toEqual({
      method: 'POST',
      url: `${ENDPOINT}/openai/deployments/gpt-4o-prod/chat/completions?api-version=2024-10-21`,
      headers: { 'content-type': 'application/json', 'api-key': KEY },
      body: JSON.stringify({ model: 'gpt-4o-prod', messages: [{ role: 'user', content: 'Hi' }], stream: true, stream_options: { include_usage: true } }),
    });
    expect(report).toEqual({ dropped: ['top_k'], approximated: [] });
  });

  it('sends a native body as it is, to the deployment the body names', () => {
    const body = { model: 'gpt-4o-prod', messages: [{ role: 'user', content: 'Hi' }], logit_bias: { '50256': -100 } };
    const chat = azureChatAdapter.native.chat!(v1Style, body, { headers: {}, query: '' });
    expect(chat).toEqual({ method: 'POST', url: `${ENDPOINT}/openai/v1/chat/completions`, headers: { 'content-type': 'application/json', 'api-key': KEY }, body: JSON.stringify(body) });
    const responses = azureChatAdapter.native.responses!(deploymentStyle, { model: 'gpt-4o-prod', input: 'Hi' }, { headers: {}, query: '' });
    expect(responses.url).toBe(`${ENDPOINT}/openai/responses?api-version=2024-10-21`);
  });
});

describe('Azure errors', () => {
  it('reads a prompt refused by the content filter as content_filter, naming the flagged categories, never retried', () => {
    const error = parseAzureError(400, readFixture('azure-error-content-filter.1.json'), { 'apim-request-id': 'b5a0e6f2-0c1d-4e7a-9f3b-2d8c4a6e1f00' });
    expect(error).toMatchObject({ status: 400, retryable: false, upstreamType: 'content_filter', upstreamParam: 'prompt', upstreamRequestId: 'b5a0e6f2-0c1d-4e7a-9f3b-2d8c4a6e1f00' });
    expect(error.message).toMatch(/^The provider's content filter refused the prompt \(jailbreak, violence: high\)\. The response was filtered/);
    const gatewayError = error.toGatewayError();
    expect(gatewayError).toMatchObject({ code: 'CONTENT_FILTERED', status: 400, param: 'prompt' });
  });

  it('reads the image form of a refusal too', () => {
    const body = JSON.stringify({ error: { code: 'contentFilter', message: 'Your task failed as a result of our safety system.', innererror: { code: 'ResponsibleAIPolicyViolation', content_filter_results: { sexual: { filtered: true, severity: 'high' } } } } });
    expect(parseAzureError(400, body, {})).toMatchObject({ upstreamType: 'content_filter', message: expect.stringContaining('(sexual: high)') });
  });

  it('reads a rate limit as retryable with its retry-after, so the request fails over', () => {
    const error = parseAzureError(429, readFixture('azure-error-429.1.json'), { 'retry-after': '6', 'x-request-id': 'req-1' });
    expect(error).toMatchObject({ status: 429, retryable: true, retryAfter: 6, upstreamType: '429', upstreamRequestId: 'req-1', provider: 'azure' });
    expect(error.toGatewayError()).toMatchObject({ code: 'RATE_LIMITED', retryAfter: 6 });
  });

  it('reads an unknown deployment as a relayed 404 and a server error as retryable', () => {
    expect(parseAzureError(404, readFixture('azure-error-deployment-not-found.1.json'), {})).toMatchObject({ status: 404, retryable: false, upstreamType: 'DeploymentNotFound' });
    expect(parseAzureError(500, '{"error":{"code":"InternalServerError","message":"Backend returned unexpected response."}}', {})).toMatchObject({ status: 500, retryable: true });
    expect(parseAzureError(503, 'upstream connect error', {})).toMatchObject({ status: 503, retryable: true, message: 'The provider answered with HTTP status 503.' });
  });

  it('keeps a key Azure echoes out of the message', () => {
    const error = parseAzureError(401, JSON.stringify({ error: { code: '401', message: `Access denied due to invalid subscription key api-key: ${KEY}` } }), {});
    expect(error.message).not.toContain(KEY);
  });
});
