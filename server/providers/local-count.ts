/**
 * The local token count of a messages body (o200k tokenizer over system,
 * messages, tools and images): what providers without a count endpoint
 * answer, and what answers when every provider is unavailable.
 */
import type { MessagesRequest } from './anthropic/anthropic.wire.js';
import { fromAnthropicRequest } from './anthropic/from-anthropic-request.js';
import type { CountTokensAdapter } from './types.js';
import { estimateRequestTokens } from './request-tokens.js';

export function estimateMessagesTokens(body: Record<string, unknown>): number {
  const { request } = fromAnthropicRequest({ ...body, max_tokens: 1 } as MessagesRequest);
  return estimateRequestTokens(request);
}

export const localCountTokensAdapter: CountTokensAdapter = {
  countTokens: async (_transport, _connection, body) => estimateMessagesTokens(body),
};
