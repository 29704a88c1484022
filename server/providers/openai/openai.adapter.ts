/**
 * The OpenAI provider: chat completions over HTTP. The same adapter serves
 * any upstream that speaks the chat wire (see openai-compatible/ for the
 * variations).
 *
 * @see https://platform.openai.com/docs/api-reference/chat/create
 */
import type { ChatProviderAdapter, ProviderConnection, UpstreamHttpRequest } from '../types.js';
import { fromOpenAIChatResponse } from './from-openai-response.js';
import { parseOpenAIError } from './openai-errors.js';
import { OpenAIChatStreamDecoder } from './openai-stream.js';
import { toOpenAIChatRequest } from './to-openai-request.js';

export const openAIChatAdapter: ChatProviderAdapter = {
  kind: 'openai',
  nativeFormats: ['chat', 'responses'],
  buildChatRequest(connection, request) {
    const { body, report } = toOpenAIChatRequest(request);
    const httpRequest: UpstreamHttpRequest = {
      method: 'POST',
      url: `${connection.baseUrl.replace(/\/+$/, '')}/chat/completions`,
      headers: buildOpenAIHeaders(connection),
      body: JSON.stringify(body),
    };
    return { request: httpRequest, report };
  },
  parseChatResponse: fromOpenAIChatResponse,
  createStreamDecoder: () => new OpenAIChatStreamDecoder(),
  parseError: parseOpenAIError,
};

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
