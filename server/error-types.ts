/** OpenAI-shape `error.type` per status (the SDKs pick their class from the status alone). */
export function openAIErrorType(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 402) return 'billing_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/** Anthropic error types per status (PROTOCOLS.md §3): one table, the Anthropic adapter's. */
export { anthropicErrorType } from './providers/anthropic/anthropic-errors.js';
