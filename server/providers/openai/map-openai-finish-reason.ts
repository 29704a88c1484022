import type { CanonicalFinishReason } from '../canonical.js';
import type { ChatFinishReason } from './openai.wire.js';

/**
 * Chat `finish_reason` → canonical. Unknown values (OpenAI-compatible servers
 * send things like `eos`) and a missing reason read as a natural stop.
 *
 * @see https://platform.openai.com/docs/api-reference/chat/object#chat/object-choices
 */
export function mapOpenAIFinishReason(reason: string | null | undefined): CanonicalFinishReason {
  switch (reason) {
    case 'length':
      return 'length';
    // The deprecated single function call is a tool call by another name.
    case 'tool_calls':
    case 'function_call':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/**
 * Canonical → chat `finish_reason`. Chat has no value for a matched stop
 * sequence, a paused turn or an error, so they read as `stop` (PROTOCOLS.md §7).
 */
export function toOpenAIFinishReason(reason: CanonicalFinishReason): ChatFinishReason {
  switch (reason) {
    case 'length':
      return 'length';
    case 'tool_calls':
      return 'tool_calls';
    case 'content_filter':
      return 'content_filter';
    case 'stop':
    case 'stop_sequence':
    case 'pause':
    case 'error':
      return 'stop';
  }
}
