/**
 * Coding agents' requests on a model whose primary deployment is Gemini:
 * Claude Code's messages shape (a dozen tools with hosted ones among them,
 * extended thinking, system blocks with `cache_control`, metadata, betas,
 * `max_tokens: 32000`, streamed) through `@anthropic-ai/sdk`, and Codex's
 * responses shape (instructions, developer and user messages, a function
 * call and its output in the input, function tools with a hosted one,
 * reasoning effort and summary, `store: false`, `include`,
 * `prompt_cache_key`, streamed) through `openai`. Both are answered from the
 * local Gemini server, billed, and what Gemini cannot carry is named.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_UPSTREAM, recordAnswers, type AnswerRecorder } from '../support/e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { usageRowOf } from '../support/usage.js';
import { startGeminiUpstream, type GeminiUpstream } from '../upstreams/gemini-upstream.js';

const GEMINI_KEY = 'AIzaSyTest-agents-key-0123456789abcdefgh';

let gemini: GeminiUpstream;
let gateway: TestGateway;
let anthropic: Anthropic;
let anthropicAnswers: AnswerRecorder;
let openai: OpenAI;
let openaiAnswers: AnswerRecorder;

beforeAll(async () => {
  gemini = await startGeminiUpstream({ expectedApiKey: GEMINI_KEY });
  gateway = await startTestGateway({
    catalog: {
      providers: [{ id: 'google', kind: 'gemini', baseUrl: gemini.geminiBaseUrl, apiKey: 'env:UMG_AGENTS_GEMINI_KEY' }],
      models: [
        {
          id: 'agent-model',
          ownedBy: 'google',
          provider: 'google',
          upstreamModel: 'gemini-2.5-pro',
          endpoints: ['/v1/messages', '/v1/messages/count_tokens', '/v1/responses', '/v1/chat/completions'],
          pricing: { input: 1.25, output: 10 },
        },
      ],
    },
    env: { UMG_AGENTS_GEMINI_KEY: GEMINI_KEY },
    config: { upstream: FAST_UPSTREAM },
  });
  const { key } = await gateway.createAccountWithKey({ credits: 100 });
  anthropicAnswers = recordAnswers('request-id');
  anthropic = new Anthropic({ baseURL: gateway.url, apiKey: key, maxRetries: 0, fetch: anthropicAnswers.fetch });
  openaiAnswers = recordAnswers('x-request-id');
  openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0, fetch: openaiAnswers.fetch });
});

afterAll(async () => {
  await gateway?.close();
  await gemini?.close();
});

function tool(name: string, properties: Record<string, unknown>, required: string[]): Anthropic.Tool {
  return { name, description: `${name} tool`, input_schema: { type: 'object', properties, required, additionalProperties: false } };
}

const CLAUDE_CODE_TOOLS = [
  tool('Read', { file_path: { type: 'string' }, offset: { type: 'number' }, limit: { type: 'number' } }, ['file_path']),
  tool('Write', { file_path: { type: 'string' }, content: { type: 'string' } }, ['file_path', 'content']),
  tool('Edit', { file_path: { type: 'string' }, old_string: { type: 'string' }, new_string: { type: 'string' }, replace_all: { type: 'boolean', default: false } }, ['file_path', 'old_string', 'new_string']),
  tool('Glob', { pattern: { type: 'string' }, path: { type: 'string' } }, ['pattern']),
  tool('Grep', { pattern: { type: 'string' }, output_mode: { type: 'string', enum: ['content', 'files_with_matches', 'count'] } }, ['pattern']),
  tool('Bash', { command: { type: 'string' }, timeout: { type: 'number' } }, ['command']),
  tool('TodoWrite', { todos: { type: 'array', items: { type: 'object', properties: { content: { type: 'string' }, status: { type: 'string', enum: ['pending', 'in_progress', 'completed'] } }, required: ['content', 'status'] } } }, ['todos']),
  { ...tool('WebFetch', { url: { type: 'string', format: 'uri' }, prompt: { type: 'string' } }, ['url', 'prompt']), cache_control: { type: 'ephemeral' as const } },
];
const HOSTED = [{ type: 'web_search_20250305', name: 'web_search', max_uses: 5 }];
const LAST_TEXT = 'Please continue with the refactoring we discussed.';

function claudeCodeBody(): Record<string, unknown> {
  return {
    model: 'agent-model',
    max_tokens: 32000,
    stream: true,
    thinking: { type: 'enabled', budget_tokens: 4096 },
    system: [
      { type: 'text', text: 'You are Claude Code, an interactive CLI tool.' },
      { type: 'text', text: `# Environment\nWorking directory: /repo\n${'Follow the existing style. '.repeat(30)}`, cache_control: { type: 'ephemeral' } },
    ],
    tools: [...CLAUDE_CODE_TOOLS, ...HOSTED],
    metadata: { user_id: 'user_abc_account__session_1' },
    messages: [
      { role: 'user', content: [{ type: 'text', text: '<system-reminder>Use TodoWrite.</system-reminder>' }, { type: 'text', text: 'Refactor the cache module.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading the module first.' },
          { type: 'tool_use', id: 'toolu_01A', name: 'Read', input: { file_path: '/repo/cache.ts' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01A', content: [{ type: 'text', text: 'export const cache = new Map();' }] }] },
      { role: 'assistant', content: [{ type: 'text', text: 'The module is small.' }] },
      { role: 'user', content: [{ type: 'text', text: LAST_TEXT, cache_control: { type: 'ephemeral' } }] },
    ],
  };
}

describe("Claude Code's request shape on a Gemini primary", () => {
  it('is streamed back from streamGenerateContent, tool history carried as functionCall/functionResponse, the rest named', async () => {
    const final = await anthropic.beta.messages
      .stream({ ...claudeCodeBody(), betas: ['interleaved-thinking-2025-05-14', 'fine-grained-tool-streaming-2025-05-14'] } as unknown as Parameters<typeof anthropic.beta.messages.stream>[0])
      .finalMessage();
    expect(final.stop_reason).toBe('end_turn');
    const text = final.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    expect(text).toBe(`Echo: ${LAST_TEXT}`);
    // Thinking was asked for: Gemini's thought comes back as a thinking block first.
    expect(final.content[0]!.type).toBe('thinking');
    expect(final.usage.output_tokens).toBeGreaterThan(0);

    const upstream = gemini.requests.at(-1)!;
    expect(upstream.path).toBe('/v1beta/models/gemini-2.5-pro:streamGenerateContent');
    const body = upstream.body as { contents: Array<{ role: string; parts: unknown[] }>; tools: Array<{ functionDeclarations: Array<{ name: string }> }>; generationConfig: Record<string, unknown> };
    expect(body.tools[0]!.functionDeclarations.map((declaration) => declaration.name)).toEqual(CLAUDE_CODE_TOOLS.map((entry) => entry.name));
    expect(body.generationConfig).toEqual({ maxOutputTokens: 32000, thinkingConfig: { thinkingBudget: 4096, includeThoughts: true } });
    expect(body.contents.map((content) => content.role)).toEqual(['user', 'model', 'user', 'model', 'user']);
    expect(body.contents[1]!.parts).toEqual([{ text: 'Reading the module first.' }, { functionCall: { name: 'Read', args: { file_path: '/repo/cache.ts' } } }]);
    expect(body.contents[2]!.parts).toEqual([{ functionResponse: { name: 'Read', response: { output: 'export const cache = new Map();' } } }]);

    const dropped = (anthropicAnswers.lastHeaders().get('x-gateway-dropped-params') ?? '').split(',').map((entry) => entry.trim());
    expect(dropped).toEqual(expect.arrayContaining(['cache_control', 'tools.web_search', 'user']));
    const row = await usageRowOf(gateway, anthropicAnswers.lastRequestId());
    expect(row.provider).toBe('google');
    expect(row.output_tokens).toBe(final.usage.output_tokens);
  });

  it('counts its tokens with countTokens', async () => {
    const { stream: _stream, max_tokens: _max, thinking: _thinking, metadata: _metadata, ...countBody } = claudeCodeBody();
    const count = await anthropic.messages.countTokens(countBody as unknown as Anthropic.MessageCountTokensParams);
    expect(gemini.requests.at(-1)!.path).toBe('/v1beta/models/gemini-2.5-pro:countTokens');
    expect(count.input_tokens).toBeGreaterThan(100);
  });
});

describe("Codex's request shape on a Gemini primary", () => {
  it('is streamed back as Responses events, the function call history carried, reasoning effort approximated', async () => {
    const body = {
      model: 'agent-model',
      instructions: 'You are Codex, a coding agent running in a terminal.',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions instructions>Sandbox: workspace-write.</permissions instructions>' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: '<environment_context><cwd>/repo</cwd></environment_context>' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'List the files' }] },
        { type: 'function_call', name: 'shell', arguments: '{"command":["ls"]}', call_id: 'call_shell_1' },
        { type: 'function_call_output', call_id: 'call_shell_1', output: 'README.md\nsrc' },
      ],
      tools: [
        { type: 'function', name: 'shell', description: 'Runs a shell command', strict: false, parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } }, workdir: { type: 'string' } }, required: ['command'] } },
        { type: 'function', name: 'update_plan', description: 'Updates the plan', strict: false, parameters: { type: 'object', properties: { plan: { type: 'array', items: { type: 'object' } } }, required: ['plan'] } },
        { type: 'web_search' },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      reasoning: { effort: 'medium', summary: 'auto' },
      store: false,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: '0199a0e4-7c1f-7d2a-9f00-codex-session',
      stream: true,
    };
    const stream = openai.responses.stream(body as unknown as Parameters<typeof openai.responses.stream>[0]);
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('Echo: README.md\nsrc');
    expect(final.status).toBe('completed');

    const upstream = gemini.requests.at(-1)!;
    expect(upstream.path).toBe('/v1beta/models/gemini-2.5-pro:streamGenerateContent');
    const sent = upstream.body as { systemInstruction: unknown; contents: Array<{ role: string; parts: unknown[] }>; tools: Array<{ functionDeclarations: Array<{ name: string }> }>; toolConfig: unknown; generationConfig: Record<string, unknown> };
    expect(sent.systemInstruction).toEqual({ parts: [{ text: 'You are Codex, a coding agent running in a terminal.' }] });
    expect(sent.tools[0]!.functionDeclarations.map((declaration) => declaration.name)).toEqual(['shell', 'update_plan']);
    expect(sent.toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(sent.contents.at(-2)).toEqual({ role: 'model', parts: [{ functionCall: { name: 'shell', args: { command: ['ls'] } } }] });
    expect(sent.contents.at(-1)).toEqual({ role: 'user', parts: [{ functionResponse: { name: 'shell', response: { output: 'README.md\nsrc' } } }] });
    expect(sent.generationConfig.thinkingConfig).toEqual({ thinkingBudget: 8192, includeThoughts: true });

    const headers = openaiAnswers.lastHeaders();
    expect(headers.get('x-gateway-approximated-params')).toContain('reasoning.effort');
    expect(headers.get('x-gateway-dropped-params')).toContain('web_search');
    const row = await usageRowOf(gateway, openaiAnswers.lastRequestId());
    expect(row.input_tokens).toBe(final.usage!.input_tokens);
    expect(row.output_tokens).toBe(final.usage!.output_tokens);
  });
});
