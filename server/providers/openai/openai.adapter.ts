/**
 * The OpenAI provider kind: chat completions, Responses (passed through) and
 * compaction over HTTP; the media operations are in
 * `openai-<operation>.adapter.ts`. The same adapters serve any upstream that
 * speaks the OpenAI wire (vLLM, Ollama, Groq, Together…).
 *
 * @see https://platform.openai.com/docs/api-reference/chat/create
 */
import { createHttpChatAdapter, type HttpChatDefinition } from '../http-chat.js';
import type { NativeRequestBuilder, ProviderConnection, UpstreamHttpRequest } from '../types.js';
import { fromOpenAIChatResponse } from './from-openai-response.js';
import { parseOpenAIError } from './openai-errors.js';
import { OpenAIChatStreamDecoder } from './openai-stream.js';
import { toOpenAIChatRequest } from './to-openai-request.js';

/** `path` under a provider's base URL (which carries the version prefix). */
export function joinOpenAIUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

/** A JSON POST to `path` carrying `body` as is. */
function postJson(path: string): NativeRequestBuilder {
  return (connection, body) => ({ method: 'POST', url: joinOpenAIUrl(connection.baseUrl, path), headers: buildOpenAIHeaders(connection), body: JSON.stringify(body) });
}

/** The translators of the chat adapter (exported for the adapter's own tests). */
export const openAIChatDefinition: HttpChatDefinition = {
  native: { chat: postJson('/chat/completions'), responses: postJson('/responses'), compact: postJson('/responses/compact') },
  buildChatRequest(connection, request) {
    const { body, report } = toOpenAIChatRequest(request);
    const httpRequest: UpstreamHttpRequest = {
      method: 'POST',
      url: joinOpenAIUrl(connection.baseUrl, '/chat/completions'),
      headers: buildOpenAIHeaders(connection),
      body: JSON.stringify(body),
    };
    return { request: httpRequest, report };
  },
  parseChatResponse: fromOpenAIChatResponse,
  createStreamDecoder: () => new OpenAIChatStreamDecoder(),
  parseError: parseOpenAIError,
};

export const openAIChatAdapter = createHttpChatAdapter(openAIChatDefinition);

/**
 * JSON and the bearer key (when the connection has one: local servers often
 * have none), then the connection's own headers. Names are lower-cased so that
 * a configured `Authorization` replaces ours instead of being sent twice.
 */
export function buildOpenAIHeaders(connection: ProviderConnection): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (connection.apiKey) headers.authorization = `Bearer ${connection.apiKey}`;
  for (const [name, value] of Object.entries(connection.headers ?? {})) headers[name.toLowerCase()] = value;
  return headers;
}
