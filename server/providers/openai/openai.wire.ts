/**
 * The OpenAI chat completions wire format: the zod schema of the request (the
 * public validation of `POST /v1/chat/completions`, also imported by compat/
 * and routers/) and TypeScript types of the response and stream chunk.
 *
 * Field names are OpenAI's, exactly. Bounds that SPEC.md sets ("Limits") are
 * enforced; everything else is lenient, and unknown fields are kept so that a
 * same-format request can be passed through with fields we do not model.
 *
 * @see https://platform.openai.com/docs/api-reference/chat/create
 */
import { z } from 'zod';
import { MAX_OUTPUT_TOKENS, MAX_CHOICES } from '../../validation.js';

// ---------------------------------------------------------------------------
// Content parts
// ---------------------------------------------------------------------------

export const chatTextPartSchema = z.looseObject({
  type: z.literal('text'),
  text: z.string(),
});
export type ChatTextPart = z.infer<typeof chatTextPartSchema>;

export const chatImageUrlPartSchema = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({
    url: z.string(),
    detail: z.string().optional(),
  }),
});
export type ChatImageUrlPart = z.infer<typeof chatImageUrlPartSchema>;

const knownPartSchemas = new Map<string, z.ZodType>([
  ['text', chatTextPartSchema],
  ['image_url', chatImageUrlPartSchema],
]);

/**
 * Any content part. `text` and `image_url` parts are checked; other types
 * (`input_audio`, `file`, `refusal`, parts OpenAI adds later) pass as-is.
 *
 * The known types are checked in a refinement rather than a union so that an
 * error names the field at fault (`messages[0].content[1].text`) instead of
 * the whole part; refinement issues are also the kind zod lets surface through
 * the surrounding string-or-array union.
 */
export const chatContentPartSchema = z.looseObject({ type: z.string() }).superRefine((part, context) => {
  const schema = knownPartSchemas.get(part.type);
  if (!schema) return;
  const result = schema.safeParse(part);
  if (result.success) return;
  for (const issue of result.error.issues) {
    context.addIssue({ code: 'custom', message: issue.message, path: issue.path, input: issue.input });
  }
});
export type ChatContentPart = z.infer<typeof chatContentPartSchema>;

/** True for a part the schema checked as a text part. */
export function isChatTextPart(part: ChatContentPart): part is ChatTextPart {
  return part.type === 'text';
}

/** True for a part the schema checked as an image_url part. */
export function isChatImageUrlPart(part: ChatContentPart): part is ChatImageUrlPart {
  return part.type === 'image_url';
}

const contentSchema = z.union([z.string(), z.array(chatContentPartSchema)], {
  error: 'Expected a string or an array of content parts (objects with a string `type`).',
});

// ---------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------

export const chatMessageToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.literal('function', { error: "Only tool calls of type 'function' are supported." }),
  function: z.looseObject({
    name: z.string(),
    arguments: z.string(),
  }),
});
export type ChatMessageToolCall = z.infer<typeof chatMessageToolCallSchema>;

const systemMessageSchema = z.looseObject({
  role: z.literal('system'),
  content: contentSchema,
  name: z.string().optional(),
});

const developerMessageSchema = z.looseObject({
  role: z.literal('developer'),
  content: contentSchema,
  name: z.string().optional(),
});

const userMessageSchema = z.looseObject({
  role: z.literal('user'),
  content: contentSchema,
  name: z.string().optional(),
});

const assistantMessageSchema = z.looseObject({
  role: z.literal('assistant'),
  content: contentSchema.nullish(),
  name: z.string().optional(),
  refusal: z.string().nullish(),
  tool_calls: z.array(chatMessageToolCallSchema).nullish(),
  /** Deprecated single function call, answered by a `function` message. */
  function_call: z.looseObject({ name: z.string(), arguments: z.string() }).nullish(),
});

const toolMessageSchema = z.looseObject({
  role: z.literal('tool'),
  tool_call_id: z.string(),
  content: contentSchema,
});

/** Deprecated answer to a `function_call`; it has a name but no call id. */
const functionMessageSchema = z.looseObject({
  role: z.literal('function'),
  name: z.string(),
  content: z.string().nullable(),
});

export const chatMessageSchema = z.discriminatedUnion('role', [
  systemMessageSchema,
  developerMessageSchema,
  userMessageSchema,
  assistantMessageSchema,
  toolMessageSchema,
  functionMessageSchema,
]);
export type ChatMessage = z.infer<typeof chatMessageSchema>;
export type ChatAssistantMessage = z.infer<typeof assistantMessageSchema>;

// ---------------------------------------------------------------------------
// Tools, tool choice, response format
// ---------------------------------------------------------------------------

/** OpenAI's rule for function names. */
const functionNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

export const chatFunctionDefinitionSchema = z.looseObject({
  name: z.string().regex(functionNamePattern, 'Function names are 1 to 64 characters of a-z, A-Z, 0-9, _ and -.'),
  description: z.string().optional(),
  parameters: z.record(z.string(), z.unknown()).optional(),
  strict: z.boolean().nullish(),
});
export type ChatFunctionDefinition = z.infer<typeof chatFunctionDefinitionSchema>;

export const chatToolSchema = z.looseObject({
  type: z.literal('function', { error: "Only tools of type 'function' are supported." }),
  function: chatFunctionDefinitionSchema,
});
export type ChatTool = z.infer<typeof chatToolSchema>;

const namedToolChoiceSchema = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({ name: z.string() }),
});

/** Accepted leniently: the gateway can only approximate it (see from-openai-request.ts). */
const allowedToolsChoiceSchema = z.looseObject({
  type: z.literal('allowed_tools'),
  allowed_tools: z
    .looseObject({
      mode: z.string().optional(),
      tools: z.array(z.looseObject({ function: z.looseObject({ name: z.string() }).optional() })).optional(),
    })
    .optional(),
});

export const chatToolChoiceSchema = z.union(
  [
    z.enum(['auto', 'none', 'required']),
    z.discriminatedUnion('type', [namedToolChoiceSchema, allowedToolsChoiceSchema]),
  ],
  {
    error:
      "Expected 'auto', 'none', 'required', {type:'function',function:{name}} or {type:'allowed_tools',allowed_tools:{...}}.",
  },
);
export type ChatToolChoice = z.infer<typeof chatToolChoiceSchema>;

export const chatResponseFormatSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    json_schema: z.looseObject({
      name: z.string(),
      description: z.string().optional(),
      schema: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullish(),
    }),
  }),
]);
export type ChatResponseFormat = z.infer<typeof chatResponseFormatSchema>;

/** Deprecated `function_call` request parameter. */
const legacyFunctionCallSchema = z.union([z.enum(['auto', 'none']), z.looseObject({ name: z.string() })], {
  error: "Expected 'auto', 'none' or {name}.",
});

// ---------------------------------------------------------------------------
// Request
// ---------------------------------------------------------------------------

/**
 * `POST /v1/chat/completions` body. Optional parameters accept `null` as
 * "not given", as OpenAI does. Unknown top-level fields are kept.
 */
export const chatCompletionRequestSchema = z.looseObject({
  model: z.string().min(1, 'The model is required.'),
  messages: z.array(chatMessageSchema).min(1, 'At least one message is required.'),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  stop: z
    .union([z.string(), z.array(z.string()).max(4)], { error: 'Expected a string or an array of at most 4 strings.' })
    .nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  max_tokens: z.int().min(1).max(MAX_OUTPUT_TOKENS).nullish(),
  max_completion_tokens: z.int().min(1).max(MAX_OUTPUT_TOKENS).nullish(),
  /** Choices per request; the hold covers every one. */
  n: z.int().min(1).max(MAX_CHOICES).nullish(),
  seed: z.int().nullish(),
  tools: z.array(chatToolSchema).nullish(),
  tool_choice: chatToolChoiceSchema.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  response_format: chatResponseFormatSchema.nullish(),
  reasoning_effort: z.enum(['minimal', 'low', 'medium', 'high']).nullish(),
  user: z.string().nullish(),
  safety_identifier: z.string().nullish(),
  functions: z.array(chatFunctionDefinitionSchema).nullish(),
  function_call: legacyFunctionCallSchema.nullish(),
});
export type ChatCompletionRequest = z.infer<typeof chatCompletionRequestSchema>;

// ---------------------------------------------------------------------------
// Response and stream chunk (what we send and what upstreams send us)
// ---------------------------------------------------------------------------

export type ChatFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'function_call';

export interface ChatCompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number; [key: string]: unknown };
  completion_tokens_details?: { reasoning_tokens?: number; [key: string]: unknown };
}

export interface ChatCompletionMessage {
  role: 'assistant';
  content: string | null;
  refusal: string | null;
  tool_calls?: ChatMessageToolCall[];
  /** Non-standard (DeepSeek and others); only sent when the caller asks for it. */
  reasoning_content?: string;
}

export interface ChatCompletionChoice {
  index: number;
  message: ChatCompletionMessage;
  logprobs: null;
  finish_reason: ChatFinishReason;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: ChatCompletionChoice[];
  usage: ChatCompletionUsage;
}

export interface ChatCompletionChunkToolCall {
  index: number;
  id?: string;
  type?: 'function';
  function?: { name?: string; arguments?: string };
}

export interface ChatCompletionChunkDelta {
  role?: 'assistant';
  content?: string | null;
  refusal?: string | null;
  /** Non-standard (DeepSeek and others); only sent when the caller asks for it. */
  reasoning_content?: string;
  tool_calls?: ChatCompletionChunkToolCall[];
}

export interface ChatCompletionChunkChoice {
  index: number;
  delta: ChatCompletionChunkDelta;
  logprobs: null;
  finish_reason: ChatFinishReason | null;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: ChatCompletionChunkChoice[];
  /** `null` on every chunk but the last when the client asked for usage; absent otherwise. */
  usage?: ChatCompletionUsage | null;
}

/** The in-band error payload of a chat stream (PROTOCOLS.md §2), sent instead of a chunk. */
export interface ChatStreamErrorPayload {
  error: { message: string; type: 'server_error'; param: null; code: null };
}

/** The OpenAI error body (PROTOCOLS.md §5); all four keys are present, `param` and `code` may be null. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}
