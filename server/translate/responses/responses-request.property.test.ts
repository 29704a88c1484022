/**
 * Round trip: canonical → Responses body → (JSON, public schema) → canonical.
 *
 * The generated requests are limited to what Responses carries: no stop, top_k,
 * penalties, seed, names, `isError`, cache markers, signatures or redacted
 * thinking; max_output_tokens ≥ 16; reasoning with either an effort or
 * `disabled`; unknown parts only of Responses origin.
 *
 * Normalised before comparing, because Responses cannot tell them apart:
 * - assistant messages with no content vanish (they produce no items);
 * - consecutive assistant messages merge into one (the items of one model turn);
 * - an empty `extra` is no `extra`;
 * - empty instructions are no instructions (OpenAI reads `""` as none).
 * Tool results answer ids (`tc_…`) disjoint from the generated tool calls
 * (`call_…`), so the decoder's naming of tool results after their call does
 * not apply here (it is covered by from-responses-request.test.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type {
  CanonicalAssistantPart,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalUserPart,
} from '../../providers/canonical.js';
import { parseOrThrow } from '../../validation.js';
import { fromResponsesRequest } from './from-responses-request.js';
import { responsesRequestSchema } from './responses.wire.js';
import { toResponsesRequest } from './to-responses-request.js';

const text = fc.string({ maxLength: 12 });
const name = fc.string({ minLength: 1, maxLength: 8 });
const optional = <T>(arbitrary: fc.Arbitrary<T>) => fc.option(arbitrary, { nil: undefined });

const textPart = text.map((value) => ({ type: 'text' as const, text: value }));

const imagePart: fc.Arbitrary<CanonicalUserPart> = fc
  .tuple(
    fc.oneof(
      fc.webUrl().map((url) => ({ kind: 'url' as const, url })),
      fc.record({
        kind: fc.constant('base64' as const),
        mediaType: fc.constantFrom('image/png', 'image/jpeg', 'image/webp'),
        data: fc.base64String({ maxLength: 16 }),
      }),
    ),
    optional(fc.constantFrom('auto', 'low', 'high')),
  )
  .map(([source, detail]) => ({ type: 'image', source, ...(detail === undefined ? {} : { detail }) }));

const filePart: fc.Arbitrary<CanonicalUserPart> = name.map((fileId) => ({
  type: 'unknown',
  origin: 'responses:input_file',
  raw: { type: 'input_file', file_id: fileId },
}));

const userParts = fc.array(fc.oneof(textPart, imagePart, filePart), { maxLength: 4 });

const assistantPart: fc.Arbitrary<CanonicalAssistantPart> = fc.oneof(
  textPart,
  text.map((value) => ({ type: 'thinking' as const, text: value })),
  fc
    .record({ id: name, name, arguments: fc.oneof(fc.constant('{}'), fc.json({ maxDepth: 2 })) })
    .map((call) => ({ type: 'tool_call' as const, ...call, id: `call_${call.id}` })),
  name.map((id) => ({ type: 'unknown' as const, origin: 'responses:item', raw: { type: 'web_search_call', id } })),
);

const message: fc.Arbitrary<CanonicalMessage> = fc.oneof(
  fc.array(textPart, { maxLength: 2 }).map((content) => ({ role: 'system' as const, content })),
  userParts.map((content) => ({ role: 'user' as const, content })),
  name.map((id) => ({
    role: 'user' as const,
    content: [{ type: 'unknown' as const, origin: 'responses:item', raw: { type: 'item_reference', id } }],
  })),
  fc.array(assistantPart, { maxLength: 4 }).map((content) => ({ role: 'assistant' as const, content })),
  fc.tuple(name, userParts).map(([id, content]) => ({ role: 'tool' as const, toolCallId: `tc_${id}`, content })),
);

const tool = fc.record(
  {
    name,
    description: text,
    parameters: fc.constantFrom(
      { type: 'object', properties: {} },
      { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    ),
    strict: fc.boolean(),
  },
  { requiredKeys: ['name', 'parameters'] },
);

const reasoning = fc.oneof(
  fc.record(
    {
      effort: fc.constantFrom('minimal' as const, 'low' as const, 'medium' as const, 'high' as const),
      summary: fc.constantFrom('auto', 'concise', 'detailed'),
    },
    { requiredKeys: ['effort'] },
  ),
  fc.record({ summary: fc.constantFrom('auto', 'concise', 'detailed') }),
  fc.record({ disabled: fc.constant(true), summary: fc.constantFrom('auto', 'detailed') }, { requiredKeys: ['disabled'] }),
);

const extra = fc.record(
  {
    store: fc.boolean(),
    include: fc.array(fc.constantFrom('reasoning.encrypted_content', 'message.output_text.logprobs'), { maxLength: 2 }),
    metadata: fc.dictionary(name.filter((key) => key !== '__proto__'), text, { maxKeys: 3 }),
    service_tier: fc.constantFrom('auto', 'default', 'flex', 'priority'),
    truncation: fc.constantFrom('auto', 'disabled'),
    prompt_cache_key: text,
    top_logprobs: fc.integer({ min: 0, max: 20 }),
    text: fc.constant({ verbosity: 'low' }),
    tools: fc.constant([{ type: 'web_search' }]),
  },
  { requiredKeys: [] },
);

/** Non-negative zero only: JSON turns -0 into 0. */
const unitInterval = (max: number) => fc.double({ min: 0, max, noNaN: true }).map((value) => value + 0);

const canonicalRequest: fc.Arbitrary<CanonicalRequest> = fc.record(
  {
    model: name,
    system: textPart.map((part) => [part]),
    messages: fc.array(message, { maxLength: 6 }),
    maxOutputTokens: fc.integer({ min: 16, max: 128_000 }),
    temperature: unitInterval(2),
    topP: unitInterval(1),
    tools: fc.array(tool, { minLength: 1, maxLength: 3 }),
    toolChoice: fc.oneof(
      fc.constantFrom({ type: 'auto' as const }, { type: 'none' as const }, { type: 'required' as const }),
      name.map((toolName) => ({ type: 'tool' as const, name: toolName })),
    ),
    parallelToolCalls: fc.boolean(),
    responseFormat: fc.oneof(
      fc.constantFrom({ type: 'text' as const }, { type: 'json_object' as const }),
      fc.record(
        {
          type: fc.constant('json_schema' as const),
          name,
          schema: fc.constant({ type: 'object', properties: { a: { type: 'number' } } }),
          strict: fc.boolean(),
        },
        { requiredKeys: ['type', 'name', 'schema'] },
      ),
    ),
    reasoning,
    user: text,
    stream: fc.boolean(),
    extra,
  },
  { requiredKeys: ['model', 'messages', 'stream'] },
);

function normalise(request: CanonicalRequest): CanonicalRequest {
  const messages: CanonicalMessage[] = [];
  for (const message of request.messages) {
    if (message.role === 'assistant' && message.content.length === 0) continue;
    const previous = messages[messages.length - 1];
    if (message.role === 'assistant' && previous?.role === 'assistant') {
      previous.content = [...previous.content, ...message.content];
    } else {
      messages.push(structuredClone(message));
    }
  }
  const out: CanonicalRequest = { ...request, messages };
  if (out.extra !== undefined && Object.keys(out.extra).length === 0) delete out.extra;
  if (out.system?.every((part) => part.text === '')) delete out.system;
  return out;
}

describe('fromResponsesRequest ∘ toResponsesRequest', () => {
  it('gives back every canonical request that Responses can carry', () => {
    fc.assert(
      fc.property(canonicalRequest, (request) => {
        const encoded = toResponsesRequest(request);
        expect(encoded.report).toEqual({ dropped: [], approximated: [] });
        // Through JSON and the public schema, as a Responses server would read it.
        const wire = parseOrThrow(responsesRequestSchema, JSON.parse(JSON.stringify(encoded.body)));
        const decoded = fromResponsesRequest(wire);
        expect(decoded.report).toEqual({ dropped: [], approximated: [] });
        expect(decoded.request).toEqual(normalise(request));
      }),
      { numRuns: 500 },
    );
  });
});
