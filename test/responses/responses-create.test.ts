/**
 * `POST /v1/responses` with the official `openai` client on every provider
 * kind: pass-through to an OpenAI-format upstream that speaks Responses, the
 * bridge to an Anthropic-format upstream, and the built-in mock. String and
 * item input, `instructions`, usage, what the upstream received, the named
 * event stream (order and `sequence_number`), and the SDK's stream helper
 * agreeing with the non-streamed answer.
 */
import type OpenAI from 'openai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usageRowOf } from '../support/usage.js';
import {
  MODELS,
  RESPONSES_ENDPOINT,
  bodyOf,
  collectEvents,
  createClient,
  expectWellFormedStream,
  postRaw,
  startResponsesWorld,
  watchRequests,
  type RecordingClient,
  type ResponsesWorld,
} from './responses-e2e.js';

const PROMPT = 'Say hello to the responses suite';
const INSTRUCTIONS = 'You are terse.';

let world: ResponsesWorld;
let key: string;
let accountId: string;
let recording: RecordingClient;
let client: OpenAI;

beforeAll(async () => {
  world = await startResponsesWorld();
  ({ key, accountId } = await world.gateway.createAccountWithKey());
  recording = createClient(world.gateway, key);
  client = recording.client;
});

afterAll(async () => {
  await world?.close();
});

describe('pass-through to an OpenAI-format upstream that speaks Responses', () => {
  it('answers string input; the upstream gets the body with only the model swapped', async () => {
    const openaiRequests = watchRequests(world.openaiUpstream);
    const body = { model: MODELS.openai, input: PROMPT, instructions: INSTRUCTIONS, metadata: { run: 'e2e' }, store: true };
    const response = await client.responses.create(body);
    expect(response.object).toBe('response');
    expect(response.status).toBe('completed');
    expect(response.output_text).toBe(`Echo: ${PROMPT}`);
    expect(response.usage?.input_tokens).toBeGreaterThan(0);
    expect(response.usage?.output_tokens).toBeGreaterThan(0);
    expect(response.usage?.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens);

    expect(openaiRequests()).toHaveLength(1);
    const received = openaiRequests()[0]!;
    expect(received.path).toBe('/v1/responses');
    expect(bodyOf(received)).toEqual({ ...body, model: 'gpt-4o-mini' });

    const row = await usageRowOf(world.gateway, recording.lastRequestId());
    expect(row).toMatchObject({ account_id: accountId, endpoint: RESPONSES_ENDPOINT, model: MODELS.openai, status: 200, stream: false });
    expect(row.input_tokens).toBe(response.usage!.input_tokens);
    expect(Number(row.cost)).toBeGreaterThan(0);
  });

  it('streams the upstream events through unchanged, and finalResponse() matches the JSON answer', async () => {
    const input = [{ role: 'user' as const, content: [{ type: 'input_text' as const, text: PROMPT }] }];
    const plain = await client.responses.create({ model: MODELS.openai, input, instructions: INSTRUCTIONS });
    const stream = client.responses.stream({ model: MODELS.openai, input, instructions: INSTRUCTIONS });
    const { events, error } = await collectEvents(stream);
    expect(error).toBeUndefined();
    expectWellFormedStream(events);
    const final = await stream.finalResponse();
    expect(final.output_text).toBe(plain.output_text);
    expect(final.usage).toEqual(plain.usage);
  });
});

describe.each([
  { name: 'Anthropic-format upstream (bridge)', model: MODELS.anthropic },
  { name: 'mock provider', model: MODELS.mock },
])('$name', ({ model }) => {
  it('answers string input with output_text and usage', async () => {
    const response = await client.responses.create({ model, input: PROMPT });
    expect(response.id).toMatch(/^resp_/);
    expect(response.object).toBe('response');
    expect(response.model).toBe(model);
    expect(response.status).toBe('completed');
    expect(response.output).toHaveLength(1);
    expect(response.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
    expect(response.output_text.length).toBeGreaterThan(0);
    expect(response.usage!.input_tokens).toBeGreaterThan(0);
    expect(response.usage!.output_tokens).toBeGreaterThan(0);
    expect(response.usage!.total_tokens).toBe(response.usage!.input_tokens + response.usage!.output_tokens);

    const row = await usageRowOf(world.gateway, recording.lastRequestId());
    expect(row).toMatchObject({ endpoint: RESPONSES_ENDPOINT, model, status: 200, stream: false });
    expect(Number(row.cost)).toBeGreaterThan(0);
  });

  it('answers item input with instructions, echoing them', async () => {
    const response = await client.responses.create({
      model,
      instructions: INSTRUCTIONS,
      input: [
        { role: 'user', content: 'First question' },
        { type: 'message', id: 'msg_earlier', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'First answer', annotations: [] }] },
        { role: 'user', content: [{ type: 'input_text', text: PROMPT }] },
      ],
    });
    expect(response.status).toBe('completed');
    expect(response.instructions).toBe(INSTRUCTIONS);
    expect(response.output_text.length).toBeGreaterThan(0);
  });

  it('streams named events in order, numbered from 0, and finalResponse() equals the JSON answer', async () => {
    const body = { model, instructions: INSTRUCTIONS, input: PROMPT };
    const plain = await client.responses.create(body);

    const stream = client.responses.stream(body);
    const { events, error } = await collectEvents(stream);
    expect(error).toBeUndefined();
    expectWellFormedStream(events);
    const types = events.map((event) => event.type);
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    const deltas = events.filter((event): event is Extract<ResponseStreamEvent, { type: 'response.output_text.delta' }> => event.type === 'response.output_text.delta');
    expect(deltas.length).toBeGreaterThan(0);

    const final = await stream.finalResponse();
    expect(deltas.map((delta) => delta.delta).join('')).toBe(final.output_text);
    expect(final.output_text).toBe(plain.output_text);
    expect(final.status).toBe('completed');
    expect(final.usage!.output_tokens).toBe(plain.usage!.output_tokens);

    const row = await usageRowOf(world.gateway, recording.lastRequestId());
    expect(row).toMatchObject({ endpoint: RESPONSES_ENDPOINT, model, status: 200, stream: true, aborted: false, error_code: null });
  });

  it('create({ stream: true }) gives the same events as the stream helper', async () => {
    const stream = await client.responses.create({ model, input: PROMPT, stream: true });
    const { events, error } = await collectEvents(stream);
    expect(error).toBeUndefined();
    expectWellFormedStream(events);
    const completed = events.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>;
    expect(completed.response.output[0]).toMatchObject({ type: 'message', status: 'completed' });
  });

  it('sends frames with an event line equal to the payload type, and no [DONE]', async () => {
    const raw = await postRaw(world.gateway, key, RESPONSES_ENDPOINT, { model, input: PROMPT, stream: true });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toContain('text/event-stream');
    expect(raw.frames.length).toBeGreaterThan(0);
    for (const frame of raw.frames) {
      expect(frame.data).not.toBe('[DONE]');
      expect(frame.event).toBe((frame.data as { type: string }).type);
    }
  });
});

describe('the bridge to an Anthropic-format upstream', () => {
  it('sends instructions as system and the items as messages', async () => {
    const anthropicRequests = watchRequests(world.anthropicUpstream);
    await client.responses.create({
      model: MODELS.anthropic,
      instructions: INSTRUCTIONS,
      max_output_tokens: 300,
      input: [
        { role: 'user', content: 'First question' },
        { type: 'message', id: 'msg_earlier', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'First answer', annotations: [] }] },
        { role: 'user', content: PROMPT },
      ],
    });
    const received = bodyOf(anthropicRequests()[0]);
    expect(anthropicRequests()[0]!.path).toBe('/v1/messages');
    expect(received).toMatchObject({
      model: 'claude-sonnet-4-5',
      max_tokens: 300,
      system: INSTRUCTIONS,
      messages: [
        { role: 'user', content: 'First question' },
        { role: 'assistant', content: 'First answer' },
        { role: 'user', content: PROMPT },
      ],
    });
  });
});
