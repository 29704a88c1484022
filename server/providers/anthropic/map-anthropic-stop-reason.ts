import type { CanonicalFinishReason } from '../canonical.js';
import type { AnthropicStopReason } from './anthropic.wire.js';

/**
 * Anthropic `stop_reason` → canonical finish reason. A missing or future
 * reason reads as a natural stop.
 *
 * @see https://platform.claude.com/docs/en/api/handling-stop-reasons
 */
export function mapAnthropicStopReason(reason: string | null | undefined): CanonicalFinishReason {
  switch (reason) {
    case 'end_turn':
      return 'stop';
    case 'stop_sequence':
      return 'stop_sequence';
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    case 'pause_turn':
      return 'pause';
    default:
      return 'stop';
  }
}

/**
 * Canonical finish reason → Anthropic `stop_reason`. Anthropic has no error
 * reason: a failed generation is reported as an error, so `error` here only
 * marks an answer that ended early and reads as `end_turn`.
 *
 * @see https://platform.claude.com/docs/en/api/handling-stop-reasons
 */
export function toAnthropicStopReason(reason: CanonicalFinishReason): AnthropicStopReason {
  switch (reason) {
    case 'stop':
      return 'end_turn';
    case 'stop_sequence':
      return 'stop_sequence';
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    case 'pause':
      return 'pause_turn';
    case 'error':
      return 'end_turn';
  }
}
