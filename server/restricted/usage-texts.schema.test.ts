/**
 * The usage check's reader against the wire schemas: every string field the request schemas
 * describe (walked from the zod schemas, and through the part, block, item and tool schemas
 * their lenient unions hide) is either read by `readUsageTexts` or listed in {@link NOT_READ}
 * with the reason the model is not shown it. A field added to a schema is read, or this test
 * fails until someone decides otherwise here. Enums and literals (roles, types, fixed settings)
 * are vocabularies, not text, and are not listed.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  anthropicContentBlockSchema,
  anthropicCustomToolSchema,
  anthropicImageBlockSchema,
  anthropicRedactedThinkingBlockSchema,
  anthropicSystemSchema,
  anthropicTextBlockSchema,
  anthropicThinkingBlockSchema,
  anthropicToolResultBlockSchema,
  anthropicToolSchema,
  anthropicToolUseBlockSchema,
  countTokensRequestSchema,
  messagesRequestSchema,
} from '../providers/anthropic/anthropic.wire.js';
import { chatCompletionRequestSchema, chatContentPartSchema, chatImageUrlPartSchema, chatTextPartSchema } from '../providers/openai/openai.wire.js';
import type { ChatFormat } from '../providers/types.js';
import { compactRequestSchema, responsesFunctionCallItemSchema, responsesFunctionCallOutputItemSchema, responsesFunctionToolSchema, responsesInputFilePartSchema, responsesInputImagePartSchema, responsesInputTextPartSchema, responsesItemReferenceSchema, responsesMessageItemSchema, responsesOutputTextPartSchema, responsesReasoningItemSchema, responsesRefusalPartSchema, responsesRequestSchema, responsesToolSchema } from '../translate/responses/responses.wire.js';
import { readUsageTexts } from './usage-texts.js';

/**
 * String fields the model is not shown as text, by path (`[]` an array element, `<x>` the
 * variant whose `type` or `role` is x). A listed path also covers everything under it.
 */
const NOT_READ: Record<string, string> = {
  // Request options (usage-fields.ts TOP_LEVEL_NOT_READ).
  model: 'which model: routing, not prompt',
  user: 'end-user id for the provider’s abuse tracking',
  safety_identifier: 'end-user id for the provider’s abuse tracking',
  metadata: 'caller metadata, never given to the model',
  stop: 'stop sequences end the answer; the model is not shown them',
  stop_sequences: 'stop sequences end the answer; the model is not shown them',
  tool_choice: 'which tool to call: a setting naming tools that are read with the tools',
  function_call: 'legacy tool choice, as tool_choice',
  previous_response_id: 'a reference: the stored conversation is read as history',
  thinking: 'reasoning settings',
  reasoning: 'reasoning settings',
  'text.verbosity': 'answer-length setting',
  // Identifiers and links between calls and results.
  'messages[]<assistant>.tool_calls[]<function>.id': 'call id',
  'messages[]<tool>.tool_call_id': 'call id',
  'messages[].content[]<tool_use>.id': 'call id',
  'messages[].content[]<tool_result>.tool_use_id': 'call id',
  'input[]<message>.id': 'item id',
  'input[]<message>.status': 'item status',
  'input[]<function_call>.id': 'item id',
  'input[]<function_call>.call_id': 'call id',
  'input[]<function_call>.status': 'item status',
  'input[]<function_call_output>.id': 'item id',
  'input[]<function_call_output>.call_id': 'call id',
  'input[]<function_call_output>.status': 'item status',
  'input[]<reasoning>.id': 'item id',
  'input[]<reasoning>.encrypted_content': 'opaque: only the provider can read it',
  'input[]<reasoning>.status': 'item status',
  'input[]<item_reference>.id': 'a reference to an item the provider stored',
  // Signatures and opaque reasoning.
  'messages[].content[]<thinking>.signature': 'opaque signature of the reasoning',
  'messages[].content[]<redacted_thinking>.data': 'encrypted reasoning: only the provider can read it',
  // Images and files: counted unread (the check cannot read them).
  'messages[]<system>.content[]<image_url>.image_url': 'an image (counted unread)',
  'messages[]<developer>.content[]<image_url>.image_url': 'an image (counted unread)',
  'messages[]<user>.content[]<image_url>.image_url': 'an image (counted unread)',
  'messages[]<assistant>.content[]<image_url>.image_url': 'an image (counted unread)',
  'messages[]<tool>.content[]<image_url>.image_url': 'an image (counted unread)',
  'messages[].content[]<image>': 'an image (counted unread)',
  'messages[].content[]<tool_result>.content[]<image>': 'an image (counted unread)',
  'input[]<message>.content[]<input_image>': 'an image (counted unread)',
  'input[]<message>.content[]<input_file>.file_id': 'a file (counted unread)',
  'input[]<message>.content[]<input_file>.file_data': 'a file (counted unread)',
  'input[]<message>.content[]<input_file>.file_url': 'a file (counted unread)',
  'input[]<function_call_output>.output[]<input_image>': 'an image (counted unread)',
  'input[]<function_call_output>.output[]<input_file>.file_id': 'a file (counted unread)',
  'input[]<function_call_output>.output[]<input_file>.file_data': 'a file (counted unread)',
  'input[]<function_call_output>.output[]<input_file>.file_url': 'a file (counted unread)',
  // Caching hints.
  'system[]<text>.cache_control': 'caching hint',
  'messages[].content[]<text>.cache_control': 'caching hint',
  'messages[].content[]<tool_use>.cache_control': 'caching hint',
  'messages[].content[]<tool_result>.cache_control': 'caching hint',
  'messages[].content[]<tool_result>.content[]<text>.cache_control': 'caching hint',
  'tools[]<custom>.cache_control': 'caching hint',
};

/** Schemas whose lenient union hides the variants (a refinement or transform picks them): walked as these. */
const VARIANTS = new Map<z.ZodType, z.ZodType[]>([
  [chatContentPartSchema, [chatTextPartSchema, chatImageUrlPartSchema]],
  [anthropicSystemSchema, [z.string(), z.array(anthropicTextBlockSchema)]],
  [
    anthropicContentBlockSchema,
    [anthropicTextBlockSchema, anthropicImageBlockSchema, anthropicToolUseBlockSchema, anthropicToolResultBlockSchema, anthropicThinkingBlockSchema, anthropicRedactedThinkingBlockSchema],
  ],
  [anthropicToolSchema, [anthropicCustomToolSchema]],
  [responsesToolSchema, [responsesFunctionToolSchema]],
]);

const RESPONSES_PARTS = [responsesInputTextPartSchema, responsesInputImagePartSchema, responsesInputFilePartSchema, responsesOutputTextPartSchema, responsesRefusalPartSchema];
const RESPONSES_ITEMS = [responsesMessageItemSchema, responsesFunctionCallItemSchema, responsesFunctionCallOutputItemSchema, responsesReasoningItemSchema, responsesItemReferenceSchema];

/** The same where the hiding schema is not exported: by path. */
const PATH_VARIANTS: Record<string, z.ZodType[]> = {
  'messages[].content': [z.string(), z.array(anthropicContentBlockSchema)],
  'messages[].content[]<tool_result>.content': [z.string(), z.array(anthropicTextBlockSchema), z.array(anthropicImageBlockSchema)],
  input: [z.string(), z.array(z.union(RESPONSES_ITEMS))],
  'input[]<message>.content': [z.string(), z.array(z.union(RESPONSES_PARTS))],
  'input[]<function_call_output>.output': [z.string(), z.array(z.union(RESPONSES_PARTS))],
};

interface Leaf {
  path: string;
  build(marker: string): unknown;
}

type Definition = { type: string; [key: string]: unknown };

function definitionOf(schema: z.ZodType): Definition {
  return (schema as unknown as { _zod: { def: Definition } })._zod.def;
}

/** `schema` without optional, nullable and default wrappers. */
function unwrapped(schema: z.ZodType): Definition {
  let definition = definitionOf(schema);
  while (['optional', 'nullable', 'default'].includes(definition.type)) definition = definitionOf(definition.innerType as z.ZodType);
  return definition;
}

/** The value of a literal field, or undefined. */
function literalOf(schema: z.ZodType | undefined): string | undefined {
  if (schema === undefined) return undefined;
  const definition = unwrapped(schema);
  return definition.type === 'literal' ? (definition.values as string[])[0] : undefined;
}

/** A value a discriminator field accepts: its literal, or its enum's first value. */
function sampleOf(schema: z.ZodType | undefined): string | undefined {
  if (schema === undefined) return undefined;
  const definition = unwrapped(schema);
  if (definition.type === 'enum') return Object.values(definition.entries as Record<string, string>)[0];
  return literalOf(schema);
}

/** `type` and `role` fields say what a part or turn is (the reader keeps the role as the text's role); they are never text. */
const DISCRIMINATORS = ['type', 'role'];

/** Every string leaf of `schema` at `path`, with a builder of a value holding a marker there. */
function leavesOf(schema: z.ZodType, path: string, depth = 0, expanded = false): Leaf[] {
  if (depth > 30) throw new Error(`schema too deep at ${path}`);
  const variants = expanded ? undefined : (VARIANTS.get(schema) ?? PATH_VARIANTS[path]);
  if (variants !== undefined) return variants.flatMap((variant) => leavesOf(variant, path, depth + 1, true));
  const definition = definitionOf(schema);
  switch (definition.type) {
    case 'string':
    case 'unknown':
      return [{ path, build: (marker) => marker }];
    case 'record':
      return [{ path, build: (marker) => ({ description: marker }) }];
    case 'optional':
    case 'nullable':
    case 'default':
    case 'readonly':
      return leavesOf(definition.innerType as z.ZodType, path, depth + 1);
    case 'pipe':
      return leavesOf(definition.in as z.ZodType, path, depth + 1);
    case 'union':
      return (definition.options as z.ZodType[]).flatMap((option) => leavesOf(option, path, depth + 1));
    case 'array':
      return leavesOf(definition.element as z.ZodType, `${path}[]`, depth + 1).map((leaf) => ({ path: leaf.path, build: (marker) => [leaf.build(marker)] }));
    case 'object': {
      const shape = definition.shape as Record<string, z.ZodType>;
      const fixed: Record<string, string> = {};
      for (const key of DISCRIMINATORS) {
        const value = sampleOf(shape[key]);
        if (value !== undefined) fixed[key] = value;
      }
      const label = literalOf(shape.type) ?? literalOf(shape.role);
      const here = label === undefined ? path : `${path}<${label}>`;
      return Object.entries(shape).flatMap(([key, child]) => {
        if (DISCRIMINATORS.includes(key)) return [];
        return leavesOf(child, here === '' ? key : `${here}.${key}`, depth + 1).map((leaf) => ({ path: leaf.path, build: (marker) => ({ ...fixed, [key]: leaf.build(marker) }) }));
      });
    }
    default:
      // Numbers, booleans, enums and literals carry no text.
      return [];
  }
}

function listedAs(path: string): string | undefined {
  for (const [listed, reason] of Object.entries(NOT_READ)) {
    if (path === listed || path.startsWith(`${listed}.`) || path.startsWith(`${listed}[`) || path.startsWith(`${listed}<`)) return reason;
  }
  return undefined;
}

const REQUESTS: Array<[string, ChatFormat, z.ZodType]> = [
  ['chat completions', 'chat', chatCompletionRequestSchema],
  ['messages', 'messages', messagesRequestSchema],
  ['count_tokens', 'messages', countTokensRequestSchema],
  ['responses', 'responses', responsesRequestSchema],
  ['responses compaction', 'responses', compactRequestSchema],
];

describe('the usage-check reader against the wire schemas', () => {
  for (const [name, format, schema] of REQUESTS) {
    it(`reads every string field of ${name} but the listed ones`, () => {
      const leaves = leavesOf(schema, '');
      expect(leaves.length).toBeGreaterThan(10);
      const wrong: string[] = [];
      leaves.forEach((leaf, index) => {
        const marker = `zqxmarker${index}zqx`;
        const body = leaf.build(marker) as Record<string, unknown>;
        const read = readUsageTexts(format, body).texts.some((text) => text.text.includes(marker));
        const reason = listedAs(leaf.path);
        if (read && reason !== undefined) wrong.push(`${leaf.path}: read, but listed as not read (${reason})`);
        if (!read && reason === undefined) wrong.push(`${leaf.path}: not read, and not listed`);
      });
      expect(wrong).toEqual([]);
    });
  }

  it('lists no field the schemas do not have', () => {
    const all = REQUESTS.flatMap(([, , schema]) => leavesOf(schema, '').map((leaf) => leaf.path));
    const stale = Object.keys(NOT_READ).filter((listed) => !all.some((path) => path === listed || path.startsWith(`${listed}.`) || path.startsWith(`${listed}[`) || path.startsWith(`${listed}<`)));
    expect(stale).toEqual([]);
  });
});
