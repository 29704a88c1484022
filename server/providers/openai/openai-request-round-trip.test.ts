import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type {
  CanonicalAssistantPart,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalTextPart,
  CanonicalUserPart,
} from '../canonical.js';
import { parseOrThrow } from '../../validation.js';
import { fromOpenAIChatRequest } from './from-openai-request.js';
import { chatCompletionRequestSchema } from './openai.wire.js';
import { toOpenAIChatRequest } from './to-openai-request.js';

/*
 * Generators of canonical requests limited to what chat can carry: no
 * thinking, topK, cacheControl, budgets, tool names on tool messages or parts
 * from other formats, and the shapes chat writes one way only are written in
 * that way (tool calls after an assistant's text, a system prompt that is not
 * an empty list, no system message first in `messages`).
 */

/** -0 does not survive JSON; the wire never carries it. */
function withoutNegativeZero(value: number): number {
  return value === 0 ? 0 : value;
}

/** Values as they come out of a JSON body (fc.jsonValue can produce -0, which JSON writes as 0). */
const jsonValue = fc
  .jsonValue()
  .map((value): unknown => JSON.parse(JSON.stringify(value)))
  .filter((value) => !JSON.stringify(value).includes('"__proto__"'));
const jsonObject = fc.dictionary(fc.stringMatching(/^[a-z][a-z_]{0,9}$/), jsonValue, { maxKeys: 4 });
const toolName = fc.stringMatching(/^[a-zA-Z0-9_-]{1,64}$/);
const messageName = fc.stringMatching(/^[a-zA-Z0-9_]{1,16}$/);
const text = fc.string({ unit: 'grapheme', maxLength: 30 });
const nonEmptyText = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 });

const textPart = text.map((value): CanonicalTextPart => ({ type: 'text', text: value }));

const imagePart: fc.Arbitrary<CanonicalUserPart> = fc.record(
  {
    type: fc.constant('image' as const),
    source: fc.oneof(
      fc.webUrl({ validSchemes: ['http', 'https'] }).map((url) => ({ kind: 'url' as const, url })),
      fc.record({
        kind: fc.constant('base64' as const),
        mediaType: fc.constantFrom('image/png', 'image/jpeg', 'image/gif', 'image/webp'),
        data: fc.base64String({ minLength: 4, maxLength: 40 }),
      }),
    ),
    detail: fc.constantFrom('auto', 'low', 'high'),
  },
  { requiredKeys: ['type', 'source'] },
);

const chatOnlyUserPart: fc.Arbitrary<CanonicalUserPart> = fc.oneof(
  fc.record({ data: fc.base64String({ minLength: 4, maxLength: 20 }), format: fc.constantFrom('wav', 'mp3') }).map((audio) => ({
    type: 'unknown' as const,
    origin: 'chat:input_audio',
    raw: { type: 'input_audio', input_audio: audio },
  })),
  fc.stringMatching(/^file-[A-Za-z0-9]{8}$/).map((fileId) => ({
    type: 'unknown' as const,
    origin: 'chat:file',
    raw: { type: 'file', file: { file_id: fileId } },
  })),
);

const userMessage: fc.Arbitrary<CanonicalMessage> = fc.record(
  {
    role: fc.constant('user' as const),
    content: fc.array(fc.oneof(textPart, imagePart, chatOnlyUserPart), { minLength: 1, maxLength: 4 }),
    name: messageName,
  },
  { requiredKeys: ['role', 'content'] },
);

const toolCallPart = fc.record({
  type: fc.constant('tool_call' as const),
  id: fc.stringMatching(/^call_[A-Za-z0-9]{4,24}$/),
  name: toolName,
  arguments: fc.json(),
});

const assistantContentPart: fc.Arbitrary<CanonicalAssistantPart> = fc.oneof(
  nonEmptyText.map((value) => ({ type: 'text' as const, text: value })),
  nonEmptyText.map((refusal) => ({ type: 'unknown' as const, origin: 'chat:refusal', raw: { type: 'refusal', refusal } })),
);

const assistantMessage: fc.Arbitrary<CanonicalMessage> = fc
  .record(
    {
      content: fc.array(assistantContentPart, { maxLength: 3 }),
      toolCalls: fc.array(toolCallPart, { maxLength: 3 }),
      name: messageName,
    },
    { requiredKeys: ['content', 'toolCalls'] },
  )
  .map(({ content, toolCalls, name }) => ({
    role: 'assistant' as const,
    content: [...content, ...toolCalls],
    ...(name === undefined ? {} : { name }),
  }));

const toolMessage: fc.Arbitrary<CanonicalMessage> = fc.record({
  role: fc.constant('tool' as const),
  toolCallId: fc.stringMatching(/^call_[A-Za-z0-9]{4,24}$/),
  content: fc.array(textPart, { minLength: 1, maxLength: 3 }),
});

const systemMessage: fc.Arbitrary<CanonicalMessage> = fc.record({
  role: fc.constant('system' as const),
  content: fc.array(textPart, { minLength: 1, maxLength: 2 }),
});

const messages = fc
  .tuple(userMessage, fc.array(fc.oneof(userMessage, assistantMessage, toolMessage, systemMessage), { maxLength: 6 }))
  .map(([first, rest]) => [first, ...rest]);

const toolSettings = fc.record(
  {
    tools: fc.array(
      fc.record(
        { name: toolName, description: text, parameters: jsonObject, strict: fc.boolean() },
        { requiredKeys: ['name', 'parameters'] },
      ),
      { minLength: 1, maxLength: 3 },
    ),
    toolChoice: fc.oneof(
      fc.constantFrom({ type: 'auto' as const }, { type: 'none' as const }, { type: 'required' as const }),
      toolName.map((name) => ({ type: 'tool' as const, name })),
    ),
    parallelToolCalls: fc.boolean(),
  },
  { requiredKeys: ['tools'] },
);

const extra = fc
  .record(
    {
      n: fc.integer({ min: 2, max: 8 }),
      logprobs: fc.boolean(),
      top_logprobs: fc.integer({ min: 0, max: 20 }),
      logit_bias: fc.dictionary(fc.stringMatching(/^[0-9]{1,6}$/), fc.integer({ min: -100, max: 100 }), { maxKeys: 3 }),
      service_tier: fc.constantFrom('auto', 'default', 'flex', 'priority'),
      metadata: fc.dictionary(fc.stringMatching(/^[a-z]{1,8}$/), fc.string({ maxLength: 10 }), { maxKeys: 3 }),
      store: fc.boolean(),
      prompt_cache_key: fc.string({ minLength: 1, maxLength: 20 }),
      modalities: fc.constant(['text']),
      verbosity: fc.constantFrom('low', 'medium', 'high'),
    },
    { requiredKeys: [] },
  )
  .filter((fields) => Object.keys(fields).length > 0);

const canonicalRequest: fc.Arbitrary<CanonicalRequest> = fc
  .tuple(
    fc.record(
      {
        model: fc.stringMatching(/^[a-z0-9.-]{1,24}$/),
        system: fc.array(textPart, { minLength: 1, maxLength: 3 }),
        messages,
        maxOutputTokens: fc.integer({ min: 1, max: 1_000_000 }),
        temperature: fc.double({ min: 0, max: 2, noNaN: true }).map(withoutNegativeZero),
        topP: fc.double({ min: 0, max: 1, noNaN: true }).map(withoutNegativeZero),
        stop: fc.array(fc.string({ maxLength: 10 }), { minLength: 1, maxLength: 4 }),
        presencePenalty: fc.double({ min: -2, max: 2, noNaN: true }).map(withoutNegativeZero),
        frequencyPenalty: fc.double({ min: -2, max: 2, noNaN: true }).map(withoutNegativeZero),
        seed: fc.integer(),
        responseFormat: fc.oneof(
          fc.constantFrom({ type: 'text' as const }, { type: 'json_object' as const }),
          fc.record(
            { type: fc.constant('json_schema' as const), name: toolName, schema: jsonObject, strict: fc.boolean() },
            { requiredKeys: ['type', 'name', 'schema'] },
          ),
        ),
        reasoning: fc.record({ effort: fc.constantFrom('minimal' as const, 'low' as const, 'medium' as const, 'high' as const) }),
        user: fc.string({ minLength: 1, maxLength: 20 }),
        stream: fc.boolean(),
        extra,
      },
      { requiredKeys: ['model', 'messages', 'stream'] },
    ),
    fc.option(toolSettings, { nil: undefined }),
  )
  .map(([request, tools]) => ({ ...request, ...tools }));

describe('chat request round trip', () => {
  it('fromOpenAIChatRequest(toOpenAIChatRequest(r).body) gives back r for whatever chat can carry', () => {
    fc.assert(
      fc.property(canonicalRequest, (request) => {
        const { body, report } = toOpenAIChatRequest(request);
        expect(report).toEqual({ dropped: [], approximated: [] });
        // Through JSON and the public validation, as a real body travels.
        const parsed = parseOrThrow(chatCompletionRequestSchema, JSON.parse(JSON.stringify(body)));
        const back = fromOpenAIChatRequest(parsed);
        expect(back.request).toEqual(request);
        expect(back.report).toEqual({ dropped: [], approximated: [] });
      }),
      { numRuns: 500 },
    );
  });
});
