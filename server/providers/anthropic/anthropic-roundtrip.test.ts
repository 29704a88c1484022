/**
 * Property: for any canonical request limited to what Anthropic carries,
 * `fromAnthropicRequest(toAnthropicRequest(r).body)` gives `r` back, once `r`
 * is normalised the way the Anthropic wire forces:
 * - system messages before the first turn join `system`;
 * - a run of tool and user messages is one user turn: tool messages first,
 *   then one user message with all the user parts; a run of assistant
 *   messages (or of system messages) is one message;
 * - `parallelToolCalls: true` is Anthropic's default and is not sent;
 *   `false` without a tool choice reads back as `auto`, and means nothing with `none`;
 * - an empty custom tool list next to hosted tools reads back as no custom tools.
 * Not generated because the translation is knowingly lossy (and reported):
 * data URLs (come back base64), image detail, message names, unsigned
 * thinking, penalties, seed, effort, json_object, a json_schema name other
 * than the one Anthropic's format reads back as, a missing max_tokens.
 * Not generated because Anthropic refuses them: empty text parts and tool
 * ids with characters other than `[a-zA-Z0-9_-]` (adjusted silently),
 * whitespace-only stop sequences (dropped and reported).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type {
  CanonicalAssistantPart,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalTextPart,
  CanonicalUserPart,
} from '../canonical.js';
import { ANTHROPIC_OUTPUT_SCHEMA_NAME, fromAnthropicRequest } from './from-anthropic-request.js';
import { messagesRequestSchema } from './anthropic.wire.js';
import { toAnthropicRequest } from './to-anthropic-request.js';

const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });
const name = fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_-]{0,15}$/);
const id = fc.stringMatching(/^(toolu|call)_[A-Za-z0-9]{4,12}$/);

const cacheControl = fc.constantFrom<Record<string, unknown>>({ type: 'ephemeral' }, { type: 'ephemeral', ttl: '1h' });
const textPart: fc.Arbitrary<CanonicalTextPart> = fc
  .record({ text: fc.string({ minLength: 1 }), cacheControl: optional(cacheControl) })
  .map(({ text, cacheControl }): CanonicalTextPart => (cacheControl ? { type: 'text', text, cacheControl } : { type: 'text', text }));

const imagePart: fc.Arbitrary<CanonicalUserPart> = fc.oneof(
  fc
    .record({ mediaType: fc.constantFrom('image/png', 'image/jpeg', 'image/gif', 'image/webp'), data: fc.base64String() })
    .map(({ mediaType, data }): CanonicalUserPart => ({ type: 'image', source: { kind: 'base64', mediaType, data } })),
  fc.webUrl().map((url): CanonicalUserPart => ({ type: 'image', source: { kind: 'url', url } })),
);

/** Blocks only Anthropic knows, carried as unknown parts from a messages client. */
const messagesUnknownUserPart: fc.Arbitrary<CanonicalUserPart> = fc
  .oneof(
    fc.record({ type: fc.constant('document'), source: fc.record({ type: fc.constant('text'), media_type: fc.constant('text/plain'), data: fc.string() }) }),
    fc.record({ type: fc.constant('search_result'), source: fc.webUrl(), title: fc.string(), content: fc.constant([]) }),
    fc.record({ type: fc.constant('image'), source: fc.record({ type: fc.constant('file'), file_id: id }) }),
  )
  .map((raw): CanonicalUserPart => ({ type: 'unknown', origin: `messages:${raw.type}`, raw }));

const userPart = fc.oneof(textPart, imagePart, messagesUnknownUserPart);

const assistantPart: fc.Arbitrary<CanonicalAssistantPart> = fc.oneof(
  textPart,
  fc
    .record({ text: fc.string(), signature: fc.string({ minLength: 1 }) })
    .map(({ text, signature }): CanonicalAssistantPart => ({ type: 'thinking', text, signature })),
  fc.string({ minLength: 1 }).map((redactedData): CanonicalAssistantPart => ({ type: 'thinking', text: '', redactedData })),
  fc
    .record({ id, name, input: fc.dictionary(fc.string(), fc.jsonValue()) })
    .map(({ id, name, input }): CanonicalAssistantPart => ({ type: 'tool_call', id, name, arguments: JSON.stringify(input) })),
  fc
    .record({ id: fc.stringMatching(/^srvtoolu_[a-z0-9]{4}$/), query: fc.string() })
    .map(({ id, query }): CanonicalAssistantPart => ({
      type: 'unknown',
      origin: 'messages:server_tool_use',
      raw: { type: 'server_tool_use', id, name: 'web_search', input: { query } },
    })),
);

const userMessage: fc.Arbitrary<CanonicalMessage> = fc
  .array(userPart, { minLength: 1, maxLength: 3 })
  .map((content): CanonicalMessage => ({ role: 'user', content }));
const assistantMessage: fc.Arbitrary<CanonicalMessage> = fc
  .array(assistantPart, { minLength: 1, maxLength: 3 })
  .map((content): CanonicalMessage => ({ role: 'assistant', content }));
const systemMessage: fc.Arbitrary<CanonicalMessage> = fc
  .array(textPart, { minLength: 1, maxLength: 2 })
  .map((content): CanonicalMessage => ({ role: 'system', content }));
const toolMessage: fc.Arbitrary<CanonicalMessage> = fc
  .record({ toolCallId: id, content: fc.array(userPart, { maxLength: 2 }), isError: optional(fc.boolean()) })
  .map(({ toolCallId, content, isError }): CanonicalMessage =>
    isError === undefined ? { role: 'tool', toolCallId, content } : { role: 'tool', toolCallId, content, isError },
  );

const messages = fc
  .tuple(
    fc.array(systemMessage, { maxLength: 2 }),
    userMessage,
    fc.array(fc.oneof(userMessage, assistantMessage, toolMessage, systemMessage), { maxLength: 8 }),
  )
  .map(([leading, first, rest]) => [...leading, first, ...rest]);

const tool = fc
  .record({
    name,
    description: optional(fc.string()),
    properties: fc.dictionary(name, fc.constantFrom({ type: 'string' }, { type: 'number' })),
    strict: optional(fc.boolean()),
  })
  .map(({ name, description, properties, strict }) => {
    const result: NonNullable<CanonicalRequest['tools']>[number] = { name, parameters: { type: 'object', properties } };
    if (description !== undefined) result.description = description;
    if (strict !== undefined) result.strict = strict;
    return result;
  });

const hostedTool = fc.constantFrom(
  { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
  { type: 'bash_20250124', name: 'bash' },
  { type: 'code_execution_20250825', name: 'code_execution' },
);

const canonicalRequest: fc.Arbitrary<CanonicalRequest> = fc
  .record({
    model: fc.string({ minLength: 1 }),
    system: optional(fc.array(textPart, { minLength: 1, maxLength: 3 })),
    messages,
    maxOutputTokens: fc.integer({ min: 1, max: 64000 }),
    temperature: optional(fc.double({ min: 0, max: 1, noNaN: true })),
    topP: optional(fc.double({ min: 0, max: 1, noNaN: true })),
    topK: optional(fc.nat(500)),
    stop: optional(fc.array(fc.string().filter((stop) => stop.trim() !== ''), { minLength: 1, maxLength: 4 })),
    tools: optional(fc.array(tool, { maxLength: 4 })),
    toolChoice: optional(
      fc.oneof(
        fc.constantFrom({ type: 'auto' as const }, { type: 'none' as const }, { type: 'required' as const }),
        name.map((toolName) => ({ type: 'tool' as const, name: toolName })),
      ),
    ),
    parallelToolCalls: optional(fc.boolean()),
    responseFormat: optional(
      fc.dictionary(name, fc.jsonValue()).map((properties) => ({
        type: 'json_schema' as const,
        name: ANTHROPIC_OUTPUT_SCHEMA_NAME,
        schema: { type: 'object', properties },
      })),
    ),
    reasoning: optional(
      fc.oneof(fc.integer({ min: 1024, max: 60000 }).map((budgetTokens) => ({ budgetTokens })), fc.constant({ disabled: true })),
    ),
    user: optional(fc.string()),
    stream: fc.boolean(),
    hostedTools: optional(fc.array(hostedTool, { minLength: 1, maxLength: 2 })),
    adaptive: fc.boolean(),
    serviceTier: optional(fc.constantFrom('auto', 'standard_only')),
    container: optional(fc.stringMatching(/^container_[a-z0-9]{4}$/)),
    outputConfigRest: optional(fc.constant({ task_budget: { type: 'tokens', total: 1000 } })),
  })
  .map(({ hostedTools, adaptive, serviceTier, container, outputConfigRest, ...request }) => {
    const extra: Record<string, unknown> = {};
    if (hostedTools) extra.tools = hostedTools;
    if (adaptive && request.reasoning === undefined) extra.thinking = { type: 'adaptive' };
    if (serviceTier) extra.service_tier = serviceTier;
    if (container) extra.container = container;
    if (outputConfigRest) extra.output_config = outputConfigRest;
    const result: CanonicalRequest = { ...request };
    if (Object.keys(extra).length > 0) result.extra = extra;
    return result;
  });

type TurnRole = 'user' | 'assistant' | 'system';
const turnRole = (message: CanonicalMessage): TurnRole => (message.role === 'tool' ? 'user' : message.role);

/** What the Anthropic wire makes of a canonical request (see the file comment). */
function normalise(request: CanonicalRequest): CanonicalRequest {
  const result: CanonicalRequest = structuredClone(request);
  const system = [...(result.system ?? [])];
  let start = 0;
  for (const message of result.messages) {
    if (message.role !== 'system') break;
    system.push(...message.content);
    start++;
  }
  result.system = system.length > 0 ? system : undefined;

  const messages: CanonicalMessage[] = [];
  const rest = result.messages.slice(start);
  for (let i = 0; i < rest.length; ) {
    const role = turnRole(rest[i]);
    let end = i;
    while (end < rest.length && turnRole(rest[end]) === role) end++;
    const run = rest.slice(i, end);
    i = end;
    if (role === 'user') {
      messages.push(...run.filter((message) => message.role === 'tool'));
      const parts = run.flatMap((message) => (message.role === 'user' ? message.content : []));
      if (parts.length > 0) messages.push({ role: 'user', content: parts });
    } else if (role === 'assistant') {
      messages.push({ role: 'assistant', content: run.flatMap((message) => (message.role === 'assistant' ? message.content : [])) });
    } else {
      messages.push({ role: 'system', content: run.flatMap((message) => (message.role === 'system' ? message.content : [])) });
    }
  }
  result.messages = messages;

  if (result.parallelToolCalls === true) delete result.parallelToolCalls;
  if (result.parallelToolCalls === false) {
    if (result.toolChoice === undefined) result.toolChoice = { type: 'auto' };
    else if (result.toolChoice.type === 'none') delete result.parallelToolCalls;
  }
  if (result.tools?.length === 0 && result.extra?.tools !== undefined) delete result.tools;
  return result;
}

describe('Anthropic request translation round trip', () => {
  it('fromAnthropicRequest(toAnthropicRequest(r).body) equals normalised r', () => {
    fc.assert(
      fc.property(canonicalRequest, (request) => {
        const { body, report } = toAnthropicRequest(request);
        expect(report.dropped).toEqual([]);
        const validated = messagesRequestSchema.parse(body);
        const back = fromAnthropicRequest(validated);
        expect(back.request).toEqual(normalise(request));
        expect(back.report).toEqual({ dropped: [], approximated: [] });
      }),
      { numRuns: 500 },
    );
  });
});
