/**
 * Refusals of `POST /v1/chat/completions` as the official `openai` client sees
 * them: each maps to the SDK's error class by status, with the gateway's
 * `code` and the `param` at fault; lenient parts of the format are accepted.
 * A refused request reaches no provider and costs nothing.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { FAST_UPSTREAM, errorText, failureOf } from '../support/e2e.js';
import {
  OPENAI_SECRET,
  SECRET_ENV,
  chatModel,
  createClient,
  expectApiError,
  expectNoSecrets,
  expectUsageRow,
  heldOf,
  openAIProvider,
  untyped,
  type RecordingClient,
} from './chat-e2e.js';

let gateway: TestGateway;
let upstream: UpstreamServer;
let accountId: string;
let keyId: string;
let recording: RecordingClient;
let client: OpenAI;

const USER = { role: 'user', content: 'hi' };

beforeAll(async () => {
  upstream = await startOpenAIUpstream({ expectedApiKey: OPENAI_SECRET });
  gateway = await startTestGateway({
    env: SECRET_ENV,
    config: { upstream: FAST_UPSTREAM },
    catalog: {
      providers: [{ id: 'mock', kind: 'mock' }, openAIProvider('openai-up', upstream.url)],
      models: [
        chatModel('mock-chat', 'mock', 'mock-chat'),
        chatModel('gpt-e2e', 'openai-up', 'gpt-4o-mini'),
        { id: 'mock-embedder', ownedBy: 'e2e', provider: 'mock', upstreamModel: 'mock-embedding-small', endpoints: ['/v1/embeddings'], pricing: { input: 0.02, output: 0 }, dimensions: 8 },
      ],
    },
  });
  let key: string;
  ({ accountId, keyId, key } = await gateway.createAccountWithKey());
  recording = createClient(gateway, key);
  client = recording.client;
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

interface InvalidCase {
  name: string;
  body: Record<string, unknown>;
  param: string;
}

const INVALID: InvalidCase[] = [
  { name: 'temperature 3', body: { model: 'mock-chat', messages: [USER], temperature: 3 }, param: 'temperature' },
  { name: 'temperature -0.5', body: { model: 'mock-chat', messages: [USER], temperature: -0.5 }, param: 'temperature' },
  { name: '5 stop sequences', body: { model: 'mock-chat', messages: [USER], stop: ['a', 'b', 'c', 'd', 'e'] }, param: 'stop' },
  { name: 'presence_penalty 3', body: { model: 'mock-chat', messages: [USER], presence_penalty: 3 }, param: 'presence_penalty' },
  { name: 'frequency_penalty -3', body: { model: 'mock-chat', messages: [USER], frequency_penalty: -3 }, param: 'frequency_penalty' },
  { name: 'a tool of type web_search', body: { model: 'mock-chat', messages: [USER], tools: [{ type: 'web_search' }] }, param: 'tools[0].type' },
  { name: 'a bad role', body: { model: 'mock-chat', messages: [{ role: 'robot', content: 'hi' }] }, param: 'messages[0].role' },
  { name: 'missing messages', body: { model: 'mock-chat' }, param: 'messages' },
  { name: 'empty messages', body: { model: 'mock-chat', messages: [] }, param: 'messages' },
  { name: 'missing model', body: { messages: [USER] }, param: 'model' },
  { name: "response_format.type 'xml'", body: { model: 'mock-chat', messages: [USER], response_format: { type: 'xml' } }, param: 'response_format.type' },
  { name: "reasoning_effort 'extreme'", body: { model: 'mock-chat', messages: [USER], reasoning_effort: 'extreme' }, param: 'reasoning_effort' },
];

describe('validation errors → BadRequestError 400 INVALID_REQUEST with the param at fault', () => {
  it.each(INVALID)('$name', async ({ body, param }) => {
    upstream.reset();
    for (const model of ['mock-chat', 'gpt-e2e']) {
      const withModel = 'model' in body ? { ...body, model } : body;
      const error = await failureOf(client.chat.completions.create(untyped(withModel)));
      const apiError = expectApiError(error, OpenAI.BadRequestError, { status: 400, code: 'INVALID_REQUEST', param });
      expect(apiError.type).toBe('invalid_request_error');
      expect(apiError.message).toContain(param);
      // Streams are refused the same way, before any SSE header.
      const streamError = await failureOf(client.chat.completions.create({ ...untyped(withModel), stream: true }));
      expectApiError(streamError, OpenAI.BadRequestError, { status: 400, code: 'INVALID_REQUEST', param });
    }
    expect(upstream.requests).toHaveLength(0);
  });
});

describe('model errors', () => {
  it('an unknown model → NotFoundError 404 MODEL_NOT_FOUND', async () => {
    const error = await failureOf(client.chat.completions.create({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }));
    const apiError = expectApiError(error, OpenAI.NotFoundError, { status: 404, code: 'MODEL_NOT_FOUND', param: 'model' });
    expect(apiError.message).toContain('no-such-model');
  });

  it('a model without the chat endpoint → BadRequestError 400 UNSUPPORTED_ENDPOINT', async () => {
    const error = await failureOf(client.chat.completions.create({ model: 'mock-embedder', messages: [{ role: 'user', content: 'hi' }] }));
    expectApiError(error, OpenAI.BadRequestError, { status: 400, code: 'UNSUPPORTED_ENDPOINT', param: 'model' });
  });
});

describe('authentication', () => {
  it('a bad key → AuthenticationError 401 INVALID_KEY', async () => {
    const stranger = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'sk-umg-thisKeyDoesNotExist0000000000000000000000', maxRetries: 0 });
    const error = await failureOf(stranger.chat.completions.create({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }] }));
    const apiError = expectApiError(error, OpenAI.AuthenticationError, { status: 401, code: 'INVALID_KEY' });
    expect((apiError.error as Record<string, unknown>).reference_id).toBe(apiError.requestID);
    expectNoSecrets(errorText(apiError));
    const streamError = await failureOf(stranger.chat.completions.create({ model: 'mock-chat', messages: [{ role: 'user', content: 'hi' }], stream: true }));
    expectApiError(streamError, OpenAI.AuthenticationError, { status: 401, code: 'INVALID_KEY' });
  });
});

describe('lenient parts of the format', () => {
  const lenient = (model: string) => ({
    model,
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Describe this.' },
          { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
          { type: 'hologram', hologram: { id: 'h1' } },
        ],
      },
    ],
    some_future_option: { enabled: true },
    another_unknown_field: 42,
  });

  it('accepts unknown extra body fields and unknown content part types (mock)', async () => {
    const completion = await client.chat.completions.create(untyped(lenient('mock-chat')));
    expect(completion.choices[0].message.content).toBeTruthy();
    await expectUsageRow(gateway, recording.lastRequestId(), { accountId, keyId, model: 'mock-chat', status: 200, stream: false });
  });

  it('passes them unchanged to a same-format provider', async () => {
    upstream.reset();
    const completion = await client.chat.completions.create(untyped(lenient('gpt-e2e')));
    expect(completion.choices[0].message.content).toBe('Echo: Describe this.');
    expect(JSON.parse(upstream.requests[0].rawBody)).toStrictEqual({ ...lenient('gpt-e2e'), model: 'gpt-4o-mini' });
    await expectUsageRow(gateway, recording.lastRequestId(), { accountId, keyId, model: 'gpt-e2e', status: 200, stream: false });
  });
});

describe('billing of refusals', () => {
  it('a refused request wrote no usage row and held nothing', async () => {
    const { db, billing } = gateway.gateway.services;
    await billing.flush();
    const rows = await db.selectFrom('usage').select('request_id').where('account_id', '=', accountId).execute();
    // Only the accepted requests of the lenient-format tests were generated.
    expect(rows).toHaveLength(2);
    expect(await heldOf(gateway, accountId)).toBe(0);
  });
});
