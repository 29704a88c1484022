import { anthropicErrorType } from './providers/anthropic/anthropic-errors.js';
import type { GatewayError } from './errors.js';

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
export { anthropicErrorType };

/** The in-band error frame of a stream whose headers are already sent (PROTOCOLS.md §2–4); the codecs and compat's last resort share it. */
export function renderStreamError(format: 'chat' | 'messages' | 'responses', error: GatewayError): { event?: string; data: unknown } {
  if (format === 'messages') {
    return { event: 'error', data: { type: 'error', error: { type: anthropicErrorType(error.status), message: error.message } } };
  }
  if (format === 'responses') {
    // Flat per the spec, and nested under `error` too: openai-node v6 and openai-python throw only on the nested form.
    return {
      event: 'error',
      data: { type: 'error', code: error.code, message: error.message, param: error.param, sequence_number: 0, error: { type: 'api_error', code: error.code, message: error.message, param: error.param } },
    };
  }
  return { data: { error: { message: error.message, type: openAIErrorType(error.status), param: error.param, code: error.code } } };
}

