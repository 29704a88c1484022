import { z } from 'zod';
import { GatewayError } from '../server/errors.js';
import { anthropicErrorType, openAIErrorType } from '../server/error-types.js';

export type ErrorFamily = 'openai' | 'anthropic';

export interface RenderedError {
  status: number;
  headers: Record<string, string>;
  body: Record<string, unknown>;
}

const authErrorFields = {
  reference_id: z.string().optional().meta({ description: 'On authentication errors: the request id to quote to support.' }),
  timestamp: z.string().optional().meta({ description: 'On authentication errors: when the request was refused (ISO 8601).' }),
};
const codeField = z.string().meta({ description: "The gateway's error code (GAPS.md \"Errors\"), e.g. INVALID_REQUEST, INVALID_KEY, RATE_LIMITED." });

/** The OpenAI family's error body, as `renderError` writes it (for the OpenAPI document). */
export const openAIErrorBodySchema = z
  .object({ error: z.object({ message: z.string(), type: z.string(), param: z.string().nullable().optional(), code: codeField, ...authErrorFields }) })
  .meta({ description: 'The error body of the OpenAI-format routes.' });

/** The Anthropic family's error body (`/v1/messages*`), as `renderError` writes it. */
export const anthropicErrorBodySchema = z
  .object({
    type: z.literal('error'),
    error: z.object({ type: z.string(), message: z.string(), code: codeField, param: z.string().optional(), ...authErrorFields }),
    request_id: z.string(),
  })
  .meta({ description: 'The error body of the Anthropic-format routes (`/v1/messages` and below).' });

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
