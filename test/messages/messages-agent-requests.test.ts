/**
 * Requests as large and as new as coding agents send them, through the
 * official `@anthropic-ai/sdk`, on each provider kind: a dozen tools with
 * hosted/server tools among them, extended thinking, system blocks with
 * `cache_control`, a `system` message inside the conversation, a `document`
 * block, top-level fields the gateway does not model, `max_tokens: 32000` and
 * `client.beta.messages.create` with betas. All are accepted and answered.
 * On the Anthropic upstream they pass through untouched; on the OpenAI-format
 * bridge the answer says what was dropped, and strict mode refuses instead.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestGateway } from '../support/gateway.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { failureOf } from '../support/e2e.js';
import { usageRowOf } from '../support/usage.js';
import {
  KINDS,
  createClient,
  expectAnthropicError,
  expectBalanceSettled,
  startMessagesWorld,
  type Kind,
  type MessagesWorld,
  type RecordingClient,
} from './messages-e2e.js';

const LAST_USER_TEXT = 'Please continue with the refactoring we discussed.';

function customTool(name: string, description: string, properties: Record<string, unknown>, required: string[]): Anthropic.Tool {
  return { name, description, input_schema: { type: 'object', properties, required, additionalProperties: false } };
}

/** Ten custom tools in the style of a coding agent, then two hosted/server tools. */
const CUSTOM_TOOLS: Anthropic.Tool[] = [
  customTool('Read', 'Reads a file from the local filesystem.', { file_path: { type: 'string' }, offset: { type: 'number' }, limit: { type: 'number' } }, ['file_path']),
  customTool('Write', 'Writes a file to the local filesystem.', { file_path: { type: 'string' }, content: { type: 'string' } }, ['file_path', 'content']),
  customTool(
    'Edit',
    'Performs exact string replacements in files.',
    { file_path: { type: 'string' }, old_string: { type: 'string' }, new_string: { type: 'string' }, replace_all: { type: 'boolean', default: false } },
    ['file_path', 'old_string', 'new_string'],
  ),
  customTool('Glob', 'Fast file pattern matching.', { pattern: { type: 'string' }, path: { type: 'string' } }, ['pattern']),
  customTool(
    'Grep',
    'Searches file contents with regular expressions.',
    { pattern: { type: 'string' }, path: { type: 'string' }, output_mode: { type: 'string', enum: ['content', 'files_with_matches', 'count'] }, '-i': { type: 'boolean' } },
    ['pattern'],
  ),
  customTool(
    'TodoWrite',
    'Creates and manages a structured task list.',
    {
      todos: {
        type: 'array',
        items: {
          type: 'object',
          properties: { content: { type: 'string' }, status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] }, id: { type: 'string' } },
          required: ['content', 'status', 'id'],
        },
      },
    },
    ['todos'],
  ),
  customTool('WebFetch', 'Fetches content from a URL.', { url: { type: 'string', format: 'uri' }, prompt: { type: 'string' } }, ['url', 'prompt']),
  customTool('Task', 'Launches a sub-agent for a complex task.', { description: { type: 'string' }, prompt: { type: 'string' }, subagent_type: { type: 'string' } }, ['description', 'prompt']),
  customTool(
    'NotebookEdit',
    'Replaces the contents of a cell in a Jupyter notebook.',
    { notebook_path: { type: 'string' }, cell_id: { type: 'string' }, new_source: { type: 'string' }, edit_mode: { type: 'string', enum: ['replace', 'insert', 'delete'] } },
    ['notebook_path', 'new_source'],
  ),
  { ...customTool('ExitPlanMode', 'Presents the plan for approval.', { plan: { type: 'string' } }, ['plan']), cache_control: { type: 'ephemeral' } },
];
const HOSTED_TOOLS = [
  { type: 'web_search_20250305', name: 'web_search', max_uses: 5 },
  { type: 'bash_20250124', name: 'bash' },
] as const;
const AGENT_TOOLS = [...CUSTOM_TOOLS, ...HOSTED_TOOLS] as unknown as Anthropic.ToolUnion[];

const SYSTEM_BLOCKS: Anthropic.TextBlockParam[] = [
  { type: 'text', text: 'You are an interactive CLI tool that helps users with software engineering tasks.' },
  {
    type: 'text',
    text: `# Working directory\n/home/user/project\n\n# Conventions\n${'Follow the existing code style; run the tests before you finish. '.repeat(40)}`,
    cache_control: { type: 'ephemeral' },
  },
];

/** The body an agent sends; `model` and `stream` vary. */
function agentBody(model: string): Record<string, unknown> {
  return {
    model,
    max_tokens: 32000,
    thinking: { type: 'enabled', budget_tokens: 2048 },
    system: SYSTEM_BLOCKS,
    tools: AGENT_TOOLS,
    metadata: { user_id: 'user_0123456789abcdef_account__session_42' },
    context_management: { edits: [{ type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 100000 } }] },
    output_config: { effort: 'high' },
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Here is the design document for the change.' },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'The cache layer must be invalidated on every write.' }, title: 'design.txt' },
          { type: 'text', text: 'Refactor the cache module accordingly.', cache_control: { type: 'ephemeral' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'I will start by reading the cache module.' }] },
      { role: 'system', content: 'The user switched to auto-accept mode.' },
      { role: 'user', content: [{ type: 'text', text: LAST_USER_TEXT, cache_control: { type: 'ephemeral', ttl: '5m' } }] },
    ],
  };
}

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
  const account = await gateway.createAccountWithKey();
  accountId = account.accountId;
  recording = createClient(gateway, account.key);
  client = recording.client;
});

afterAll(async () => {
  await world?.close();
});



/** An answer any kind may give: text (the upstreams echo) or a call of a tool the user's text mentions (the mock). */
function expectAnswered(kind: Kind, message: Anthropic.Message | Anthropic.Beta.BetaMessage): void {
  expect(message.type).toBe('message');
  expect(message.content.length).toBeGreaterThan(0);
  expect(['end_turn', 'tool_use']).toContain(message.stop_reason);
  expect(message.usage.input_tokens).toBeGreaterThan(0);
  expect(message.usage.output_tokens).toBeGreaterThan(0);
  const text = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  if (kind !== 'mock') {
    expect(message.stop_reason).toBe('end_turn');
    expect(text).toBe(`Echo: ${LAST_USER_TEXT}`);
  } else {
    // Thinking was asked for: the mock thinks first.
    expect(message.content[0]!.type).toBe('thinking');
    expect(text.length).toBeGreaterThan(0);
  }
}

/** The entries of `x-gateway-dropped-params` (empty when the header is absent). */
function droppedParams(headers: Headers): string[] {
  const value = headers.get('x-gateway-dropped-params');
  return value ? value.split(',').map((entry) => entry.trim()) : [];
}

describe.each(KINDS)('an agent-sized request on the $kind provider', ({ kind, model, upstreamModel }) => {
  it('is accepted and answered by messages.create', async () => {
    const body = agentBody(model);
    // Non-stream calls with this max_tokens need an explicit timeout in the SDK.
    const { result, requests } = await world.requestsDuring(kind, () =>
      client.messages.create(body as unknown as Anthropic.MessageCreateParamsNonStreaming, { timeout: 60_000 }),
    );
    expectAnswered(kind, result);
    const headers = recording.lastHeaders();

    if (kind === 'anthropic') {
      expect(requests).toHaveLength(1);
      const upstream = requests[0]!;
      // Untouched: hosted tools, thinking, cache_control, the document and the unknown fields all arrive as sent.
      expect(upstream.body).toEqual({ ...(recording.sent.at(-1)!.body as object), model: upstreamModel });
      const upstreamBody = upstream.body as { tools: unknown[] };
      expect(upstreamBody.tools.slice(-2)).toEqual(HOSTED_TOOLS);
      expect(headers.get('x-gateway-dropped-params')).toBeNull();
    } else if (kind === 'openai') {
      expect(requests).toHaveLength(1);
      const upstream = requests[0]!;
      expect(upstream.path).toBe('/v1/chat/completions');
      const upstreamBody = upstream.body as { tools: { type: string; function: { name: string } }[]; messages: { role: string }[] };
      // The ten custom tools reach chat completions as functions; the hosted ones cannot.
      expect(upstreamBody.tools.map((tool) => tool.function.name)).toEqual(CUSTOM_TOOLS.map((tool) => tool.name));
      expect(JSON.stringify(upstreamBody)).not.toContain('web_search_20250305');
      expect(upstreamBody.messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'system', 'user']);
      // Named by the bridge: what chat completions cannot carry.
      const dropped = droppedParams(headers);
      expect(dropped).toEqual(expect.arrayContaining(['cache_control', 'messages:document', 'context_management']));
    }
    await usageRowOf(gateway, recording.lastRequestId());
  });

  it('is accepted and answered as a stream', async () => {
    const body = { ...agentBody(model), stream: true };
    const { result: final } = await world.requestsDuring(kind, () =>
      client.messages.stream(body as unknown as Anthropic.MessageStreamParams).finalMessage(),
    );
    expectAnswered(kind, final);
    if (kind === 'openai') expect(droppedParams(recording.lastHeaders())).toEqual(expect.arrayContaining(['cache_control', 'context_management']));
    if (kind === 'anthropic') {
      expect(recording.lastHeaders().get('x-gateway-dropped-params')).toBeNull();
      const upstream = anthropicUpstream.requests.at(-1)!;
      expect(upstream.body).toEqual({ ...(recording.sent.at(-1)!.body as object), model: upstreamModel });
    }
  });

  it('is accepted and answered by client.beta.messages.create with betas', async () => {
    const body = { ...agentBody(model), betas: ['context-management-2025-06-27', 'interleaved-thinking-2025-05-14'] };
    const { result, requests } = await world.requestsDuring(kind, () =>
      client.beta.messages.create(body as unknown as Anthropic.Beta.MessageCreateParamsNonStreaming, { timeout: 60_000 }),
    );
    expectAnswered(kind, result);
    if (kind === 'anthropic') {
      expect(requests[0]!.headers['anthropic-beta']).toBe('context-management-2025-06-27,interleaved-thinking-2025-05-14');
      expect(requests[0]!.body).toEqual({ ...(recording.sent.at(-1)!.body as object), model: upstreamModel });
      expect(JSON.stringify(requests[0]!.body)).not.toContain('betas');
    }
  });
});

describe('hosted tools on the OpenAI-format bridge', () => {
  it('names the hosted tools it drops in x-gateway-dropped-params', async () => {
    await client.messages.create(agentBody('gpt-msg') as unknown as Anthropic.MessageCreateParamsNonStreaming, { timeout: 60_000 });
    expect(droppedParams(recording.lastHeaders()).join(',')).toMatch(/web_search/);
    expect(droppedParams(recording.lastHeaders()).join(',')).toMatch(/bash/);
  });

  it('reports hosted tools that come without custom tools', async () => {
    const before = openaiUpstream.requests.length;
    const message = await client.messages.create({
      model: 'gpt-msg',
      max_tokens: 64,
      tools: HOSTED_TOOLS as unknown as Anthropic.ToolUnion[],
      messages: [{ role: 'user', content: LAST_USER_TEXT }],
    });
    expect(message.content).toEqual([{ type: 'text', text: `Echo: ${LAST_USER_TEXT}` }]);
    expect(droppedParams(recording.lastHeaders()).some((entry) => entry.startsWith('tools'))).toBe(true);
    const upstream = openaiUpstream.requests.slice(before);
    expect((upstream[0]!.body as { tools?: unknown }).tools).toBeUndefined();
  });
});

describe('strict mode on the OpenAI-format bridge', () => {
  it('refuses with 400 UNSUPPORTED_FEATURE instead of dropping, before calling the upstream', async () => {
    const before = openaiUpstream.requests.length;
    const error = await failureOf(
      client.messages.create(agentBody('gpt-msg') as unknown as Anthropic.MessageCreateParamsNonStreaming, {
        timeout: 60_000,
        headers: { 'x-gateway-strict': 'true' },
      }),
    );
    const apiError = expectAnthropicError(error, Anthropic.BadRequestError, { status: 400, type: 'invalid_request_error', code: 'UNSUPPORTED_FEATURE' });
    expect(apiError.message).toContain('cache_control');
    expect(openaiUpstream.requests.length).toBe(before);

    const streamError = await failureOf(
      client.messages.stream({ ...agentBody('gpt-msg'), stream: true } as unknown as Anthropic.MessageStreamParams, { headers: { 'x-gateway-strict': 'true' } }).finalMessage(),
    );
    expectAnthropicError(streamError, Anthropic.BadRequestError, { status: 400, type: 'invalid_request_error', code: 'UNSUPPORTED_FEATURE' });
  });

  it('lets the same request through in strict mode on the Anthropic upstream (nothing is dropped)', async () => {
    const message = await client.messages.create(agentBody('claude-msg') as unknown as Anthropic.MessageCreateParamsNonStreaming, {
      timeout: 60_000,
      headers: { 'x-gateway-strict': 'true' },
    });
    expectAnswered('anthropic', message);
  });

  it('lets a plain request through in strict mode on the bridge', async () => {
    const message = await client.messages.create(
      { model: 'gpt-msg', max_tokens: 64, system: 'Be brief.', messages: [{ role: 'user', content: LAST_USER_TEXT }] },
      { headers: { 'x-gateway-strict': 'true' } },
    );
    expect(message.content).toEqual([{ type: 'text', text: `Echo: ${LAST_USER_TEXT}` }]);
    expect(recording.lastHeaders().get('x-gateway-dropped-params')).toBeNull();
  });
});

describe('billing', () => {
  it('leaves no hold, even with max_tokens 32000 held for each request', async () => {
    await expectBalanceSettled(gateway, accountId);
  });
});
