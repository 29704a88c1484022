/**
 * `POST /v1/messages/count_tokens` end to end with the official
 * `@anthropic-ai/sdk`: the provider's native count on an Anthropic-format
 * upstream (and a local estimate when that count fails), a local estimate on
 * an OpenAI-format upstream and on the mock that grows with the prompt and
 * counts tools and system, the Anthropic error shape for invalid bodies, and
 * no charge ever.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestGateway } from '../support/gateway.js';
import { collectPromptText, estimateTokens, type UpstreamServer } from '../upstreams/upstream-server.js';
import { failureOf } from '../support/e2e.js';
import { flushAll, usageRowsOf } from '../support/usage.js';
import {
  ANTHROPIC_SECRET,
  INITIAL_CREDITS,
  KINDS,
  balanceOf,
  createClient,
  expectAnthropicError,
  startMessagesWorld,
  postRaw,
  type MessagesWorld,
  type RecordingClient,
} from './messages-e2e.js';

const SYSTEM = 'You are a careful assistant that answers in one sentence.';
const MESSAGES: Anthropic.MessageParam[] = [
  { role: 'user', content: 'What is the capital of France?' },
  { role: 'assistant', content: 'Paris.' },
  { role: 'user', content: 'And of Italy?' },
];
const TOOLS: Anthropic.Tool[] = [
  {
    name: 'lookup_capital',
    description: 'Looks up the capital city of a country by its name',
    input_schema: { type: 'object', properties: { country: { type: 'string', description: 'Country name in English' } }, required: ['country'] },
  },
];

let world: MessagesWorld;
let gateway: TestGateway;
let openaiUpstream: UpstreamServer;
let anthropicUpstream: UpstreamServer;
let accountId: string;
let recording: RecordingClient;
let client: Anthropic;

beforeAll(async () => {
  world = await startMessagesWorld();
  ({ gateway, openaiUpstream, anthropicUpstream } = world);
  const account = await gateway.createAccountWithKey({ credits: INITIAL_CREDITS });
  accountId = account.accountId;
  recording = createClient(gateway, account.key);
  client = recording.client;
});

afterAll(async () => {
  await world?.close();
});

beforeEach(() => {
  anthropicUpstream.reset();
  openaiUpstream.reset();
});

describe('on the Anthropic upstream (native count)', () => {
  it("returns the provider's count, from its count_tokens endpoint", async () => {
    const result = await client.messages.countTokens({ model: 'claude-msg', system: SYSTEM, messages: MESSAGES, tools: TOOLS });
    expect(result.input_tokens).toBe(estimateTokens(collectPromptText([SYSTEM, MESSAGES, TOOLS])));
    expect(anthropicUpstream.requests).toHaveLength(1);
    const upstream = anthropicUpstream.requests[0]!;
    expect(upstream.path).toBe('/v1/messages/count_tokens');
    expect(upstream.body).toEqual({ ...(recording.sent.at(-1)!.body as object), model: 'claude-sonnet-4-5' });
    expect(upstream.headers['x-api-key']).toBe(ANTHROPIC_SECRET);
    expect(upstream.headers['anthropic-version']).toBe(recording.sent.at(-1)!.headers.get('anthropic-version'));
    expect(recording.lastHeaders().get('request-id')).toMatch(/\S/);
  });

  it('forwards the beta header of client.beta.messages.countTokens', async () => {
    const result = await client.beta.messages.countTokens({ model: 'claude-msg', messages: MESSAGES, betas: ['context-management-2025-06-27'] });
    expect(result.input_tokens).toBe(estimateTokens(collectPromptText([MESSAGES])));
    expect(anthropicUpstream.requests).toHaveLength(1);
    const beta = anthropicUpstream.requests[0]!.headers['anthropic-beta'];
    expect(beta).toBe(recording.sent.at(-1)!.headers.get('anthropic-beta'));
    expect(beta).toContain('context-management-2025-06-27');
  });

  it('falls back to a local estimate when the provider count fails with 500', async () => {
    anthropicUpstream.script({ kind: 'status', status: 500, path: '/messages/count_tokens' });
    const estimated = await client.messages.countTokens({ model: 'claude-msg', system: SYSTEM, messages: MESSAGES, tools: TOOLS });
    expect(anthropicUpstream.requests).toHaveLength(1);
    expect(anthropicUpstream.pendingSteps).toBe(0);
    expect(estimated.input_tokens).toBeGreaterThan(0);
    // The same request on the OpenAI-format provider is estimated by the same tokenizer.
    const local = await client.messages.countTokens({ model: 'gpt-msg', system: SYSTEM, messages: MESSAGES, tools: TOOLS });
    expect(estimated.input_tokens).toBe(local.input_tokens);
  });

  it.each([401, 403, 404, 429, 503])('falls back to a local estimate when the provider count answers %i (not the client’s fault)', async (status) => {
    anthropicUpstream.script({ kind: 'status', status, path: '/messages/count_tokens' });
    const estimated = await client.messages.countTokens({ model: 'claude-msg', system: SYSTEM, messages: MESSAGES });
    expect(anthropicUpstream.requests).toHaveLength(1);
    const local = await client.messages.countTokens({ model: 'mock-chat', system: SYSTEM, messages: MESSAGES });
    expect(estimated.input_tokens).toBe(local.input_tokens);
  });

  it('forwards the query of the request (?beta=true)', async () => {
    await client.beta.messages.countTokens({ model: 'claude-msg', messages: MESSAGES }, { query: { beta: 'true' } });
    expect(anthropicUpstream.requests).toHaveLength(1);
    expect(anthropicUpstream.requests[0]!.path).toBe('/v1/messages/count_tokens');
    expect(anthropicUpstream.requests[0]!.query).toEqual({ beta: 'true' });
  });

  it('falls back to a local estimate when the provider is unreachable', async () => {
    anthropicUpstream.script({ kind: 'reset-before', path: '/messages/count_tokens' });
    const estimated = await client.messages.countTokens({ model: 'claude-msg', messages: MESSAGES });
    expect(estimated.input_tokens).toBeGreaterThan(0);
  });

  it('relays a 400 of the provider (an invalid shape it refuses)', async () => {
    anthropicUpstream.script({ kind: 'status', status: 400, path: '/messages/count_tokens', message: 'messages.0.content: unsupported block' });
    const error = await failureOf(client.messages.countTokens({ model: 'claude-msg', messages: MESSAGES }));
    const apiError = expectAnthropicError(error, Anthropic.BadRequestError, { status: 400, type: 'invalid_request_error' });
    expect((apiError.error as { error: { message: string } }).error.message).toContain('unsupported block');
    expect(anthropicUpstream.requests).toHaveLength(1);
  });
});

describe.each(KINDS.filter((kind) => kind.kind !== 'anthropic'))('on the $kind provider (local estimate)', ({ model }) => {
  const count = async (params: Omit<Anthropic.MessageCountTokensParams, 'model'>): Promise<number> =>
    (await client.messages.countTokens({ model, ...params })).input_tokens;

  it('answers a positive count without calling any upstream', async () => {
    const tokens = await count({ messages: [{ role: 'user', content: 'Hello there' }] });
    expect(tokens).toBeGreaterThan(0);
    expect(openaiUpstream.requests).toHaveLength(0);
    expect(anthropicUpstream.requests).toHaveLength(0);
  });

  it('grows with the prompt, and counts system and tools', async () => {
    const short = await count({ messages: [{ role: 'user', content: 'Hello there' }] });
    const long = await count({ messages: [{ role: 'user', content: `Hello there, ${'tell me about the weather in every European capital. '.repeat(20)}` }] });
    expect(long).toBeGreaterThan(short + 100);

    const conversation = await count({ messages: MESSAGES });
    const withSystem = await count({ messages: MESSAGES, system: SYSTEM });
    const withSystemBlocks = await count({ messages: MESSAGES, system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }] });
    const withTools = await count({ messages: MESSAGES, system: SYSTEM, tools: TOOLS });
    expect(withSystem).toBeGreaterThan(conversation);
    expect(withSystemBlocks).toBe(withSystem);
    expect(withTools).toBeGreaterThan(withSystem);

    // Deterministic: the same body counts the same.
    expect(await count({ messages: MESSAGES, system: SYSTEM, tools: TOOLS })).toBe(withTools);
  });

  it('counts tool_use and tool_result turns', async () => {
    const base = await count({ messages: [{ role: 'user', content: 'Capital of Italy?' }], tools: TOOLS });
    const withToolTurns = await count({
      tools: TOOLS,
      messages: [
        { role: 'user', content: 'Capital of Italy?' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup_capital', input: { country: 'Italy' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Rome is the capital of Italy.' }] },
      ],
    });
    expect(withToolTurns).toBeGreaterThan(base);
  });
});

describe('invalid bodies', () => {
  it.each(KINDS)('answers 400 invalid_request_error in the Anthropic shape when messages is missing ($kind)', async ({ model }) => {
    const error = await failureOf(client.messages.countTokens({ model } as unknown as Anthropic.MessageCountTokensParams));
    const apiError = expectAnthropicError(error, Anthropic.BadRequestError, { status: 400, type: 'invalid_request_error', code: 'INVALID_REQUEST' });
    expect((apiError.error as { error: { param?: string } }).error.param).toBe('messages');
    expect(anthropicUpstream.requests).toHaveLength(0);
  });

  it('answers 400 for an empty messages array and for a message without content', async () => {
    for (const messages of [[], [{ role: 'user' }]]) {
      const error = await failureOf(client.messages.countTokens({ model: 'claude-msg', messages } as unknown as Anthropic.MessageCountTokensParams));
      expectAnthropicError(error, Anthropic.BadRequestError, { status: 400, type: 'invalid_request_error', code: 'INVALID_REQUEST' });
    }
    expect(anthropicUpstream.requests).toHaveLength(0);
  });

  it('answers 404 not_found_error for an unknown model', async () => {
    const error = await failureOf(client.messages.countTokens({ model: 'no-such-model', messages: MESSAGES }));
    expectAnthropicError(error, Anthropic.NotFoundError, { status: 404, type: 'not_found_error', code: 'MODEL_NOT_FOUND' });
  });

  it('answers 401 authentication_error for a bad key', async () => {
    const stranger = createClient(gateway, 'sk-umg-not-a-real-key-000000000000000000000000000000');
    const error = await failureOf(stranger.client.messages.countTokens({ model: 'mock-chat', messages: MESSAGES }));
    expectAnthropicError(error, Anthropic.AuthenticationError, { status: 401, type: 'authentication_error' });
  });

  it('answers bad JSON with 400 in the Anthropic shape', async () => {
    const account = await gateway.createAccountWithKey();
    const response = await postRaw(gateway, '/v1/messages/count_tokens', '{"model":', { 'x-api-key': account.key });
    expect(response.status).toBe(400);
    expect(response.headers.get('request-id')).toMatch(/\S/);
    expect(response.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });
});

describe('billing', () => {
  it('never charges a count, even on an account with no credits left', async () => {
    const broke = await gateway.createAccountWithKey({ credits: 0 });
    const brokeClient = createClient(gateway, broke.key).client;
    for (const { model } of KINDS) {
      const result = await brokeClient.messages.countTokens({ model, system: SYSTEM, messages: MESSAGES, tools: TOOLS });
      expect(result.input_tokens).toBeGreaterThan(0);
    }
    await flushAll(gateway);
    expect(await usageRowsOf(gateway, broke.accountId)).toEqual([]);
  });

  it('left no usage row with a cost and the balance unchanged after every count of this file', async () => {
    await flushAll(gateway);
    const rows = await usageRowsOf(gateway, accountId);
    expect(rows.filter((row) => Number(row.cost) > 0)).toEqual([]);
    expect(await balanceOf(gateway, accountId)).toEqual({ total: INITIAL_CREDITS * 1_000_000, held: 0 });
  });
});
