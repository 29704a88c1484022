/**
 * The OpenAI provider kind: chat completions, Responses (passed through),
 * compaction and images over HTTP. The same adapter serves any upstream that
 * speaks the OpenAI wire (vLLM, Ollama, Groq, Together…).
 *
 * @see https://platform.openai.com/docs/api-reference/chat/create
 */
import { UpstreamError } from '../../errors.js';
import { createHttpChatAdapter, type HttpChatDefinition } from '../http-chat.js';
import type { ImagesAdapter, NativeRequestBuilder, ProviderConnection, UpstreamHttpRequest } from '../types.js';
import { fromOpenAIChatResponse } from './from-openai-response.js';
import { parseOpenAIError } from './openai-errors.js';
import { OpenAIChatStreamDecoder } from './openai-stream.js';
import { toOpenAIChatRequest } from './to-openai-request.js';

function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

/** A JSON POST to `path` carrying `body` as is. */
function postJson(path: string): NativeRequestBuilder {
  return (connection, body) => ({ method: 'POST', url: joinUrl(connection.baseUrl, path), headers: buildOpenAIHeaders(connection), body: JSON.stringify(body) });
}

/** The translators of the chat adapter (exported for the adapter's own tests). */
export const openAIChatDefinition: HttpChatDefinition = {
  native: { chat: postJson('/chat/completions'), responses: postJson('/responses'), compact: postJson('/responses/compact') },
  buildChatRequest(connection, request) {
    const { body, report } = toOpenAIChatRequest(request);
    const httpRequest: UpstreamHttpRequest = {
      method: 'POST',
      url: joinUrl(connection.baseUrl, '/chat/completions'),
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

/** `POST /images/generations`, passed through (the model already the upstream's). */
export const openAIImagesAdapter: ImagesAdapter = {
  async generate(transport, connection, body) {
    const response = await transport.send(postJson('/images/generations')(connection, body, { headers: {}, query: '' }), parseOpenAIError);
    const { value } = await transport.readJson(response);
    const answer = value as { created?: unknown; data?: unknown };
    if (typeof answer !== 'object' || answer === null || !Array.isArray(answer.data)) {
      throw new UpstreamError('the provider answered without image data', { status: 502, provider: connection.id, retryable: false });
    }
    return { ...(answer as Record<string, unknown>), created: typeof answer.created === 'number' ? answer.created : Math.floor(Date.now() / 1000), data: answer.data };
  },
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
