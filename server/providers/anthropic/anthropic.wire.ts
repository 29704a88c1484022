/**
 * Anthropic Messages wire format: the public request schemas of
 * `POST /v1/messages` and `POST /v1/messages/count_tokens`, and the response
 * and stream-event types we emit (what we read of the provider's answers is
 * `anthropic-answer.wire.ts`). Field names are Anthropic's, exactly.
 *
 * Validation is strict where SPEC.md sets a bound (`max_tokens` ≥ 1, a
 * non-empty `messages`) and on the blocks we translate; everything else is
 * accepted as sent so that pass-through forwards it (unknown block types,
 * hosted tools, new top-level fields).
 *
 * @see https://platform.claude.com/docs/en/api/messages
 */
import { z } from 'zod';
import { MAX_OUTPUT_TOKENS } from '../../validation.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A schema chosen from the value itself. A zod union that fails reports the
 * union's own path; choosing first keeps the path of the field at fault
 * (`messages[0].content[1].text`), which becomes the error's `param`.
 * `pick` returns the schema to apply, or an error message.
 */
function dispatched<T>(pick: (value: unknown) => z.ZodType | string): z.ZodType<T> {
  const schema = z.unknown().superRefine((value, ctx) => {
    const picked = pick(value);
    if (typeof picked === 'string') {
      ctx.addIssue({ code: 'custom', message: picked });
      return;
    }
    const result = picked.safeParse(value);
    if (result.success) return;
    for (const issue of result.error.issues) {
      ctx.addIssue({ code: 'custom', message: issue.message, path: [...issue.path] });
    }
  });
  // The refinement above guarantees the shape T; zod cannot infer it through superRefine.
  return schema as unknown as z.ZodType<T>;
}

/** Unknown block or tool kinds: an object with a string `type`, otherwise as sent. */
const typedObjectSchema = z.looseObject({ type: z.string().min(1) });

/** Picks the schema of a known `type`, or accepts any other typed object. */
function byType(known: Record<string, z.ZodType>, fallback: z.ZodType = typedObjectSchema) {
  return (value: unknown): z.ZodType | string => {
    if (!isRecord(value)) return 'Invalid input: expected object';
    const type = value.type;
    if (typeof type === 'string' && Object.hasOwn(known, type)) return known[type];
    return fallback;
  };
}

function stringOrArray<T>(item: z.ZodType<T>, what: string) {
  const array = z.array(item);
  return dispatched<string | T[]>((value) => {
    if (typeof value === 'string') return z.string();
    if (Array.isArray(value)) return array;
    return `Invalid input: expected a string or an array of ${what}`;
  });
}

// ---------------------------------------------------------------- blocks

export const anthropicCacheControlSchema = z.looseObject({ type: z.string(), ttl: z.string().optional() });
export type AnthropicCacheControl = z.infer<typeof anthropicCacheControlSchema>;

export const anthropicTextBlockSchema = z.looseObject({
  type: z.literal('text'),
  text: z.string(),
  cache_control: anthropicCacheControlSchema.nullish(),
  citations: z.array(z.unknown()).nullish(),
});
export type AnthropicTextBlock = z.infer<typeof anthropicTextBlockSchema>;

export const anthropicImageSourceSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('base64'), media_type: z.string(), data: z.string() }),
  z.looseObject({ type: z.literal('url'), url: z.string() }),
  z.looseObject({ type: z.literal('file'), file_id: z.string() }),
]);
export type AnthropicImageSource = z.infer<typeof anthropicImageSourceSchema>;

export const anthropicImageBlockSchema = z.looseObject({
  type: z.literal('image'),
  source: anthropicImageSourceSchema,
  cache_control: anthropicCacheControlSchema.nullish(),
});
export type AnthropicImageBlock = z.infer<typeof anthropicImageBlockSchema>;

export const anthropicToolUseBlockSchema = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.record(z.string(), z.unknown()),
  cache_control: anthropicCacheControlSchema.nullish(),
});
export type AnthropicToolUseBlock = z.infer<typeof anthropicToolUseBlockSchema>;

export const anthropicThinkingBlockSchema = z.looseObject({
  type: z.literal('thinking'),
  thinking: z.string(),
  signature: z.string(),
});
export type AnthropicThinkingBlock = z.infer<typeof anthropicThinkingBlockSchema>;

export const anthropicRedactedThinkingBlockSchema = z.looseObject({
  type: z.literal('redacted_thinking'),
  data: z.string(),
});
export type AnthropicRedactedThinkingBlock = z.infer<typeof anthropicRedactedThinkingBlockSchema>;

/** A block of a type we do not translate (document, search_result, server_tool_use, …), kept as sent. */
export interface AnthropicOtherBlock {
  type: string;
  [key: string]: unknown;
}

/** Blocks allowed inside `tool_result.content`: text and image checked, others (document, search_result…) as sent. */
export type AnthropicToolResultContentBlock = AnthropicTextBlock | AnthropicImageBlock | AnthropicOtherBlock;

const toolResultContentBlockSchema = dispatched<AnthropicToolResultContentBlock>(
  byType({ text: anthropicTextBlockSchema, image: anthropicImageBlockSchema }),
);

export const anthropicToolResultBlockSchema = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string(),
  content: stringOrArray(toolResultContentBlockSchema, 'content blocks').optional(),
  is_error: z.boolean().optional(),
  cache_control: anthropicCacheControlSchema.nullish(),
});
export type AnthropicToolResultBlock = z.infer<typeof anthropicToolResultBlockSchema>;

export type AnthropicKnownBlock =
  | AnthropicTextBlock
  | AnthropicImageBlock
  | AnthropicToolUseBlock
  | AnthropicToolResultBlock
  | AnthropicThinkingBlock
  | AnthropicRedactedThinkingBlock;

export type AnthropicContentBlock = AnthropicKnownBlock | AnthropicOtherBlock;

const knownBlockSchemas: Record<AnthropicKnownBlock['type'], z.ZodType> = {
  text: anthropicTextBlockSchema,
  image: anthropicImageBlockSchema,
  tool_use: anthropicToolUseBlockSchema,
  tool_result: anthropicToolResultBlockSchema,
  thinking: anthropicThinkingBlockSchema,
  redacted_thinking: anthropicRedactedThinkingBlockSchema,
};

/**
 * The block as its known type, or undefined for other types. Only for blocks
 * that passed {@link messagesRequestSchema}: the known types were checked there.
 */
export function asKnownBlock(block: AnthropicContentBlock): AnthropicKnownBlock | undefined {
  return Object.hasOwn(knownBlockSchemas, block.type) ? (block as AnthropicKnownBlock) : undefined;
}

export const anthropicContentBlockSchema = dispatched<AnthropicContentBlock>(byType(knownBlockSchemas));

// ---------------------------------------------------------------- messages, system

export const anthropicMessageSchema = z.looseObject({
  /** `system` mid-conversation is accepted by 2026 clients and the API. */
  role: z.enum(['user', 'assistant', 'system']),
  content: stringOrArray(anthropicContentBlockSchema, 'content blocks'),
});
export type AnthropicMessage = z.infer<typeof anthropicMessageSchema>;

/** The top-level system prompt: a string or text blocks only. */
export const anthropicSystemSchema = stringOrArray(
  dispatched<AnthropicTextBlock>(byType({ text: anthropicTextBlockSchema }, z.looseObject({ type: z.literal('text') }))),
  'text blocks',
);

// ---------------------------------------------------------------- tools

export const anthropicCustomToolSchema = z.looseObject({
  type: z.literal('custom').optional(),
  name: z.string().min(1),
  description: z.string().optional(),
  input_schema: z.record(z.string(), z.unknown()),
  strict: z.boolean().optional(),
  cache_control: anthropicCacheControlSchema.nullish(),
});
export type AnthropicCustomTool = z.infer<typeof anthropicCustomToolSchema>;

/** Server or hosted tools carry a versioned `type` (`web_search_20250305`, `bash_20250124`…); kept as sent. */
export interface AnthropicHostedTool {
  type: string;
  name?: string;
  [key: string]: unknown;
}

export type AnthropicTool = AnthropicCustomTool | AnthropicHostedTool;

export function isAnthropicCustomTool(tool: AnthropicTool): tool is AnthropicCustomTool {
  return tool.type === undefined || tool.type === 'custom';
}

export const anthropicToolSchema = dispatched<AnthropicTool>((value) => {
  if (!isRecord(value)) return 'Invalid input: expected object';
  const type = value.type;
  if (typeof type === 'string' && type !== 'custom') return typedObjectSchema;
  return anthropicCustomToolSchema;
});

const disableParallel = { disable_parallel_tool_use: z.boolean().optional() };

export const anthropicToolChoiceSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('auto'), ...disableParallel }),
  z.looseObject({ type: z.literal('any'), ...disableParallel }),
  z.looseObject({ type: z.literal('none'), ...disableParallel }),
  z.looseObject({ type: z.literal('tool'), name: z.string().min(1), ...disableParallel }),
]);
export type AnthropicToolChoice = z.infer<typeof anthropicToolChoiceSchema>;

// ---------------------------------------------------------------- thinking, metadata

export const anthropicThinkingEnabledSchema = z.looseObject({
  type: z.literal('enabled'),
  budget_tokens: z.number().int().min(1024),
  display: z.string().nullish(),
});

export type AnthropicThinkingConfig =
  | z.infer<typeof anthropicThinkingEnabledSchema>
  | { type: 'disabled'; [key: string]: unknown }
  | { type: 'adaptive'; display?: string | null; [key: string]: unknown }
  /** Later kinds (`between_tools`…), kept as sent. */
  | { type: string; [key: string]: unknown };

export const anthropicThinkingSchema = dispatched<AnthropicThinkingConfig>(
  byType({
    enabled: anthropicThinkingEnabledSchema,
    disabled: z.looseObject({ type: z.literal('disabled') }),
    adaptive: z.looseObject({ type: z.literal('adaptive'), display: z.string().nullish() }),
  }),
);

export const anthropicMetadataSchema = z.looseObject({ user_id: z.string().nullish() });

// ---------------------------------------------------------------- requests

const modelSchema = z.string().min(1);
const messagesSchema = z.array(anthropicMessageSchema).min(1);

/**
 * `POST /v1/messages`. Unknown top-level fields (output_config, service_tier,
 * container, mcp_servers, context_management…) are kept for pass-through.
 * Optional fields accept `null` as "not given".
 */
export const messagesRequestSchema = z.looseObject({
  model: modelSchema,
  messages: messagesSchema,
  max_tokens: z.number().int().min(1).max(MAX_OUTPUT_TOKENS),
  system: anthropicSystemSchema.nullish(),
  stream: z.boolean().nullish(),
  temperature: z.number().min(0).max(1).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  top_k: z.number().int().min(0).nullish(),
  stop_sequences: z.array(z.string()).nullish(),
  tools: z.array(anthropicToolSchema).nullish(),
  tool_choice: anthropicToolChoiceSchema.nullish(),
  metadata: anthropicMetadataSchema.nullish(),
  thinking: anthropicThinkingSchema.nullish(),
});
export type MessagesRequest = z.infer<typeof messagesRequestSchema>;

/** `POST /v1/messages/count_tokens`: no `max_tokens`; other fields as on `/messages`. */
export const countTokensRequestSchema = z.looseObject({
  model: modelSchema,
  messages: messagesSchema,
  system: anthropicSystemSchema.nullish(),
  tools: z.array(anthropicToolSchema).nullish(),
  tool_choice: anthropicToolChoiceSchema.nullish(),
  thinking: anthropicThinkingSchema.nullish(),
});
export type CountTokensRequest = z.infer<typeof countTokensRequestSchema>;

export interface CountTokensResponse {
  input_tokens: number;
}

// ---------------------------------------------------------------- responses (what we emit)

/** @see https://platform.claude.com/docs/en/api/messages#response-stop-reason */
export type AnthropicStopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'stop_sequence'
  | 'tool_use'
  | 'pause_turn'
  | 'refusal'
  | 'model_context_window_exceeded';

export interface AnthropicUsage {
  /** Uncached input only; the full prompt is input + cache_creation + cache_read. */
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

export type AnthropicResponseBlock =
  | { type: 'text'; text: string }
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'redacted_thinking'; data: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | AnthropicOtherBlock;

/** The non-streaming answer of `POST /v1/messages` (PROTOCOLS.md §3). */
export interface MessagesResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: AnthropicResponseBlock[];
  stop_reason: AnthropicStopReason | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

export type AnthropicStreamEventName =
  | 'message_start'
  | 'content_block_start'
  | 'content_block_delta'
  | 'content_block_stop'
  | 'message_delta'
  | 'message_stop'
  | 'ping'
  | 'error';

/** One SSE frame of a messages stream: `event: <event>` and `data: <data>`, where `data.type === event`. */
export interface AnthropicStreamFrame {
  event: AnthropicStreamEventName;
  data: Record<string, unknown>;
}

export type AnthropicErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
  request_id?: string;
}
