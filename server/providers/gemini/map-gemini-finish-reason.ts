import type { CanonicalFinishReason } from '../canonical.js';

/**
 * Gemini `finishReason` → canonical finish reason. A turn that called a
 * function ends with `STOP`: the caller passes `calledTool` so that it reads
 * as `tool_calls`, as the other formats say it. Gemini does not say which
 * stop sequence ended a turn, so a stop sequence reads as `stop`.
 *
 * @see https://ai.google.dev/api/generate-content#FinishReason
 */
export function mapGeminiFinishReason(reason: string | null | undefined, calledTool: boolean): CanonicalFinishReason {
  switch (reason) {
    case 'STOP':
    case null:
    case undefined:
      return calledTool ? 'tool_calls' : 'stop';
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
    case 'IMAGE_PROHIBITED_CONTENT':
    case 'IMAGE_RECITATION':
      return 'content_filter';
    case 'MALFORMED_FUNCTION_CALL':
    case 'UNEXPECTED_TOOL_CALL':
    case 'TOO_MANY_TOOL_CALLS':
      return 'error';
    default:
      // LANGUAGE, OTHER, FINISH_REASON_UNSPECIFIED and later reasons: the turn ended.
      return calledTool ? 'tool_calls' : 'stop';
  }
}
