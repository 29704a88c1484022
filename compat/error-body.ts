import { GatewayError } from '../server/errors.js';
import { anthropicErrorType, openAIErrorType } from '../server/error-types.js';

export type ErrorFamily = 'openai' | 'anthropic';

export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

/** The error body of a route family (GAPS.md "Errors"); auth errors carry reference_id and timestamp. */
export function renderError(family: ErrorFamily, error: GatewayError, requestId: string): RenderedError {
  const headers: Record<string, string> = { ...error.headers };
  if (error.retryAfter !== undefined) headers['retry-after'] = String(Math.max(0, Math.ceil(error.retryAfter)));
  const extra: Record<string, unknown> = {};
  if (error.isAuthError) {
    extra.reference_id = requestId;
    extra.timestamp = new Date().toISOString();
  }
  if (family === 'anthropic') {
    return {
      status: error.status,
      headers,
      body: {
        type: 'error',
        error: { type: anthropicErrorType(error.status), message: error.message, code: error.code, ...(error.param ? { param: error.param } : {}), ...extra },
        request_id: requestId,
      },
    };
  }
  return {
    status: error.status,
    headers,
    body: { error: { message: error.message, type: openAIErrorType(error.status), param: error.param, code: error.code, ...extra } },
  };
}

export { GatewayError, anthropicErrorType };
export { renderStreamError } from '../server/error-types.js';
