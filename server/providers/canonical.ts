/**
 * Canonical types shared by every format bridge and provider adapter.
 *
 * A client request in any chat format (chat completions, messages, responses)
 * is decoded into a {@link CanonicalRequest}; a provider adapter encodes that
 * into its own wire format, and decodes its answer into a
 * {@link CanonicalResponse} or a sequence of {@link CanonicalStreamEvent}s,
 * which the client's format encodes back. Field names are camelCase; wire
 * names live only in the `*.wire.ts` files.
 *
 * Same-format traffic does not go through these types (it is passed through
 * with the model name swapped); they are for crossing formats.
 */

/** An image given by URL (http(s) or `data:` URL) or by inline base64 data. */
export type CanonicalImageSource =
  | { kind: 'url'; url: string }
  | { kind: 'base64'; mediaType: string; data: string };

export interface CanonicalTextPart {
  type: 'text';
  text: string;
  /** Anthropic prompt-caching marker, carried between formats that know it. */
  cacheControl?: Record<string, unknown>;
}

export interface CanonicalImagePart {
  type: 'image';
  source: CanonicalImageSource;
  /** OpenAI `detail` (`auto` | `low` | `high`). */
  detail?: string;
}

/** Model reasoning; `signature` must be echoed back unchanged to Anthropic. */
export interface CanonicalThinkingPart {
  type: 'thinking';
  text: string;
  signature?: string;
  /** Anthropic `redacted_thinking` data, opaque. */
  redactedData?: string;
}

export interface CanonicalToolCallPart {
  type: 'tool_call';
  id: string;
  name: string;
  /** Arguments as a JSON text (as OpenAI sends them); `{}` when empty. */
  arguments: string;
}

/** A content part no bridge understands; kept so same-family targets may carry it, reported otherwise. */
export interface CanonicalUnknownPart {
  type: 'unknown';
  /** Where it came from, e.g. `messages:document` or `chat:input_audio`. */
  origin: string;
  raw: unknown;
}

export type CanonicalUserPart = CanonicalTextPart | CanonicalImagePart | CanonicalUnknownPart;
export type CanonicalAssistantPart =
  | CanonicalTextPart
  | CanonicalThinkingPart
  | CanonicalToolCallPart
  | CanonicalUnknownPart;

export type CanonicalMessage =
  | { role: 'system'; content: CanonicalTextPart[] }
  | { role: 'user'; content: CanonicalUserPart[]; name?: string }
  | { role: 'assistant'; content: CanonicalAssistantPart[]; name?: string }
  | {
      role: 'tool';
      toolCallId: string;
      /** Tool name when the source format knows it (OpenAI legacy `function` role, Responses). */
      name?: string;
      content: CanonicalUserPart[];
      isError?: boolean;
    };

export interface CanonicalTool {
  name: string;
  description?: string;
  /** JSON schema of the arguments (an object schema). */
  parameters: Record<string, unknown>;
  strict?: boolean;
}

export type CanonicalToolChoice =
  | { type: 'auto' }
  | { type: 'none' }
  | { type: 'required' }
  | { type: 'tool'; name: string };

export type CanonicalResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean };

export interface CanonicalReasoning {
  effort?: 'minimal' | 'low' | 'medium' | 'high';
  /** Anthropic `thinking.budget_tokens`. */
  budgetTokens?: number;
  /** Explicitly disabled (`thinking: {type:"disabled"}`). */
  disabled?: boolean;
  /** Responses `reasoning.summary`. */
  summary?: string;
}

export interface CanonicalRequest {
  /** The provider's model id (catalog `upstreamModel`), set by the router before encoding. */
  model: string;
  /** System prompt; system messages in the middle of a conversation stay in `messages`. */
  system?: CanonicalTextPart[];
  messages: CanonicalMessage[];
  maxOutputTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  presencePenalty?: number;
  frequencyPenalty?: number;
  seed?: number;
  tools?: CanonicalTool[];
  toolChoice?: CanonicalToolChoice;
  parallelToolCalls?: boolean;
  responseFormat?: CanonicalResponseFormat;
  reasoning?: CanonicalReasoning;
  /** End-user id (OpenAI `user`/`safety_identifier`, Anthropic `metadata.user_id`). */
  user?: string;
  stream: boolean;
  /**
   * Fields of the client's request that the canonical types do not model, by
   * their wire name; a bridge either maps them or reports them as dropped.
   */
  extra?: Record<string, unknown>;
}

export type CanonicalFinishReason =
  | 'stop'
  | 'length'
  | 'tool_calls'
  | 'content_filter'
  | 'stop_sequence'
  | 'pause'
  | 'error';

export interface CanonicalUsage {
  /** Full prompt size, cached tokens included. */
  inputTokens: number;
  outputTokens: number;
  /** Part of `inputTokens` read from the provider's cache. */
  cachedInputTokens?: number;
  /** Part of `inputTokens` written to the provider's cache. */
  cacheWriteInputTokens?: number;
  /** Part of `outputTokens` spent on reasoning. */
  reasoningTokens?: number;
}

export interface CanonicalResponse {
  /** Provider's id, when the client format has a compatible prefix it may be reused. */
  id: string;
  model: string;
  content: CanonicalAssistantPart[];
  finishReason: CanonicalFinishReason;
  /** The stop sequence that ended generation, when known. */
  stopSequence?: string | null;
  usage: CanonicalUsage;
}

/**
 * One step of a streamed answer. Parts are numbered by `index` in the order
 * they start (all kinds together, as Anthropic counts blocks); a part's
 * deltas come between its `*-start` and `part-end`. Translators emit parts
 * one at a time (a part ends before the next starts) except that providers
 * may interleave tool-call argument deltas, which OpenAI allows.
 */
export type CanonicalStreamEvent =
  | { type: 'start'; id: string; model: string; usage?: Partial<CanonicalUsage> }
  | { type: 'text-start'; index: number }
  | { type: 'text-delta'; index: number; text: string }
  | { type: 'thinking-start'; index: number; redactedData?: string }
  | { type: 'thinking-delta'; index: number; text: string }
  | { type: 'thinking-signature'; index: number; signature: string }
  | { type: 'tool-call-start'; index: number; id: string; name: string }
  | { type: 'tool-call-delta'; index: number; argumentsDelta: string }
  | { type: 'part-end'; index: number }
  | {
      type: 'finish';
      finishReason: CanonicalFinishReason;
      stopSequence?: string | null;
      /** Totals so far (cumulative, not increments). */
      usage: CanonicalUsage;
    }
  /** An in-band failure after the stream started. */
  | { type: 'error'; message: string; errorType?: string };

/** What a bridge could not carry from the client's request to the provider. */
export interface BridgeReport {
  /** Wire names (dotted paths) of parameters dropped. */
  dropped: string[];
  /** Wire names of parameters carried approximately. */
  approximated: string[];
}

export function emptyBridgeReport(): BridgeReport {
  return { dropped: [], approximated: [] };
}

/** How a hosted tool is named in a bridge report (`tools.<name or type>`). */
export function describeHostedTool(tool: unknown): string {
  if (typeof tool !== 'object' || tool === null) return 'unknown';
  const record = tool as Record<string, unknown>;
  if (typeof record.name === 'string') return record.name;
  if (typeof record.type === 'string') return record.type;
  return 'unknown';
}
