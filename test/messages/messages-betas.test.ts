/**
 * `anthropic-beta` of a messages client (SPEC "POST /messages": the beta
 * header is forwarded to the selected provider), through the official
 * `@anthropic-ai/sdk`: every beta reaches an Anthropic provider by default,
 * only the listed ones when its catalog entry sets `allowedBetas`, and none
 * reaches an OpenAI-format provider (the request is bridged).
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { startAnthropicUpstream } from '../upstreams/anthropic-upstream.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';

const BETAS = ['context-management-2025-06-27', 'interleaved-thinking-2025-05-14'];
const PRICING = { input: 1, output: 1 };

let anthropicUpstream: UpstreamServer;
let narrowUpstream: UpstreamServer;
let openaiUpstream: UpstreamServer;
let gateway: TestGateway;
let client: Anthropic;

beforeAll(async () => {
  [anthropicUpstream, narrowUpstream, openaiUpstream] = await Promise.all([startAnthropicUpstream(), startAnthropicUpstream(), startOpenAIUpstream()]);
  gateway = await startTestGateway({
    env: { UMG_BETAS_ANTHROPIC_KEY: 'sk-ant-betas-default-0123456789', UMG_BETAS_OPENAI_KEY: 'sk-openai-betas-0123456789' },
    catalog: {
      providers: [
        { id: 'anthropic-default', kind: 'anthropic', baseUrl: anthropicUpstream.url, apiKey: 'env:UMG_BETAS_ANTHROPIC_KEY' },
        { id: 'anthropic-narrow', kind: 'anthropic', baseUrl: narrowUpstream.url, apiKey: 'env:UMG_BETAS_ANTHROPIC_KEY', allowedBetas: ['interleaved-thinking-2025-05-14'] },
        { id: 'openai-up', kind: 'openai', baseUrl: openaiUpstream.url, apiKey: 'env:UMG_BETAS_OPENAI_KEY' },
      ],
      models: [
        { id: 'claude-default', ownedBy: 'e2e', provider: 'anthropic-default', upstreamModel: 'claude-sonnet-4-5', endpoints: ['/v1/messages', '/v1/messages/count_tokens'], pricing: PRICING },
        { id: 'claude-narrow', ownedBy: 'e2e', provider: 'anthropic-narrow', upstreamModel: 'claude-sonnet-4-5', endpoints: ['/v1/messages', '/v1/messages/count_tokens'], pricing: PRICING },
        { id: 'gpt-bridged', ownedBy: 'e2e', provider: 'openai-up', upstreamModel: 'gpt-4o-mini', endpoints: ['/v1/messages', '/v1/messages/count_tokens'], pricing: PRICING },
      ],
    },
  });
  const { key } = await gateway.createAccountWithKey({ credits: 10 });
  client = new Anthropic({ baseURL: gateway.url, apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([anthropicUpstream?.close(), narrowUpstream?.close(), openaiUpstream?.close()]);
});

beforeEach(() => {
  for (const upstream of [anthropicUpstream, narrowUpstream, openaiUpstream]) upstream.reset();
});

function create(model: string) {
  return client.beta.messages.create({ model, max_tokens: 32, betas: BETAS, messages: [{ role: 'user', content: 'hello' }] });
}

describe('anthropic-beta of a messages client', () => {
  it('reaches an Anthropic provider as sent when its catalog entry sets no allowedBetas (messages and count_tokens)', async () => {
    const message = await create('claude-default');
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'Echo: hello' });
    await client.beta.messages.countTokens({ model: 'claude-default', betas: BETAS, messages: [{ role: 'user', content: 'hello' }] });
    const [sent, counted] = anthropicUpstream.requests;
    expect(sent!.path).toBe('/v1/messages');
    expect(sent!.headers['anthropic-beta']).toBe(BETAS.join(','));
    expect(counted!.path).toBe('/v1/messages/count_tokens');
    expect(counted!.headers['anthropic-beta']).toContain(BETAS[0]);
  });

  it('is narrowed to the listed betas when the catalog entry sets allowedBetas', async () => {
    await create('claude-narrow');
    expect(narrowUpstream.requests[0]!.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
    // No listed beta asked for: no header at all.
    await client.beta.messages.create({ model: 'claude-narrow', max_tokens: 32, betas: ['context-management-2025-06-27'], messages: [{ role: 'user', content: 'hello' }] });
    expect(narrowUpstream.requests[1]!.headers['anthropic-beta']).toBeUndefined();
  });

  it('never reaches an OpenAI-format provider', async () => {
    const message = await create('gpt-bridged');
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'Echo: hello' });
    const sent = openaiUpstream.requests[0]!;
    expect(sent.path).toBe('/v1/chat/completions');
    expect(sent.headers['anthropic-beta']).toBeUndefined();
    expect(sent.headers['anthropic-version']).toBeUndefined();
  });
});
