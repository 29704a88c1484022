/**
 * Function tools over `/v1/responses` with the official `openai` client, on
 * every provider kind: a forced call (`tool_choice: "required"` or a named
 * function) gives a `function_call` item with JSON arguments; the caller
 * sends the previous output back with `function_call_output` items and gets a
 * text answer. Streamed, the `function_call_arguments.delta` pieces assemble
 * into the final arguments.
 */
import type OpenAI from 'openai';
import type {
  FunctionTool,
  ResponseFunctionToolCall,
  ResponseInputItem,
  ResponseStreamEvent,
} from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODELS, bodyOf, collectEvents, createClient, expectWellFormedStream, startResponsesWorld, watchRequests, type ResponsesWorld } from './responses-e2e.js';

const TOOL_ARGUMENTS = { city: 'Paris' };

const WEATHER_TOOL: FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'Current weather in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: true,
};
const TIME_TOOL: FunctionTool = {
  type: 'function',
  name: 'get_time',
  description: 'Local time in a city',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  strict: false,
};
const TOOLS = [WEATHER_TOOL, TIME_TOOL];
const QUESTION = 'What is the weather in Paris?';
const TOOL_RESULT = 'Sunny and 21 degrees';

let world: ResponsesWorld;
let client: OpenAI;

beforeAll(async () => {
  world = await startResponsesWorld({ openai: { toolArguments: TOOL_ARGUMENTS }, anthropic: { toolArguments: TOOL_ARGUMENTS } });
  const { key } = await world.gateway.createAccountWithKey();
  client = createClient(world.gateway, key).client;
});

afterAll(async () => {
  await world?.close();
});

function functionCalls(output: readonly { type: string }[]): ResponseFunctionToolCall[] {
  return output.filter((item): item is ResponseFunctionToolCall => item.type === 'function_call');
}

describe.each([
  { name: 'OpenAI-format upstream (pass-through)', model: MODELS.openai },
  { name: 'Anthropic-format upstream (bridge)', model: MODELS.anthropic },
  { name: 'mock provider', model: MODELS.mock },
])('$name', ({ model }) => {
  it('calls a function when required, then answers the function output in text', async () => {
    const first = await client.responses.create({ model, input: QUESTION, tools: TOOLS, tool_choice: 'required' });
    expect(first.status).toBe('completed');
    const calls = functionCalls(first.output);
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    expect(call.name).toBe('get_weather');
    expect(call.call_id).toMatch(/\S/);
    expect(call.id).toMatch(/^fc_/);
    const args = JSON.parse(call.arguments) as Record<string, unknown>;
    expect(typeof args.city).toBe('string');

    const second = await client.responses.create({
      model,
      tools: TOOLS,
      input: [
        { role: 'user', content: QUESTION },
        ...(first.output as ResponseInputItem[]),
        { type: 'function_call_output', call_id: call.call_id, output: TOOL_RESULT },
      ],
    });
    expect(second.status).toBe('completed');
    expect(functionCalls(second.output)).toHaveLength(0);
    expect(second.output_text).toContain(TOOL_RESULT);
  });

  it('calls the function named by tool_choice', async () => {
    const response = await client.responses.create({
      model,
      input: 'What time is it in Paris?',
      tools: TOOLS,
      tool_choice: { type: 'function', name: 'get_time' },
    });
    const calls = functionCalls(response.output);
    expect(calls.map((call) => call.name)).toEqual(['get_time']);
    expect(() => JSON.parse(calls[0]!.arguments) as unknown).not.toThrow();
  });

  it('streams a function call whose argument deltas assemble into the final arguments', async () => {
    const stream = client.responses.stream({ model, input: QUESTION, tools: TOOLS, tool_choice: 'required' });
    const { events, error } = await collectEvents(stream);
    expect(error).toBeUndefined();
    expectWellFormedStream(events);

    const added = events.find((event) => event.type === 'response.output_item.added');
    expect(added).toMatchObject({ item: { type: 'function_call', name: 'get_weather', status: 'in_progress' } });
    type ArgumentsDelta = Extract<ResponseStreamEvent, { type: 'response.function_call_arguments.delta' }>;
    type ArgumentsDone = Extract<ResponseStreamEvent, { type: 'response.function_call_arguments.done' }>;
    const deltas = events.filter((event): event is ArgumentsDelta => event.type === 'response.function_call_arguments.delta');
    const done = events.find((event): event is ArgumentsDone => event.type === 'response.function_call_arguments.done');
    expect(deltas.length).toBeGreaterThan(0);
    expect(done).toBeDefined();
    expect(deltas.map((delta) => delta.delta).join('')).toBe(done!.arguments);
    JSON.parse(done!.arguments);

    const final = await stream.finalResponse();
    const calls = functionCalls(final.output);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ name: 'get_weather', arguments: done!.arguments, status: 'completed' });

    // The streamed call is answered like a non-streamed one.
    const next = client.responses.stream({
      model,
      tools: TOOLS,
      input: [
        { role: 'user', content: QUESTION },
        ...(final.output as ResponseInputItem[]),
        { type: 'function_call_output', call_id: calls[0]!.call_id, output: TOOL_RESULT },
      ],
    });
    const answer = await next.finalResponse();
    expect(answer.output_text).toContain(TOOL_RESULT);
  });
});

describe('an OpenAI-format model bridged through chat completions', () => {
  it('calls a function and answers its output, streamed, with the conversation rebuilt by the gateway', async () => {
    // Continuing a conversation the gateway stored forces the bridge (see responses-conversation.test.ts).
    const start = await client.responses.create({ model: MODELS.mock, input: 'Hello there' });
    const received = watchRequests(world.openaiUpstream);

    const callStream = client.responses.stream({ model: MODELS.openai, previous_response_id: start.id, input: QUESTION, tools: TOOLS, tool_choice: 'required' });
    const { events, error } = await collectEvents(callStream);
    expect(error).toBeUndefined();
    expectWellFormedStream(events);
    const withCall = await callStream.finalResponse();
    const call = functionCalls(withCall.output)[0];
    expect(call).toMatchObject({ name: 'get_weather', arguments: JSON.stringify(TOOL_ARGUMENTS), status: 'completed' });

    const answer = await client.responses.create({
      model: MODELS.openai,
      previous_response_id: withCall.id,
      tools: TOOLS,
      input: [{ type: 'function_call_output', call_id: call!.call_id, output: TOOL_RESULT }],
    });
    expect(answer.output_text).toBe(`Echo: ${TOOL_RESULT}`);

    const [first, second] = received().map((request) => ({ path: request.path, body: bodyOf(request) }));
    expect(first!.path).toBe('/v1/chat/completions');
    expect(first!.body).toMatchObject({
      model: 'gpt-4o-mini',
      stream: true,
      tool_choice: 'required',
      tools: TOOLS.map(({ type, name, description, parameters, strict }) => ({ type, function: { name, description, parameters, strict } })),
    });
    expect(second!.body.messages).toEqual([
      { role: 'user', content: 'Hello there' },
      { role: 'assistant', content: start.output_text },
      { role: 'user', content: QUESTION },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: call!.call_id, type: 'function', function: { name: 'get_weather', arguments: call!.arguments } }],
      },
      { role: 'tool', tool_call_id: call!.call_id, content: TOOL_RESULT },
    ]);
  });
});

describe('what the upstreams receive for a tool round trip', () => {
  it('passes the items through to an OpenAI-format upstream as sent', async () => {
    const openaiRequests = watchRequests(world.openaiUpstream);
    const input: ResponseInputItem[] = [
      { role: 'user', content: QUESTION },
      { type: 'function_call', call_id: 'call_abc', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_abc', output: TOOL_RESULT },
    ];
    await client.responses.create({ model: MODELS.openai, tools: TOOLS, input, parallel_tool_calls: false });
    expect(bodyOf(openaiRequests()[0])).toEqual({
      model: 'gpt-4o-mini',
      tools: TOOLS,
      input,
      parallel_tool_calls: false,
    });
  });

  it('gives an Anthropic-format upstream tools, tool_use and tool_result blocks', async () => {
    const anthropicRequests = watchRequests(world.anthropicUpstream);
    await client.responses.create({
      model: MODELS.anthropic,
      tools: TOOLS,
      tool_choice: 'auto',
      input: [
        { role: 'user', content: QUESTION },
        { type: 'function_call', call_id: 'call_abc', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'call_abc', output: TOOL_RESULT },
      ],
    });
    const received = bodyOf(anthropicRequests()[0]);
    expect(received.tools).toEqual([
      { name: 'get_weather', description: WEATHER_TOOL.description, input_schema: WEATHER_TOOL.parameters, strict: true },
      { name: 'get_time', description: TIME_TOOL.description, input_schema: TIME_TOOL.parameters, strict: false },
    ]);
    expect(received.tool_choice).toEqual({ type: 'auto' });
    expect(received.messages).toEqual([
      { role: 'user', content: QUESTION },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_abc', name: 'get_weather', input: { city: 'Paris' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_abc', content: TOOL_RESULT }] },
    ]);
  });
});
