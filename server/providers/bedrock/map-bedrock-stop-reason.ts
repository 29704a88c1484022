import type { CanonicalFinishReason } from '../canonical.js';

/**
 * Converse `stopReason` → canonical finish reason. A missing or future reason
 * reads as a natural stop.
 *
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html#API_runtime_Converse_ResponseSyntax
 */
export function mapBedrockStopReason(reason: string | null | undefined): CanonicalFinishReason {
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
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      return 'stop';
  }
}
