/**
 * The Anthropic provider: Messages API over HTTP, `x-api-key` auth.
 *
 * @see https://platform.claude.com/docs/en/api/messages
 */
import type { ChatProviderAdapter, ProviderConnection, UpstreamHttpRequest } from '../types.js';
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

export const anthropicChatAdapter: ChatProviderAdapter = {
  kind: 'anthropic',
  nativeFormats: ['messages'],
  buildChatRequest(connection, request) {
    const { body, report } = toAnthropicRequest(request);
    return { request: buildAnthropicMessagesRequest(connection, body), report };
  },
  parseChatResponse: fromAnthropicResponse,
  createStreamDecoder: () => new AnthropicStreamDecoder(),
  parseError: parseAnthropicError,
};
