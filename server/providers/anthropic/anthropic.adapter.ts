/**
 * The Anthropic provider: Messages API over HTTP, `x-api-key` auth.
 *
 * @see https://platform.claude.com/docs/en/api/messages
 */
import { UpstreamError } from '../../errors.js';
import { createHttpChatAdapter, type HttpChatDefinition } from '../http-chat.js';
import type { CountTokensAdapter, NativeForwarding, ProviderConnection, UpstreamHttpRequest } from '../types.js';
import { AnthropicStreamDecoder } from './anthropic-stream.js';
import { parseAnthropicError } from './anthropic-errors.js';
import { fromAnthropicResponse } from './from-anthropic-response.js';
import { toAnthropicRequest } from './to-anthropic-request.js';

export const ANTHROPIC_VERSION = '2023-06-01';

/** Headers a messages client may send that are forwarded to the provider (SPEC "POST /messages"). */
export interface AnthropicForwardedHeaders {
  /** `anthropic-version` from the client; ours otherwise. */
  version?: string;
  /** `anthropic-beta` from the client (comma-separated). */
  beta?: string;
}

function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

/**
 * Request headers for an Anthropic upstream. The connection's own headers
 * come last and win (lower-cased, so a configured `Anthropic-Version`
 * replaces ours instead of doubling it).
 */
export function buildAnthropicHeaders(
  connection: ProviderConnection,
  forwarded: AnthropicForwardedHeaders = {},
): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'anthropic-version': forwarded.version ?? ANTHROPIC_VERSION,
  };
  if (forwarded.beta) headers['anthropic-beta'] = forwarded.beta;
  if (connection.apiKey) headers['x-api-key'] = connection.apiKey;
  for (const [name, value] of Object.entries(connection.headers ?? {})) headers[name.toLowerCase()] = value;
  return headers;
}

/** `POST /messages` with a body already in Anthropic's format (pass-through of a messages client). */
export function buildAnthropicMessagesRequest(
  connection: ProviderConnection,
  body: Record<string, unknown>,
  forwarded: AnthropicForwardedHeaders = {},
): UpstreamHttpRequest {
  return {
    method: 'POST',
    url: joinUrl(connection.baseUrl, '/messages'),
    headers: buildAnthropicHeaders(connection, forwarded),
    body: JSON.stringify(body),
  };
}

/**
 * Generation parameters that `count_tokens` refuses (it rejects unknown
 * fields); dropped so a full messages body can be counted.
 */
const NOT_COUNTED_FIELDS = [
  'max_tokens',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'metadata',
  'service_tier',
  'inference_geo',
  'container',
];

/** `POST /messages/count_tokens` (the native count); answers `{input_tokens}`. */
export function buildAnthropicCountTokensRequest(
  connection: ProviderConnection,
  body: Record<string, unknown>,
  forwarded: AnthropicForwardedHeaders = {},
): UpstreamHttpRequest {
  const countBody: Record<string, unknown> = { ...body };
  for (const field of NOT_COUNTED_FIELDS) delete countBody[field];
  return {
    method: 'POST',
    url: joinUrl(connection.baseUrl, '/messages/count_tokens'),
    headers: buildAnthropicHeaders(connection, forwarded),
    body: JSON.stringify(countBody),
  };
}

/**
 * The headers of a messages client that reach the provider (SPEC "POST
 * /messages": version and beta are forwarded): its version, and its betas —
 * all of them, or only those listed when the provider's catalog entry sets
 * `allowedBetas` (a beta can change what a request costs).
 */
function forwardedOf(connection: ProviderConnection, forwarding: NativeForwarding): AnthropicForwardedHeaders {
  const allowed = connection.allowedBetas;
  const requested = (forwarding.headers['anthropic-beta'] ?? '').split(',').map((beta) => beta.trim()).filter(Boolean);
  const betas = !allowed || allowed.includes('*') ? requested : requested.filter((beta) => allowed.includes(beta));
  return { version: forwarding.headers['anthropic-version'], beta: betas.length > 0 ? betas.join(',') : undefined };
}

/** The client's `?beta=true` (the SDK's beta namespace) reaches the provider; no other query parameter does. */
function withQuery(request: UpstreamHttpRequest, query: string): UpstreamHttpRequest {
  return new URLSearchParams(query).get('beta') === 'true' ? { ...request, url: `${request.url}?beta=true` } : request;
}

/** The translators of the chat adapter (exported for the adapter's own tests). */
export const anthropicChatDefinition: HttpChatDefinition = {
  native: {
    messages: (connection, body, forwarding) => withQuery(buildAnthropicMessagesRequest(connection, body, forwardedOf(connection, forwarding)), forwarding.query),
  },
  buildChatRequest(connection, request) {
    const { body, report } = toAnthropicRequest(request);
    return { request: buildAnthropicMessagesRequest(connection, body), report };
  },
  parseChatResponse: fromAnthropicResponse,
  createStreamDecoder: () => new AnthropicStreamDecoder(),
  parseError: parseAnthropicError,
};

export const anthropicChatAdapter = createHttpChatAdapter(anthropicChatDefinition);

/** The provider's own count (`POST /messages/count_tokens`); no retries: a failure falls back to the next deployment or the estimate. */
export const anthropicCountTokensAdapter: CountTokensAdapter = {
  async countTokens(transport, connection, body, forwarding) {
    const request = withQuery(buildAnthropicCountTokensRequest(connection, body, forwardedOf(connection, forwarding)), forwarding.query);
    const response = await transport.send(request, parseAnthropicError);
    const { value } = await transport.readJson(response);
    const count = (value as { input_tokens?: unknown } | null)?.input_tokens;
    if (typeof count !== 'number' || !Number.isSafeInteger(count) || count < 0) {
      throw new UpstreamError('the provider answered without input_tokens', { status: 502, provider: connection.id, retryable: false });
    }
    return count;
  },
};
