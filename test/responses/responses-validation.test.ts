/**
 * What `/v1/responses` refuses and what it lets through, with the official
 * `openai` client: bounds (`max_output_tokens` ≥ 16, `temperature` 0..2) and
 * malformed items are 400s naming the field; unknown fields, hosted tools,
 * unknown query parameters and item types are accepted (passed through to a
 * Responses-speaking upstream, reported as dropped by a bridge, refused in
 * strict mode); a model without the endpoint is UNSUPPORTED_ENDPOINT. Then
 * failures after a stream started: `response.failed` and an `error` event
 * that makes the SDK throw, numbered in sequence with what went before.
 */
import OpenAI from 'openai';
import type { ResponseCreateParamsNonStreaming, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failureOf } from '../support/e2e.js';
import { usageRowOf } from '../support/usage.js';
import {
  MODELS,
  RESPONSES_ENDPOINT,
  bodyOf,
  collectEvents,
  createClient,
  expectApiError,
  postRaw,
  startResponsesWorld,
  watchRequests,
  type RecordingClient,
  type ResponsesWorld,
} from './responses-e2e.js';

const PROMPT = 'Tell me something about otters and rivers';

let world: ResponsesWorld;
let key: string;
let recording: RecordingClient;
let client: OpenAI;

beforeAll(async () => {
  world = await startResponsesWorld();
  ({ key } = await world.gateway.createAccountWithKey());
  recording = createClient(world.gateway, key);
  client = recording.client;
});

afterAll(async () => {
  await world?.close();
});

/** A body the SDK's types refuse (the gateway must still answer it properly). */
function untyped(body: Record<string, unknown>): ResponseCreateParamsNonStreaming {
  return body as unknown as ResponseCreateParamsNonStreaming;
}

describe('bounds and shapes', () => {
  it.each([MODELS.openai, MODELS.anthropic, MODELS.mock])('refuses max_output_tokens under 16 on %s, before any upstream call', async (model) => {
    const openaiRequests = watchRequests(world.openaiUpstream);
    const anthropicRequests = watchRequests(world.anthropicUpstream);
    const error = await failureOf(client.responses.create({ model, input: PROMPT, max_output_tokens: 5 }));
    expectApiError(error, { status: 400, code: 'INVALID_REQUEST', param: 'max_output_tokens' });
    expect((error as InstanceType<typeof OpenAI.APIError>).type).toBe('invalid_request_error');
    expect(openaiRequests()).toHaveLength(0);
    expect(anthropicRequests()).toHaveLength(0);
  });

  it('refuses a temperature above 2 and a negative top_p', async () => {
    expectApiError(await failureOf(client.responses.create({ model: MODELS.anthropic, input: PROMPT, temperature: 3 })), {
      status: 400,
      code: 'INVALID_REQUEST',
      param: 'temperature',
    });
    expectApiError(await failureOf(client.responses.create({ model: MODELS.mock, input: PROMPT, top_p: -0.5 })), {
      status: 400,
      code: 'INVALID_REQUEST',
      param: 'top_p',
    });
  });

  it('names the field of a malformed item or tool', async () => {
    const missingCallId = untyped({ model: MODELS.mock, input: [{ role: 'user', content: PROMPT }, { type: 'function_call_output', output: 'x' }] });
    expectApiError(await failureOf(client.responses.create(missingCallId)), { status: 400, code: 'INVALID_REQUEST', param: 'input[1].call_id' });
    const namelessTool = untyped({ model: MODELS.mock, input: PROMPT, tools: [{ type: 'function', parameters: {} }] });
    expectApiError(await failureOf(client.responses.create(namelessTool)), { status: 400, code: 'INVALID_REQUEST', param: 'tools[0].name' });
  });

  it('refuses a missing model, an unknown model and a model without the endpoint', async () => {
    expectApiError(await failureOf(client.responses.create(untyped({ input: PROMPT }))), { status: 400, code: 'INVALID_REQUEST', param: 'model' });
    expectApiError(await failureOf(client.responses.create({ model: 'no-such-model', input: PROMPT })), { status: 404, code: 'MODEL_NOT_FOUND' });
    const error = await failureOf(client.responses.create({ model: MODELS.chatOnly, input: PROMPT }));
    expectApiError(error, { status: 400, code: 'UNSUPPORTED_ENDPOINT', param: 'model' });
    const compact = await failureOf(client.responses.compact({ model: MODELS.chatOnly, input: PROMPT }));
    expectApiError(compact, { status: 400, code: 'UNSUPPORTED_ENDPOINT' });
  });
});

describe('what is accepted', () => {
  const FUTURE_ITEM = { type: 'future_item', note: 'an item type this gateway does not know' };
  const HOSTED_TOOL = { type: 'web_search' };

  it('passes unknown fields, hosted tools, new item types and query parameters through to a Responses upstream', async () => {
    const received = watchRequests(world.openaiUpstream);
    const body = {
      model: MODELS.openai,
      input: [{ role: 'user', content: PROMPT }, FUTURE_ITEM],
      tools: [HOSTED_TOOL],
      tool_choice: 'auto',
      some_future_field: { nested: [1, 2, 3] },
      include: ['reasoning.encrypted_content'],
    };
    const response = await client.responses.create(untyped(body), { query: { beta: 'true' } });
    expect(response.status).toBe('completed');
    expect(recording.lastHeaders().get('x-gateway-dropped-params')).toBeNull();
    expect(bodyOf(received()[0])).toEqual({ ...body, model: 'gpt-4o-mini' });
  });

  it.each([MODELS.anthropic, MODELS.mock])('accepts them on %s too', async (model) => {
    const response = await client.responses.create(
      untyped({ model, input: [{ role: 'user', content: PROMPT }, FUTURE_ITEM, { role: 'user', content: 'And fish?' }], tools: [HOSTED_TOOL], some_future_field: true }),
      { query: { beta: 'true' } },
    );
    expect(response.status).toBe('completed');
    expect(response.output_text.length).toBeGreaterThan(0);
  });

  it('reports a hosted tool a bridge cannot carry, and refuses it in strict mode', async () => {
    const received = watchRequests(world.anthropicUpstream);
    const response = await client.responses.create({ model: MODELS.anthropic, input: PROMPT, tools: [{ type: 'web_search' }] });
    expect(response.status).toBe('completed');
    expect(recording.lastHeaders().get('x-gateway-dropped-params')).toContain('tools.web_search');
    expect(bodyOf(received()[0])).not.toHaveProperty('tools');

    const strict = createClient(world.gateway, key, { 'x-gateway-strict': 'true' }).client;
    const error = await failureOf(strict.responses.create({ model: MODELS.anthropic, input: PROMPT, tools: [{ type: 'web_search' }] }));
    expectApiError(error, { status: 400, code: 'UNSUPPORTED_FEATURE' });
    expect(received()).toHaveLength(1);

    // Streamed, the header comes with the event stream.
    const raw = await postRaw(world.gateway, key, RESPONSES_ENDPOINT, { model: MODELS.anthropic, input: PROMPT, tools: [{ type: 'web_search' }], stream: true });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('x-gateway-dropped-params')).toContain('tools.web_search');
    const strictRaw = await postRaw(
      world.gateway,
      key,
      RESPONSES_ENDPOINT,
      { model: MODELS.anthropic, input: PROMPT, tools: [{ type: 'web_search' }], stream: true },
      { 'x-gateway-strict': 'true' },
    );
    expect(strictRaw.status).toBe(400);
    expect(strictRaw.json).toMatchObject({ error: { code: 'UNSUPPORTED_FEATURE' } });
  });

  it('does not report a hosted tool on a Responses upstream, even in strict mode', async () => {
    const strict = createClient(world.gateway, key, { 'x-gateway-strict': 'true' });
    const response = await strict.client.responses.create({ model: MODELS.openai, input: PROMPT, tools: [{ type: 'web_search' }] });
    expect(response.status).toBe('completed');
    expect(strict.lastHeaders().get('x-gateway-dropped-params')).toBeNull();
  });
});

type ErrorEvent = Extract<ResponseStreamEvent, { type: 'error' }>;
type FailedEvent = Extract<ResponseStreamEvent, { type: 'response.failed' }>;

/** A stream that must fail: the events before the SDK threw, the error, and the raw frames of the same request. */
async function failingStream(model: string): Promise<{ events: ResponseStreamEvent[]; error: unknown }> {
  const stream = await client.responses.create({ model, input: PROMPT, stream: true });
  return collectEvents(stream);
}

describe('failures after the stream started', () => {
  it.each([
    { name: 'an in-band error event', step: { kind: 'error-event' as const, afterChunks: 4, message: 'Overloaded upstream' } },
    { name: 'a connection reset', step: { kind: 'reset-during-stream' as const, afterChunks: 4 } },
  ])('a bridged stream (Anthropic-format upstream) ends with response.failed, then error: $name', async ({ step }) => {
    world.anthropicUpstream.script(step);
    const { events, error } = await failingStream(MODELS.anthropic);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_event, index) => index));
    expect(events[0]!.type).toBe('response.created');
    const failed = events.at(-1) as FailedEvent;
    expect(failed.type).toBe('response.failed');
    expect(failed.response.status).toBe('failed');
    expect(failed.response.error?.message).toMatch(/\S/);
    expect(events.some((event) => event.type === 'response.output_text.delta')).toBe(true);
    expect(events.some((event) => event.type === 'response.completed')).toBe(false);

    const row = await usageRowOf(world.gateway, recording.lastRequestId());
    expect(row).toMatchObject({ endpoint: RESPONSES_ENDPOINT, status: 200, stream: true, error_code: 'UPSTREAM_ERROR' });
  });

  it('the raw frames end with response.failed and a spec error event carrying a nested error', async () => {
    world.anthropicUpstream.script({ kind: 'error-event', afterChunks: 4, message: 'Overloaded upstream' });
    const raw = await postRaw(world.gateway, key, RESPONSES_ENDPOINT, { model: MODELS.anthropic, input: PROMPT, stream: true });
    expect(raw.status).toBe(200);
    const payloads = raw.frames.map((frame) => frame.data as { type: string; sequence_number: number });
    expect(payloads.map((payload) => payload.sequence_number)).toEqual(payloads.map((_payload, index) => index));
    expect(payloads.slice(-2).map((payload) => payload.type)).toEqual(['response.failed', 'error']);
    const errorEvent = payloads.at(-1) as unknown as ErrorEvent & { error: { message: string } };
    expect(errorEvent).toMatchObject({ type: 'error', code: 'server_error', param: null });
    expect(errorEvent.message).toContain('Overloaded upstream');
    expect(errorEvent.error.message).toBe(errorEvent.message);
  });

  it('a stream bridged through chat completions fails the same way', async () => {
    const first = await client.responses.create({ model: MODELS.mock, input: PROMPT });
    world.openaiUpstream.script({ kind: 'error-event', afterChunks: 3, message: 'Chat upstream broke', path: '/v1/chat/completions' });
    const stream = await client.responses.create({ model: MODELS.openai, previous_response_id: first.id, input: 'More', stream: true });
    const { events, error } = await collectEvents(stream);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).message).toContain('Chat upstream broke');
    expect(events.at(-1)!.type).toBe('response.failed');
  });

  it.each([
    { name: 'an in-band error event', step: { kind: 'error-event' as const, afterChunks: 5, message: 'Native upstream broke' } },
    { name: 'a connection reset', step: { kind: 'reset-during-stream' as const, afterChunks: 5 } },
  ])('a passed-through stream continues the upstream numbering into response.failed and error: $name', async ({ step }) => {
    world.openaiUpstream.script({ ...step, path: '/v1/responses' });
    const raw = await postRaw(world.gateway, key, RESPONSES_ENDPOINT, { model: MODELS.openai, input: PROMPT, stream: true });
    expect(raw.status).toBe(200);
    const payloads = raw.frames.map((frame) => frame.data as { type: string; sequence_number: number; response?: { id: string } });
    expect(payloads.map((payload) => payload.sequence_number)).toEqual(payloads.map((_payload, index) => index));
    expect(payloads.filter((payload) => payload.type === 'response.created')).toHaveLength(1);
    expect(payloads.slice(-2).map((payload) => payload.type)).toEqual(['response.failed', 'error']);
    expect(payloads.at(-2)!.response!.id).toBe(payloads[0]!.response!.id);

    world.openaiUpstream.script({ ...step, path: '/v1/responses' });
    const { events, error } = await failingStream(MODELS.openai);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(events.at(-1)!.type).toBe('response.failed');
  });
});
