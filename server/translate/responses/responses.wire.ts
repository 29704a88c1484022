/**
 * The OpenAI Responses wire format (PROTOCOLS.md §4): zod schemas for the public
 * `POST /v1/responses` and `POST /v1/responses/compact` bodies. The Response
 * object, its stream events and what we read of an upstream's are
 * `responses-object.wire.ts`.
 *
 * Validation is strict where SPEC.md or PROTOCOLS.md set a bound
 * (`max_output_tokens` ≥ 16, `temperature` 0..2, `top_p` 0..1, the shape of
 * function tools, function calls and their outputs, `text.format`) and lenient
 * elsewhere: unknown top-level fields, hosted tools, and item or content-part
 * types we do not model are accepted as sent, so that a newer SDK keeps working.
 *
 * Field names are OpenAI's, exactly.
 * @see https://platform.openai.com/docs/api-reference/responses/create
 */
import { z } from 'zod';
import { MAX_OUTPUT_TOKENS } from '../../validation.js';
import type { ResponsesOpaqueObject } from './responses-object.wire.js';

/**
 * Re-reports the issues of a nested parse at their own (relative) paths. They
 * are marked non-fatal (`continue`) so that an enclosing z.union reports them
 * instead of its own opaque `invalid_union` (zod returns the issues of the
 * only branch that did not abort).
 */
function addNestedIssues(ctx: z.RefinementCtx, error: z.ZodError): void {
  for (const issue of error.issues) {
    ctx.addIssue({ code: 'custom', message: issue.message, path: [...issue.path], input: issue.input, continue: true });
  }
}

/**
 * A union keyed by `type` whose failures name the failing field.
 *
 * zod's own unions answer `invalid_union` at the parent when no branch fits,
 * so the error's `param` would be `input` instead of `input[2].call_id`. Here
 * the branch is picked from the raw `type` (or `defaultType` when absent) and
 * only that branch's issues are reported. A `type` not in `variants` is
 * accepted as-is: OpenAI adds item, part and tool kinds often.
 */
function openTaggedUnion<V extends Record<string, z.ZodType>>(variants: V, defaultType?: string) {
  const envelope = z.looseObject({ type: defaultType === undefined ? z.string() : z.string().optional() });
  return envelope.transform((value, ctx): z.output<V[keyof V]> | ResponsesOpaqueObject => {
    const type = value.type ?? defaultType ?? '';
    const variant = Object.prototype.hasOwnProperty.call(variants, type) ? variants[type] : undefined;
    if (!variant) return value as ResponsesOpaqueObject;
    const result = variant.safeParse(value);
    if (result.success) return result.data as z.output<V[keyof V]>;
    addNestedIssues(ctx, result.error);
    return z.NEVER;
  });
}

/** `string | T[]`, reporting T's issues at their field (see openTaggedUnion for why not a plain z.union). */
function stringOrArray<T extends z.ZodType>(schema: T) {
  return z.union([z.string(), z.array(z.unknown())]).transform((value, ctx): string | z.output<T> => {
    if (typeof value === 'string') return value;
    const result = schema.safeParse(value);
    if (result.success) return result.data as z.output<T>;
    addNestedIssues(ctx, result.error);
    return z.NEVER;
  });
}

// ---------------------------------------------------------------------------
// Content parts

export const responsesInputTextPartSchema = z.looseObject({
  type: z.literal('input_text'),
  text: z.string(),
});

export const responsesInputImagePartSchema = z.looseObject({
  type: z.literal('input_image'),
  image_url: z.string().nullish(),
  file_id: z.string().nullish(),
  detail: z.string().nullish(),
});

export const responsesInputFilePartSchema = z.looseObject({
  type: z.literal('input_file'),
  file_id: z.string().nullish(),
  file_data: z.string().nullish(),
  file_url: z.string().nullish(),
  filename: z.string().nullish(),
});

export const responsesOutputTextPartSchema = z.looseObject({
  type: z.literal('output_text'),
  text: z.string(),
  annotations: z.array(z.unknown()).nullish(),
});

export const responsesRefusalPartSchema = z.looseObject({
  type: z.literal('refusal'),
  refusal: z.string(),
});

export const responsesContentPartSchema = openTaggedUnion({
  input_text: responsesInputTextPartSchema,
  input_image: responsesInputImagePartSchema,
  input_file: responsesInputFilePartSchema,
  output_text: responsesOutputTextPartSchema,
  refusal: responsesRefusalPartSchema,
});

export type ResponsesInputTextPart = z.output<typeof responsesInputTextPartSchema>;
export type ResponsesInputImagePart = z.output<typeof responsesInputImagePartSchema>;
export type ResponsesInputFilePart = z.output<typeof responsesInputFilePartSchema>;
export type ResponsesOutputTextPart = z.output<typeof responsesOutputTextPartSchema>;
export type ResponsesRefusalPart = z.output<typeof responsesRefusalPartSchema>;
export type ResponsesContentPart = z.output<typeof responsesContentPartSchema>;

const contentPartsSchema = z.array(responsesContentPartSchema);

// ---------------------------------------------------------------------------
// Input items

export const responsesMessageItemSchema = z.looseObject({
  type: z.literal('message').optional(),
  id: z.string().nullish(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: stringOrArray(contentPartsSchema),
  status: z.string().nullish(),
});

export const responsesFunctionCallItemSchema = z.looseObject({
  type: z.literal('function_call'),
  id: z.string().nullish(),
  call_id: z.string(),
  name: z.string(),
  arguments: z.string(),
  status: z.string().nullish(),
});

export const responsesFunctionCallOutputItemSchema = z.looseObject({
  type: z.literal('function_call_output'),
  id: z.string().nullish(),
  call_id: z.string(),
  output: stringOrArray(contentPartsSchema),
  status: z.string().nullish(),
});

export const responsesReasoningItemSchema = z.looseObject({
  type: z.literal('reasoning'),
  id: z.string().nullish(),
  summary: z.array(z.looseObject({ type: z.string().optional(), text: z.string() })).nullish(),
  content: z.array(z.looseObject({ type: z.string().optional(), text: z.string() })).nullish(),
  encrypted_content: z.string().nullish(),
  status: z.string().nullish(),
});

export const responsesItemReferenceSchema = z.looseObject({
  type: z.literal('item_reference'),
  id: z.string(),
});

/** An input item; an item without `type` is a message (the SDK's `EasyInputMessage`). */
export const responsesInputItemSchema = openTaggedUnion(
  {
    message: responsesMessageItemSchema,
    function_call: responsesFunctionCallItemSchema,
    function_call_output: responsesFunctionCallOutputItemSchema,
    reasoning: responsesReasoningItemSchema,
    item_reference: responsesItemReferenceSchema,
  },
  'message',
);

export type ResponsesMessageItem = z.output<typeof responsesMessageItemSchema>;
export type ResponsesFunctionCallItem = z.output<typeof responsesFunctionCallItemSchema>;
export type ResponsesFunctionCallOutputItem = z.output<typeof responsesFunctionCallOutputItemSchema>;
export type ResponsesReasoningItem = z.output<typeof responsesReasoningItemSchema>;
export type ResponsesItemReference = z.output<typeof responsesItemReferenceSchema>;
export type ResponsesInputItem = z.output<typeof responsesInputItemSchema>;

const inputItemsSchema = z.array(responsesInputItemSchema);

// ---------------------------------------------------------------------------
// Tools, tool choice, text format, reasoning

/** Function tools are flat in Responses (no `function` wrapper, unlike chat). */
export const responsesFunctionToolSchema = z.looseObject({
  type: z.literal('function'),
  name: z.string().min(1),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});

export type ResponsesFunctionTool = z.output<typeof responsesFunctionToolSchema>;

/** Function tools are checked; hosted tools (web_search, file_search, mcp, custom, …) are accepted as sent. */
export const responsesToolSchema = openTaggedUnion({ function: responsesFunctionToolSchema });
export type ResponsesTool = z.output<typeof responsesToolSchema>;

export const responsesFunctionToolChoiceSchema = z.looseObject({
  type: z.literal('function'),
  name: z.string().min(1),
});

export const responsesAllowedToolsChoiceSchema = z.looseObject({
  type: z.literal('allowed_tools'),
  mode: z.enum(['auto', 'required']),
  tools: z.array(z.record(z.string(), z.unknown())),
});

const toolChoiceObjectSchema = openTaggedUnion({
  function: responsesFunctionToolChoiceSchema,
  allowed_tools: responsesAllowedToolsChoiceSchema,
});

export const responsesToolChoiceSchema = z.union([z.enum(['none', 'auto', 'required']), toolChoiceObjectSchema]);
export type ResponsesToolChoice = z.output<typeof responsesToolChoiceSchema>;

export const responsesTextFormatSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    name: z.string().min(1),
    schema: z.record(z.string(), z.unknown()),
    strict: z.boolean().nullish(),
    description: z.string().nullish(),
  }),
]);
export type ResponsesTextFormat = z.output<typeof responsesTextFormatSchema>;

export const responsesTextConfigSchema = z.looseObject({
  format: responsesTextFormatSchema.nullish(),
  verbosity: z.string().nullish(),
});

/** `effort` is open (OpenAI adds levels: none, minimal, …, xhigh, max); `summary` is the documented set. */
export const responsesReasoningConfigSchema = z.looseObject({
  effort: z.string().nullish(),
  summary: z.enum(['auto', 'concise', 'detailed']).nullish(),
  generate_summary: z.enum(['auto', 'concise', 'detailed']).nullish(),
});

// ---------------------------------------------------------------------------
// Requests

export const responsesRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: stringOrArray(inputItemsSchema).nullish(),
  instructions: z.string().nullish(),
  stream: z.boolean().nullish(),
  max_output_tokens: z.number().int().min(16).max(MAX_OUTPUT_TOKENS).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  previous_response_id: z.string().nullish(),
  tools: z.array(responsesToolSchema).nullish(),
  tool_choice: responsesToolChoiceSchema.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  text: responsesTextConfigSchema.nullish(),
  reasoning: responsesReasoningConfigSchema.nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
  store: z.boolean().nullish(),
  user: z.string().nullish(),
  safety_identifier: z.string().nullish(),
});
export type ResponsesRequest = z.output<typeof responsesRequestSchema>;

/** `POST /v1/responses/compact` (SPEC.md): non-streaming; `input` may be null. */
export const compactRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: stringOrArray(inputItemsSchema).nullish(),
  instructions: z.string().nullish(),
  previous_response_id: z.string().nullish(),
  tools: z.array(responsesToolSchema).nullish(),
  reasoning: responsesReasoningConfigSchema.nullish(),
});
export type CompactRequest = z.output<typeof compactRequestSchema>;

/**
 * The request fields a Response object echoes back (PROTOCOLS.md §4). Both
 * a parsed {@link ResponsesRequest} and a hand-built object fit.
 */
export interface ResponsesEchoFields {
  instructions?: string | null;
  tools?: readonly unknown[] | null;
  tool_choice?: unknown;
  temperature?: number | null;
  top_p?: number | null;
  parallel_tool_calls?: boolean | null;
  metadata?: Record<string, unknown> | null;
  previous_response_id?: string | null;
  max_output_tokens?: number | null;
  text?: unknown;
  reasoning?: unknown;
}
