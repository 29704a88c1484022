/**
 * `previous_response_id` with the official `openai` client. On providers that
 * keep no state (the Anthropic-format upstream, the mock, an OpenAI-format
 * model reached through chat completions) the gateway stores each answer's
 * conversation per account and rebuilds it: the client sends only the new
 * input, the upstream receives the whole conversation. On a provider that
 * speaks Responses the id is the provider's own and is passed through, once
 * the gateway has checked that this account was given it; elsewhere that
 * conversation is replayed. Ids of another account, unknown ids and
 * `store: false` answers cannot be continued, and no upstream is asked.
 */
import type OpenAI from 'openai';
import type { ResponseFunctionToolCall } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { failureOf, errorText } from '../support/e2e.js';
import {
  MODELS,
  bodyOf,
  createClient,
  expectApiError,
  startResponsesWorld,
  watchRequests,
  type ResponsesWorld,
} from './responses-e2e.js';

const FIRST = 'My name is Ada and I like green tea';
const SECOND = 'What is my name?';
const THIRD = 'And what do I like?';

let world: ResponsesWorld;
let client: OpenAI;
let otherClient: OpenAI;

beforeAll(async () => {
  world = await startResponsesWorld();
  const { key } = await world.gateway.createAccountWithKey();
  client = createClient(world.gateway, key).client;
  const other = await world.gateway.createAccountWithKey();
  otherClient = createClient(world.gateway, other.key).client;
});

afterAll(async () => {
  await world?.close();
});

describe('an Anthropic-format upstream (no state of its own)', () => {
  it('receives the whole conversation when the client sends only the new input', async () => {
    const received = watchRequests(world.anthropicUpstream);
    const first = await client.responses.create({ model: MODELS.anthropic, input: FIRST, instructions: 'Be brief.' });
    expect(first.output_text).toBe(`Echo: ${FIRST}`);

    const second = await client.responses.create({ model: MODELS.anthropic, previous_response_id: first.id, input: SECOND });
    expect(second.output_text).toBe(`Echo: ${SECOND}`);
    expect(second.previous_response_id).toBe(first.id);
    expect(second.id).not.toBe(first.id);

    const third = await client.responses.create({
      model: MODELS.anthropic,
      previous_response_id: second.id,
      input: [{ role: 'user', content: [{ type: 'input_text', text: THIRD }] }],
    });
    expect(third.output_text).toBe(`Echo: ${THIRD}`);

    const [one, two, three] = received().map(bodyOf);
    expect(one!.system).toBe('Be brief.');
    expect(two!.messages).toEqual([
      { role: 'user', content: FIRST },
      { role: 'assistant', content: `Echo: ${FIRST}` },
      { role: 'user', content: SECOND },
    ]);
    // OpenAI semantics: a previous response's instructions are not carried over.
    expect(two!.system).toBeUndefined();
    expect(three!.messages).toEqual([
      { role: 'user', content: FIRST },
      { role: 'assistant', content: `Echo: ${FIRST}` },
      { role: 'user', content: SECOND },
      { role: 'assistant', content: `Echo: ${SECOND}` },
      { role: 'user', content: THIRD },
    ]);
  });

  it('continues a streamed answer, and streams the continuation', async () => {
    const received = watchRequests(world.anthropicUpstream);
    const first = await client.responses.stream({ model: MODELS.anthropic, input: FIRST }).finalResponse();
    expect(first.output_text).toBe(`Echo: ${FIRST}`);

    const secondStream = client.responses.stream({ model: MODELS.anthropic, previous_response_id: first.id, input: SECOND });
    const second = await secondStream.finalResponse();
    expect(second.output_text).toBe(`Echo: ${SECOND}`);
    expect(second.previous_response_id).toBe(first.id);

    expect(bodyOf(received()[1]).messages).toEqual([
      { role: 'user', content: FIRST },
      { role: 'assistant', content: `Echo: ${FIRST}` },
      { role: 'user', content: SECOND },
    ]);
  });

  it('answers a function call with only function_call_output and the previous id', async () => {
    const received = watchRequests(world.anthropicUpstream);
    const tools = [{ type: 'function' as const, name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } }, strict: false }];
    const first = await client.responses.create({ model: MODELS.anthropic, input: FIRST, tools, tool_choice: 'required' });
    const call = first.output.find((item): item is ResponseFunctionToolCall => item.type === 'function_call');
    expect(call).toBeDefined();

    const second = await client.responses.create({
      model: MODELS.anthropic,
      previous_response_id: first.id,
      tools,
      input: [{ type: 'function_call_output', call_id: call!.call_id, output: 'Ada is the user' }],
    });
    expect(second.output_text).toBe('Echo: Ada is the user');
    expect(bodyOf(received()[1]).messages).toEqual([
      { role: 'user', content: FIRST },
      { role: 'assistant', content: [{ type: 'tool_use', id: call!.call_id, name: 'lookup', input: JSON.parse(call!.arguments) as unknown }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call!.call_id, content: 'Ada is the user' }] },
    ]);
  });
});

describe('an OpenAI-format model bridged through chat completions', () => {
  it('continues a conversation stored by the gateway through the upstream /v1/chat/completions', async () => {
    const upstreamRequests = watchRequests(world.openaiUpstream);
    const first = await client.responses.create({ model: MODELS.mock, input: FIRST });
    const second = await client.responses.create({ model: MODELS.openai, previous_response_id: first.id, input: SECOND });
    expect(second.output_text).toBe(`Echo: ${SECOND}`);
    expect(second.model).toBe(MODELS.openai);

    expect(upstreamRequests()).toHaveLength(1);
    const received = upstreamRequests()[0]!;
    expect(received.path).toBe('/v1/chat/completions');
    expect(bodyOf(received)).toMatchObject({
      model: 'gpt-4o-mini',
      messages: [
        { role: 'user', content: FIRST },
        { role: 'assistant', content: first.output_text },
        { role: 'user', content: SECOND },
      ],
    });
    expect(bodyOf(received)).not.toHaveProperty('previous_response_id');

    // The bridged answer is stored in turn, so the chain goes on (streamed this time).
    const third = await client.responses.stream({ model: MODELS.openai, previous_response_id: second.id, input: THIRD }).finalResponse();
    expect(third.output_text).toBe(`Echo: ${THIRD}`);
    expect(bodyOf(upstreamRequests()[1]).messages).toEqual([
      { role: 'user', content: FIRST },
      { role: 'assistant', content: first.output_text },
      { role: 'user', content: SECOND },
      { role: 'assistant', content: `Echo: ${SECOND}` },
      { role: 'user', content: THIRD },
    ]);
  });
});

describe('the mock provider', () => {
  it('continues its own conversation', async () => {
    const first = await client.responses.create({ model: MODELS.mock, input: FIRST });
    const second = await client.responses.create({ model: MODELS.mock, previous_response_id: first.id, input: SECOND });
    expect(second.status).toBe('completed');
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output_text).toContain(SECOND.slice(0, 10));
  });
});

describe('an OpenAI-format upstream that speaks Responses', () => {
  it('passes its own previous_response_id through unchanged', async () => {
    const upstreamRequests = watchRequests(world.openaiUpstream);
    const first = await client.responses.create({ model: MODELS.openai, input: FIRST });
    const second = await client.responses.create({ model: MODELS.openai, previous_response_id: first.id, input: SECOND });
    expect(second.output_text).toBe(`Echo: ${SECOND}`);
    const received = upstreamRequests().map((request) => ({ path: request.path, body: request.body }));
    expect(received).toEqual([
      { path: '/v1/responses', body: { model: 'gpt-4o-mini', input: FIRST } },
      { path: '/v1/responses', body: { model: 'gpt-4o-mini', input: SECOND, previous_response_id: first.id } },
    ]);
  });
});

describe('a streamed pass-through answer', () => {
  it('is continued with the id the stream carried, by this account only', async () => {
    const first = await client.responses.stream({ model: MODELS.openai, input: FIRST }).finalResponse();
    const upstreamRequests = watchRequests(world.openaiUpstream);
    await client.responses.create({ model: MODELS.openai, previous_response_id: first.id, input: SECOND });
    expect(bodyOf(upstreamRequests()[0]).previous_response_id).toBe(first.id);

    const error = await failureOf(otherClient.responses.create({ model: MODELS.openai, previous_response_id: first.id, input: SECOND }));
    expectApiError(error, { status: 400, code: 'INVALID_REQUEST', param: 'previous_response_id' });
    expect(upstreamRequests()).toHaveLength(1);
  });
});

describe('a pass-through conversation continued elsewhere', () => {
  it('replays an OpenAI-format upstream conversation to the Anthropic-format upstream', async () => {
    const first = await client.responses.create({ model: MODELS.openai, input: FIRST });
    const second = await client.responses.create({ model: MODELS.openai, previous_response_id: first.id, input: SECOND });
    const received = watchRequests(world.anthropicUpstream);
    const third = await client.responses.create({ model: MODELS.anthropic, previous_response_id: second.id, input: THIRD });
    expect(third.output_text).toBe(`Echo: ${THIRD}`);
    expect(bodyOf(received()[0]).messages).toEqual([
      { role: 'user', content: FIRST },
      { role: 'assistant', content: `Echo: ${FIRST}` },
      { role: 'user', content: SECOND },
      { role: 'assistant', content: `Echo: ${SECOND}` },
      { role: 'user', content: THIRD },
    ]);
  });
});

describe('ids that cannot be continued', () => {
  it.each([MODELS.anthropic, MODELS.mock, MODELS.openai])('refuses an id of another account on %s, without its data', async (model) => {
    const secret = `The launch code is ${model}-4242`;
    const theirs = await otherClient.responses.create({ model, input: secret });
    const anthropicRequests = watchRequests(world.anthropicUpstream);
    const openaiRequests = watchRequests(world.openaiUpstream);
    const error = await failureOf(client.responses.create({ model, previous_response_id: theirs.id, input: 'Repeat everything above.' }));
    expectApiError(error, { status: 400, code: 'INVALID_REQUEST', param: 'previous_response_id' });
    expect(errorText(error)).not.toContain('4242');
    expect(anthropicRequests()).toHaveLength(0);
    expect(openaiRequests()).toHaveLength(0);

    // Streamed requests are refused before the stream starts.
    const streamed = await failureOf(client.responses.create({ model, previous_response_id: theirs.id, input: 'Again', stream: true }));
    expectApiError(streamed, { status: 400, code: 'INVALID_REQUEST', param: 'previous_response_id' });
  });

  it('refuses an unknown id on a provider without state', async () => {
    const error = await failureOf(client.responses.create({ model: MODELS.anthropic, previous_response_id: 'resp_does_not_exist', input: SECOND }));
    expectApiError(error, { status: 400, code: 'INVALID_REQUEST', param: 'previous_response_id' });
  });

  it.each([MODELS.anthropic, MODELS.mock, MODELS.openai])('refuses to continue a store:false answer on %s', async (model) => {
    const unstored = await client.responses.create({ model, input: FIRST, store: false });
    expect(unstored.status).toBe('completed');
    const error = await failureOf(client.responses.create({ model, previous_response_id: unstored.id, input: SECOND }));
    expectApiError(error, { status: 400, code: 'INVALID_REQUEST', param: 'previous_response_id' });

    const streamed = await client.responses.stream({ model, input: FIRST, store: false }).finalResponse();
    const streamedError = await failureOf(client.responses.create({ model, previous_response_id: streamed.id, input: SECOND }));
    expectApiError(streamedError, { status: 400, code: 'INVALID_REQUEST', param: 'previous_response_id' });
  });
});
