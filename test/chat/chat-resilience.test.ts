/**
 * Upstream faults seen through `POST /v1/chat/completions` with the official
 * `openai` client, on an OpenAI-format upstream (same-format pass-through) and
 * an Anthropic-format one (bridge): retries on 429, 5xx and connection resets,
 * fallback to a second deployment, relayed provider 4xx, garbage answers,
 * first-byte and idle timeouts, resets and in-band errors mid-stream, and a
 * client that leaves mid-stream. After each: the usage row (status, error
 * code, tokens the client saw, the charge) and, at the end, balances and
 * ledger. No provider secret ever reaches the client.
 */
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTextTokens } from '../../server/tokenizer.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { startAnthropicUpstream } from '../upstreams/anthropic-upstream.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { FAST_UPSTREAM, errorText, failureOf } from '../support/e2e.js';
import {
  ANTHROPIC_SECRET,
  OPENAI_SECRET,
  SECRET_ENV,
  anthropicProvider,
  chatModel,
  collectStream,
  createClient,
  expectApiError,
  expectBalanceSettled,
  expectNoSecrets,
  expectUsageRow,
  heldOf,
  openAIProvider,
  postRawStream,
  ssePayloads,
  type ExpectedUsage,
  type NonStreamBody,
  type RecordingClient,
} from './chat-e2e.js';

/**
 * Per-provider limits of the catalog: stalls longer than these must end the
 * request. They also apply to every healthy answer of the file, so they are
 * well above the pauses a loaded machine can give a local test server.
 */
const TIMEOUTS = { firstByteTimeoutMs: 1_500, idleTimeoutMs: 1_500, maxRetries: 2 };
/** A stall comfortably longer than the timeouts. */
const STALL_MS = 6_000;
const PROMPT = 'hello world from the resilience suite';

let gateway: TestGateway;
const servers: Record<string, UpstreamServer> = {};
let accountId: string;
let keyId: string;
let key: string;
let recording: RecordingClient;
let client: OpenAI;
/** Every request of this file that reached the generation pipeline (one usage row each). */
const generated: string[] = [];
/** Everything clients were shown of errors, checked for secrets at the end. */
const shownErrors: string[] = [];

beforeAll(async () => {
  servers.openaiPrimary = await startOpenAIUpstream({ expectedApiKey: OPENAI_SECRET });
  servers.openaiSecondary = await startOpenAIUpstream({ expectedApiKey: OPENAI_SECRET });
  servers.anthropicPrimary = await startAnthropicUpstream({ expectedApiKey: ANTHROPIC_SECRET });
  servers.anthropicSecondary = await startAnthropicUpstream({ expectedApiKey: ANTHROPIC_SECRET });
  gateway = await startTestGateway({
    env: SECRET_ENV,
    config: { upstream: FAST_UPSTREAM },
    catalog: {
      providers: [
        openAIProvider('openai-a', servers.openaiPrimary.url, TIMEOUTS),
        openAIProvider('openai-b', servers.openaiSecondary.url, TIMEOUTS),
        anthropicProvider('anthropic-a', servers.anthropicPrimary.url, TIMEOUTS),
        anthropicProvider('anthropic-b', servers.anthropicSecondary.url, TIMEOUTS),
      ],
      models: [
        chatModel('gpt-single', 'openai-a', 'gpt-4o-mini'),
        chatModel('gpt-fallback', 'openai-a', 'gpt-4o-mini', { deployments: [{ provider: 'openai-b', priority: 1, weight: 1 }] }),
        chatModel('claude-single', 'anthropic-a', 'claude-sonnet-4-5'),
        chatModel('claude-fallback', 'anthropic-a', 'claude-sonnet-4-5', { deployments: [{ provider: 'anthropic-b', priority: 1, weight: 1 }] }),
      ],
    },
  });
  ({ accountId, keyId, key } = await gateway.createAccountWithKey());
  recording = createClient(gateway, key);
  client = recording.client;
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all(Object.values(servers).map((server) => server.close()));
});

interface Dialect {
  name: 'openai' | 'anthropic';
  single: string;
  fallback: string;
  primary: () => UpstreamServer;
  secondary: () => UpstreamServer;
  primaryProvider: string;
  secondaryProvider: string;
  /** Frames the upstream sends before the first piece of text. */
  framesBeforeText: number;
}

const DIALECTS: Dialect[] = [
  {
    name: 'openai',
    single: 'gpt-single',
    fallback: 'gpt-fallback',
    primary: () => servers.openaiPrimary,
    secondary: () => servers.openaiSecondary,
    primaryProvider: 'openai-a',
    secondaryProvider: 'openai-b',
    // The role chunk.
    framesBeforeText: 1,
  },
  {
    name: 'anthropic',
    single: 'claude-single',
    fallback: 'claude-fallback',
    primary: () => servers.anthropicPrimary,
    secondary: () => servers.anthropicSecondary,
    primaryProvider: 'anthropic-a',
    secondaryProvider: 'anthropic-b',
    // message_start, content_block_start, ping.
    framesBeforeText: 3,
  },
];

function body(model: string): NonStreamBody {
  return { model, messages: [{ role: 'user', content: PROMPT }] };
}

function generatedId(): string {
  const id = recording.lastRequestId();
  generated.push(id);
  return id;
}

/** Remembers what the client was shown of an error, for the secrets check. */
function shown(error: unknown): unknown {
  shownErrors.push(errorText(error));
  return error;
}

describe.each(DIALECTS)('faults of an $name-format upstream', (dialect) => {
  const usage = (requestId: string, fields: Omit<ExpectedUsage, 'accountId' | 'keyId' | 'model'> & { model?: string }) =>
    expectUsageRow(gateway, requestId, { accountId, keyId, model: dialect.single, ...fields });

  const resetServers = () => {
    dialect.primary().reset();
    dialect.secondary().reset();
  };

  /** A successful non-streamed answer after the scripted faults, and its usage row. */
  async function expectRecovered(model = dialect.single, provider = dialect.primaryProvider): Promise<void> {
    const { data: completion, request_id: answerRequestId } = await client.chat.completions.create(body(model)).withResponse();
    const requestId = generatedId();
    expect(answerRequestId).toBe(requestId);
    expect(completion.choices[0].message.content).toBe(`Echo: ${PROMPT}`);
    expect(completion.choices[0].finish_reason).toBe('stop');
    await usage(requestId, {
      model,
      status: 200,
      stream: false,
      errorCode: null,
      provider,
      inputTokens: completion.usage!.prompt_tokens,
      outputTokens: completion.usage!.completion_tokens,
    });
  }

  it('retries a 429 with retry-after: 0, and the client sees only the success', async () => {
    resetServers();
    dialect.primary().script({ kind: 'status', status: 429, headers: { 'retry-after': '0' } });
    await expectRecovered();
    expect(dialect.primary().requests).toHaveLength(2);
    expect(dialect.primary().pendingSteps).toBe(0);
  });

  it('retries a 500', async () => {
    resetServers();
    dialect.primary().script({ kind: 'status', status: 500 });
    await expectRecovered();
    expect(dialect.primary().requests).toHaveLength(2);
  });

  it('retries a connection reset before the answer', async () => {
    resetServers();
    dialect.primary().script({ kind: 'reset-before' });
    await expectRecovered();
    expect(dialect.primary().requests).toHaveLength(2);
  });

  it('falls over to the second deployment after three 500s on the primary', async () => {
    resetServers();
    dialect.primary().script({ kind: 'status', status: 500 }, { kind: 'status', status: 500 }, { kind: 'status', status: 500 });
    await expectRecovered(dialect.fallback, dialect.secondaryProvider);
    expect(dialect.primary().requests).toHaveLength(3);
    expect(dialect.secondary().requests).toHaveLength(1);
  });

  it("relays a provider 400 with the provider's message as UNSUPPORTED_FEATURE, without retrying", async () => {
    resetServers();
    const message = 'This model does not support the logit_bias parameter.';
    dialect.primary().script({ kind: 'status', status: 400, message, param: 'logit_bias' });
    const error = shown(await failureOf(client.chat.completions.create(body(dialect.single))));
    generatedId();
    const apiError = expectApiError(error, OpenAI.BadRequestError, { status: 400, code: 'UNSUPPORTED_FEATURE' });
    expect(apiError.message).toContain(message);
    if (dialect.name === 'openai') expect(apiError.param).toBe('logit_bias');
    expect(dialect.primary().requests).toHaveLength(1);
    await usage(apiError.requestID!, { status: 400, stream: false, errorCode: 'UNSUPPORTED_FEATURE' });
  });

  it('never shows the provider key, even when a provider error message quotes it', async () => {
    resetServers();
    const secret = dialect.name === 'openai' ? OPENAI_SECRET : ANTHROPIC_SECRET;
    dialect.primary().script({ kind: 'status', status: 400, message: `Invalid request sent with key ${secret}.` });
    const error = shown(await failureOf(client.chat.completions.create(body(dialect.single))));
    generatedId();
    const apiError = expectApiError(error, OpenAI.BadRequestError, { status: 400, code: 'UNSUPPORTED_FEATURE' });
    expectNoSecrets(errorText(apiError));
    expect(apiError.message).toContain('Invalid request sent with key');
  });

  it('answers 502 UPSTREAM_ERROR when the provider keeps failing with 500', async () => {
    resetServers();
    dialect.primary().script({ kind: 'status', status: 500 }, { kind: 'status', status: 500 }, { kind: 'status', status: 500 });
    const error = shown(await failureOf(client.chat.completions.create(body(dialect.single))));
    generatedId();
    const apiError = expectApiError(error, OpenAI.InternalServerError, { status: 502, code: 'UPSTREAM_ERROR' });
    expect(dialect.primary().requests).toHaveLength(3);
    await usage(apiError.requestID!, { status: 502, stream: false, errorCode: 'UPSTREAM_ERROR', provider: null });
  });

  it('answers 502 UPSTREAM_ERROR for a malformed JSON answer', async () => {
    resetServers();
    dialect.primary().script({ kind: 'malformed-json' });
    const error = shown(await failureOf(client.chat.completions.create(body(dialect.single))));
    generatedId();
    const apiError = expectApiError(error, OpenAI.InternalServerError, { status: 502, code: 'UPSTREAM_ERROR' });
    await usage(apiError.requestID!, { status: 502, stream: false, errorCode: 'UPSTREAM_ERROR' });
  });

  it('answers 504 UPSTREAM_TIMEOUT when the provider is silent longer than firstByteTimeoutMs, and hangs up on it', async () => {
    resetServers();
    dialect.primary().script({ kind: 'delay', ms: STALL_MS });
    const error = shown(await failureOf(client.chat.completions.create(body(dialect.single))));
    generatedId();
    const apiError = expectApiError(error, OpenAI.InternalServerError, { status: 504, code: 'UPSTREAM_TIMEOUT' });
    await dialect.primary().waitForAborted(1);
    await usage(apiError.requestID!, { status: 504, stream: false, errorCode: 'UPSTREAM_TIMEOUT' });
  });

  it('a stream request whose provider is silent longer than firstByteTimeoutMs gets a plain 504 (no SSE started)', async () => {
    resetServers();
    dialect.primary().script({ kind: 'delay', ms: STALL_MS });
    const error = shown(await failureOf(client.chat.completions.create({ ...body(dialect.single), stream: true })));
    generatedId();
    expectApiError(error, OpenAI.InternalServerError, { status: 504, code: 'UPSTREAM_TIMEOUT' });
    await dialect.primary().waitForAborted(1);
    await usage(recording.lastRequestId(), { status: 504, stream: true, errorCode: 'UPSTREAM_TIMEOUT' });
  });

  it('a stream that stalls longer than idleTimeoutMs throws in the SDK (an in-band error, never a clean end)', async () => {
    resetServers();
    dialect.primary().script({ kind: 'stall', afterChunks: dialect.framesBeforeText + 2, ms: STALL_MS });
    const { data: stream } = await client.chat.completions
      .create({ ...body(dialect.single), stream: true })
      .withResponse();
    const requestId = generatedId();
    const { text, error } = await collectStream(stream);
    expect(error).toBeInstanceOf(APIError);
    shown(error);
    expect((error as APIError).status).toBeUndefined();
    expect(text).toBe(`Echo: ${PROMPT}`.slice(0, 8));
    const row = await usage(requestId, { status: 200, stream: true, errorCode: 'UPSTREAM_TIMEOUT' });
    expect(row.output_tokens).toBe(countTextTokens(text));
  });

  it('the stalled stream ends with the error payload and no [DONE] on the wire', async () => {
    resetServers();
    dialect.primary().script({ kind: 'stall', afterChunks: dialect.framesBeforeText + 2, ms: STALL_MS });
    const answer = await postRawStream(gateway, key, body(dialect.single) as unknown as Record<string, unknown>);
    generated.push(answer.headers.get('x-request-id')!);
    expect(answer.status).toBe(200);
    expect(answer.text).not.toContain('[DONE]');
    const last = ssePayloads(answer.text).at(-1) as { error: { message: string; type: string; code: string } };
    expect(last.error).toMatchObject({ code: 'UPSTREAM_TIMEOUT' });
    expect(last.error.message).toMatch(/\S/);
    shownErrors.push(JSON.stringify(last));
  });

  it('a connection reset mid-stream throws in the SDK', async () => {
    resetServers();
    dialect.primary().script({ kind: 'reset-during-stream', afterChunks: dialect.framesBeforeText + 2 });
    const { data: stream } = await client.chat.completions
      .create({ ...body(dialect.single), stream: true, stream_options: { include_usage: true } })
      .withResponse();
    const requestId = generatedId();
    const { chunks, error } = await collectStream(stream);
    expect(error).toBeInstanceOf(APIError);
    shown(error);
    expect(chunks.some((chunk) => chunk.usage)).toBe(false);
    await usage(requestId, { status: 200, stream: true, errorCode: 'UPSTREAM_ERROR' });
  });

  it('a connection reset mid-stream ends with the error payload and no [DONE] on the wire', async () => {
    resetServers();
    dialect.primary().script({ kind: 'reset-during-stream', afterChunks: dialect.framesBeforeText + 2 });
    const answer = await postRawStream(gateway, key, body(dialect.single) as unknown as Record<string, unknown>);
    generated.push(answer.headers.get('x-request-id')!);
    expect(answer.text).not.toContain('[DONE]');
    const last = ssePayloads(answer.text).at(-1) as { error: Record<string, unknown> };
    expect(last.error).toMatchObject({ code: 'UPSTREAM_ERROR' });
    shownErrors.push(JSON.stringify(last));
  });

  it("an in-band error event from the provider mid-stream throws in the client's stream", async () => {
    resetServers();
    const message = 'The provider hit an internal error mid-stream.';
    dialect.primary().script({ kind: 'error-event', afterChunks: dialect.framesBeforeText + 2, message });
    const { data: stream } = await client.chat.completions
      .create({ ...body(dialect.single), stream: true })
      .withResponse();
    const requestId = generatedId();
    const { text, error } = await collectStream(stream);
    expect(error).toBeInstanceOf(APIError);
    shown(error);
    expect((error as APIError).message).toContain(message);
    expect(text).toBe(`Echo: ${PROMPT}`.slice(0, 8));
    // Charged for what was delivered, and marked as failed.
    const row = await usage(requestId, { status: 200, stream: true });
    expect(row.error_code).not.toBeNull();
    expect(row.output_tokens).toBe(countTextTokens(text));
  });

  it('a stream the provider ends early (no closing event) throws in the SDK instead of ending cleanly', async () => {
    resetServers();
    // Shorter than the idle timeout: the provider simply closes the response after two text pieces.
    dialect.primary().script({ kind: 'stall', afterChunks: dialect.framesBeforeText + 2, ms: 20 });
    const { data: stream } = await client.chat.completions.create({ ...body(dialect.single), stream: true }).withResponse();
    const requestId = generatedId();
    const { text, error } = await collectStream(stream);
    expect(error).toBeInstanceOf(APIError);
    shown(error);
    expect(text).toBe(`Echo: ${PROMPT}`.slice(0, 8));
    const row = await usage(requestId, { status: 200, stream: true, errorCode: 'UPSTREAM_ERROR' });
    expect(row.output_tokens).toBe(countTextTokens(text));
  });

  it('a frame that is not JSON mid-stream ends in an in-band APIError, not a parse error in the client', async () => {
    resetServers();
    dialect.primary().script({ kind: 'malformed-sse', afterChunks: dialect.framesBeforeText + 2 });
    const { data: stream } = await client.chat.completions.create({ ...body(dialect.single), stream: true }).withResponse();
    const requestId = generatedId();
    const { text, error } = await collectStream(stream);
    expect(error).toBeInstanceOf(APIError);
    shown(error);
    expect(text).toBe(`Echo: ${PROMPT}`.slice(0, 8));
    await usage(requestId, { status: 200, stream: true, errorCode: 'UPSTREAM_ERROR' });
  });

  it('a stream cut off in the middle of a frame ends with a whole error frame, not a half frame glued to it', async () => {
    resetServers();
    const frames =
      dialect.name === 'openai'
        ? [
            'data: {"id":"chatcmpl-cut","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}\n\n',
            'data: {"id":"chatcmpl-cut","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"Hel"},"finish_reason":null}]}\n\n',
            'data: {"id":"chatcmpl-cut","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"lo wor',
          ]
        : [
            'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_cut","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":5,"output_tokens":1}}}\n\n',
            'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
            'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}\n\n',
            'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo wor',
          ];
    dialect.primary().script({ kind: 'sse', frames });
    const { data: stream } = await client.chat.completions.create({ ...body(dialect.single), stream: true }).withResponse();
    const requestId = generatedId();
    const { text, error } = await collectStream(stream);
    expect(error).toBeInstanceOf(APIError);
    shown(error);
    expect(text).toBe('Hel');
    await usage(requestId, { status: 200, stream: true, errorCode: 'UPSTREAM_ERROR' });

    dialect.primary().script({ kind: 'sse', frames });
    const answer = await postRawStream(gateway, key, body(dialect.single) as unknown as Record<string, unknown>);
    generated.push(answer.headers.get('x-request-id')!);
    expect(answer.text).not.toContain('lo wor');
    const payloads = ssePayloads(answer.text);
    expect(payloads.at(-1)).toMatchObject({ error: { code: 'UPSTREAM_ERROR' } });
  });

  it('an in-band provider error that quotes the provider key reaches the client redacted', async () => {
    resetServers();
    const secret = dialect.name === 'openai' ? OPENAI_SECRET : ANTHROPIC_SECRET;
    dialect.primary().script({ kind: 'error-event', afterChunks: dialect.framesBeforeText + 1, message: `Key ${secret} is over its quota.` });
    const { data: stream } = await client.chat.completions.create({ ...body(dialect.single), stream: true }).withResponse();
    generatedId();
    const { error } = await collectStream(stream);
    expect(error).toBeInstanceOf(APIError);
    shown(error);
    expect((error as APIError).message).toContain('is over its quota');
    expectNoSecrets(errorText(error));
  });

  it('a client that aborts mid-stream: the upstream sees the abort, the delivered part is charged, the hold released', async () => {
    resetServers();
    // Three text pieces of four characters, then silence until the client leaves.
    dialect.primary().script({ kind: 'stall', afterChunks: dialect.framesBeforeText + 3, ms: 30_000 });
    const expected = `Echo: ${PROMPT}`.slice(0, 12);
    const controller = new AbortController();
    const { data: stream } = await client.chat.completions
      .create({ ...body(dialect.single), stream: true }, { signal: controller.signal })
      .withResponse();
    const requestId = generatedId();
    let text = '';
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (text.length >= expected.length) controller.abort();
    }
    expect(text).toBe(expected);
    const [aborted] = await dialect.primary().waitForAborted(1);
    expect(aborted.path).toBe(dialect.name === 'openai' ? '/v1/chat/completions' : '/v1/messages');
    const row = await usage(requestId, { status: 200, stream: true, aborted: true, errorCode: 'CLIENT_ABORTED' });
    expect(row.output_tokens).toBeGreaterThan(0);
    expect(row.output_tokens).toBe(countTextTokens(text));
    expect(Number(row.cost)).toBeGreaterThan(0);
    expect(await heldOf(gateway, accountId)).toBe(0);
  });
});

describe('after every fault', () => {
  it('no error shown to a client contained a provider secret', () => {
    expect(shownErrors.length).toBeGreaterThan(10);
    for (const text of shownErrors) expectNoSecrets(text);
  });

  it('wrote exactly one usage row per request, and balance and ledger agree with the charges', async () => {
    const rows = await expectBalanceSettled(gateway, accountId);
    const ids = await gateway.gateway.services.db.selectFrom('usage').select('request_id').where('account_id', '=', accountId).execute();
    expect(ids.map((item) => item.request_id).sort()).toEqual([...generated].sort());
    expect(rows).toBe(generated.length);
  });
});
