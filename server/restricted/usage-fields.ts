/**
 * Which fields of a chat-family request the usage check's reader (`usage-texts.ts`) does not
 * read, and why: everything else in a body is read. Each entry must be a field the provider
 * does not show the model as text; `usage-texts.schema.test.ts` checks every string field of
 * the wire schemas against these lists.
 */
import type { ChatFormat } from '../providers/types.js';

/** What the reader counts as unread instead of reading. */
export type UnreadKind = 'image' | 'audio' | 'file';

/**
 * Top-level request options: settings of the generation, never shown to the model as text.
 * (A later field not listed here is read.)
 */
export const TOP_LEVEL_NOT_READ = new Set([
  // Which model, and how the answer is delivered.
  'model', 'stream', 'stream_options', 'store', 'background', 'service_tier', 'include', 'modalities',
  // Output audio settings (voice, format), not audio given to the model.
  'audio',
  // Sampling and length settings.
  'temperature', 'top_p', 'top_k', 'seed', 'n', 'max_tokens', 'max_completion_tokens', 'max_output_tokens', 'max_tool_calls',
  'presence_penalty', 'frequency_penalty', 'logit_bias', 'logprobs', 'top_logprobs', 'verbosity', 'truncation',
  // Stop sequences end the answer; the model is not shown them.
  'stop', 'stop_sequences',
  // Which tool to call (names of tools that are read with the tools), reasoning settings.
  'tool_choice', 'parallel_tool_calls', 'function_call', 'reasoning_effort', 'reasoning', 'thinking',
  // Who is asking, for the provider's abuse tracking; caller metadata; cache keys.
  'user', 'safety_identifier', 'metadata', 'prompt_cache_key', 'prompt_cache_retention',
  // References to state kept by the provider (its conversation is read from our store as `history`).
  'previous_response_id', 'conversation', 'container', 'context_management',
  // Search location and size settings; MCP server connections (URLs and credentials).
  'web_search_options', 'mcp_servers',
]);

/**
 * Keys never read at any depth: discriminators, identifiers, statuses, signatures, opaque or
 * binary payloads, caching hints and credentials. (`data` of a text-typed document source is
 * the document itself and is read; see `usage-texts.ts`.)
 */
export const NOT_READ_FIELDS = new Set([
  // The kind of a part, item, tool or schema node; the author of a turn (kept as the text's role).
  'type', 'role',
  // Identifiers linking calls, results, items, files and containers.
  'id', 'call_id', 'tool_call_id', 'tool_use_id', 'item_id', 'file_id', 'container_id', 'approval_request_id',
  // Item and call states.
  'status',
  // Opaque payloads the provider decrypts or verifies; base64 bytes.
  'signature', 'encrypted_content', 'data', 'file_data',
  // Where an image or a file is fetched from (counted unread where the part is an image or file).
  'image_url', 'file_url',
  // Caching and image-resolution hints, MIME types, the answer-length setting of Responses' `text`.
  'cache_control', 'detail', 'media_type', 'verbosity',
  // Where a remote MCP server is and how to reach it: its address (which may carry credentials), headers, credentials.
  'server_url', 'connector_id', 'authorization', 'headers',
  // The same in the stored conversation (canonical types): ids, opaque reasoning, origin tags, MIME types.
  'toolCallId', 'redactedData', 'cacheControl', 'origin', 'mediaType',
]);

/** Keys holding free-form JSON whose keys the model reads too (schemas, tool inputs): read as JSON text. */
export const JSON_TEXT_FIELDS = new Set(['parameters', 'input_schema', 'schema', 'input', 'arguments']);

/** Part and item types the reader cannot read as text, by what they hold. */
export const MEDIA_KINDS: Record<string, UnreadKind> = {
  image: 'image',
  image_url: 'image',
  input_image: 'image',
  computer_screenshot: 'image',
  image_generation_call: 'image',
  input_audio: 'audio',
  output_audio: 'audio',
  file: 'file',
  input_file: 'file',
  document: 'file',
  container_upload: 'file',
};

/** The text fields of such a part that are read: a transcript, a file name, a document's title and context. */
export const MEDIA_TEXT_FIELDS = new Set(['transcript', 'filename', 'title', 'context', 'caption']);

/** The field holding the conversation, per format. */
export const CONVERSATION_FIELDS: Record<ChatFormat, string> = { chat: 'messages', messages: 'messages', responses: 'input' };

/** The top-level system prompt, per format (chat has none: its system prompt is a message). */
export const SYSTEM_FIELDS: Record<ChatFormat, string | null> = { chat: null, messages: 'system', responses: 'instructions' };
