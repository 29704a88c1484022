/**
 * `POST /v1/responses/compact` with the official `openai` client. Where the
 * provider has no compaction of its own (the mock, the Anthropic-format
 * upstream) a generation summarises the context and the answer is a
 * Responses object whose output is one assistant message; an OpenAI-format
 * upstream gets the body at its own `/v1/responses/compact`. Every
 * compaction is billed, and `stream: true` never turns it into a stream.
 */
import type OpenAI from 'openai';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMPACTION_SUMMARY_PREFIX, COMPACTION_SYSTEM_PROMPT } from '../../server/translate/responses/compact.js';
import { UPSTREAM_CREATED, isRecord, type RecordedRequest, type UpstreamAnswer } from '../upstreams/upstream-server.js';
import { failureOf } from '../support/e2e.js';
import { usageRowOf } from '../support/usage.js';
import {
  COMPACT_ENDPOINT,
  MODELS,
  bodyOf,
  createClient,
  expectApiError,
  postRaw,
  startResponsesWorld,
  watchRequests,
  type RecordingClient,
  type ResponsesWorld,
} from './responses-e2e.js';

const CONVERSATION: ResponseInputItem[] = [
  { role: 'user', content: 'Plan a trip to Lisbon in May for two people.' },
  {
    type: 'message',
    id: 'msg_plan',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: 'Day 1: Alfama. Day 2: Belem.', annotations: [] }],
  },
  { role: 'user', content: 'Add a day trip to Sintra.' },
];

/** What the OpenAI-format upstream's native compaction answers: the user messages and an opaque item. */
function nativeCompaction(request: RecordedRequest): UpstreamAnswer {
  const body = isRecord(request.body) ? request.body : {};
  const input = Array.isArray(body.input) ? body.input : [];
  const kept = input.filter((item) => isRecord(item) && item.role === 'user');
  return {
    kind: 'json',
    status: 200,
    body: {
      id: `resp_cmp_${request.sequence}`,
      object: 'response.compaction',
      created_at: UPSTREAM_CREATED,
      output: [...kept, { type: 'compaction', id: `cmp_${request.sequence}`, encrypted_content: 'gAAAAopaque' }],
      usage: {
        input_tokens: 120,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: 40,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: 160,
      },
    },
  };
}

let world: ResponsesWorld;
let key: string;
let accountId: string;
let recording: RecordingClient;
let client: OpenAI;

beforeAll(async () => {
  world = await startResponsesWorld({ openai: { routes: { 'POST /v1/responses/compact': nativeCompaction } } });
  ({ key, accountId } = await world.gateway.createAccountWithKey());
  recording = createClient(world.gateway, key);
  client = recording.client;
});

afterAll(async () => {
  await world?.close();
});

/** The gateway's answer, read as the Responses object it is (the SDK types it as a native compaction). */
interface SummaryResponse {
  id: string;
  object: string;
  status: string;
  model: string;
  output: { type: string; role?: string; status?: string; content?: { type: string; text: string }[] }[];
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
}

describe.each([
  { name: 'mock provider', model: MODELS.mock },
  { name: 'Anthropic-format upstream', model: MODELS.anthropic },
])('summarising compaction on the $name', ({ model }) => {
  it('answers a Responses object whose output is one assistant message holding the summary, and bills it', async () => {
    const compacted = (await client.responses.compact({ model, input: CONVERSATION })) as unknown as SummaryResponse;
    expect(compacted.id).toMatch(/^resp_/);
    expect(compacted.object).toBe('response');
    expect(compacted.status).toBe('completed');
    expect(compacted.model).toBe(model);
    expect(compacted.output).toHaveLength(1);
    const [message] = compacted.output;
    expect(message).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
    expect(message!.content).toHaveLength(1);
    expect(message!.content![0]!.type).toBe('output_text');
    expect(message!.content![0]!.text.startsWith(COMPACTION_SUMMARY_PREFIX)).toBe(true);
    expect(message!.content![0]!.text.length).toBeGreaterThan(COMPACTION_SUMMARY_PREFIX.length);
    expect(compacted.usage.input_tokens).toBeGreaterThan(0);
    expect(compacted.usage.output_tokens).toBeGreaterThan(0);

    const row = await usageRowOf(world.gateway, recording.lastRequestId());
    expect(row).toMatchObject({ account_id: accountId, endpoint: COMPACT_ENDPOINT, model, status: 200, stream: false });
    expect(Number(row.cost)).toBeGreaterThan(0);
  });

  it('answers JSON even when asked to stream', async () => {
    const raw = await postRaw(world.gateway, key, COMPACT_ENDPOINT, { model, input: CONVERSATION, stream: true });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toContain('application/json');
    expect(raw.json).toMatchObject({ object: 'response', status: 'completed', output: [{ type: 'message', role: 'assistant' }] });
    const row = await usageRowOf(world.gateway, raw.headers.get('x-request-id')!);
    expect(row).toMatchObject({ endpoint: COMPACT_ENDPOINT, stream: false, status: 200 });
  });

  it('compacts a stored conversation named by previous_response_id', async () => {
    const earlier = await client.responses.create({ model, input: 'Remember the code word: pelican.' });
    const compacted = (await client.responses.compact({ model, previous_response_id: earlier.id, input: 'And then?' })) as unknown as SummaryResponse;
    expect(compacted.output).toHaveLength(1);

    const error = await failureOf(client.responses.compact({ model, previous_response_id: 'resp_unknown', input: 'x' }));
    expectApiError(error, { status: 400, code: 'INVALID_REQUEST', param: 'previous_response_id' });
  });
});

describe('summarising compaction on the Anthropic-format upstream', () => {
  it('sends one summarising request holding the whole conversation, and no tools', async () => {
    const received = watchRequests(world.anthropicUpstream);
    const earlier = await client.responses.create({ model: MODELS.anthropic, input: 'The code word is pelican.' });
    // SPEC.md lists `tools` on compaction (the SDK's type does not): they must not reach a summariser.
    const tools = [{ type: 'function', name: 'book', parameters: { type: 'object', properties: {} }, strict: false }];
    const body = { model: MODELS.anthropic, previous_response_id: earlier.id, instructions: 'You plan trips.', input: CONVERSATION, tools };
    const compacted = (await client.responses.compact(body as Parameters<OpenAI['responses']['compact']>[0])) as unknown as SummaryResponse;

    expect(received()).toHaveLength(2);
    const request = bodyOf(received()[1]);
    expect(received()[1]!.path).toBe('/v1/messages');
    expect(request.system).toBe(COMPACTION_SYSTEM_PROMPT);
    expect(request).not.toHaveProperty('tools');
    const messages = request.messages as { role: string; content: string }[];
    expect(messages).toHaveLength(1);
    expect(messages[0]!.role).toBe('user');
    const transcript = messages[0]!.content;
    for (const text of ['The code word is pelican.', 'Echo: The code word is pelican.', 'Plan a trip to Lisbon', 'Day 1: Alfama', 'Add a day trip to Sintra.', 'You plan trips.']) {
      expect(transcript).toContain(text);
    }
    // The upstream echoes its last user message: the summary is built from that answer.
    expect(compacted.output[0]!.content![0]!.text).toBe(`${COMPACTION_SUMMARY_PREFIX}Echo: ${transcript}`.trim());
  });
});

describe('native compaction on an OpenAI-format upstream', () => {
  it("passes the body to the upstream's /v1/responses/compact and its answer back, billed", async () => {
    const received = watchRequests(world.openaiUpstream);
    const body = { model: MODELS.openai, input: CONVERSATION, instructions: 'You plan trips.', prompt_cache_key: 'trip-1' };
    const compacted = await client.responses.compact(body);
    expect(compacted.object).toBe('response.compaction');
    expect(compacted.output.at(-1)).toMatchObject({ type: 'compaction', encrypted_content: 'gAAAAopaque' });
    expect(compacted.usage.total_tokens).toBe(160);

    expect(received()).toHaveLength(1);
    expect(received()[0]!.path).toBe('/v1/responses/compact');
    expect(bodyOf(received()[0])).toEqual({ ...body, model: 'gpt-4o-mini' });

    const row = await usageRowOf(world.gateway, recording.lastRequestId());
    expect(row).toMatchObject({ endpoint: COMPACT_ENDPOINT, model: MODELS.openai, status: 200, input_tokens: 120, output_tokens: 40 });
    expect(Number(row.cost)).toBeGreaterThan(0);
  });

  it('does not forward stream: true, and answers JSON', async () => {
    const received = watchRequests(world.openaiUpstream);
    const raw = await postRaw(world.gateway, key, COMPACT_ENDPOINT, { model: MODELS.openai, input: CONVERSATION, stream: true });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toContain('application/json');
    expect(raw.json).toMatchObject({ object: 'response.compaction' });
    expect(bodyOf(received()[0])).not.toHaveProperty('stream');
  });

  it("passes the provider's own previous_response_id through", async () => {
    const earlier = await client.responses.create({ model: MODELS.openai, input: 'The code word is pelican.' });
    const received = watchRequests(world.openaiUpstream);
    await client.responses.compact({ model: MODELS.openai, previous_response_id: earlier.id, input: [] });
    expect(received()[0]!.path).toBe('/v1/responses/compact');
    expect(bodyOf(received()[0])).toEqual({ model: 'gpt-4o-mini', previous_response_id: earlier.id, input: [] });
  });
});
