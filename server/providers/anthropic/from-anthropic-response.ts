/**
 * Anthropic messages response (from the provider) → canonical response.
 */
import type { CanonicalAssistantPart, CanonicalResponse, CanonicalUsage } from '../canonical.js';
import { UpstreamError } from '../../errors.js';
import { anthropicErrorWireSchema, anthropicMessageWireSchema, type AnthropicUsageWire } from './anthropic-answer.wire.js';
import { mapAnthropicStopReason } from './map-anthropic-stop-reason.js';

export const ANTHROPIC_PROVIDER = 'anthropic';

/**
 * Anthropic usage → canonical usage. Anthropic counts uncached input in
 * `input_tokens`; the canonical `inputTokens` is the whole prompt.
 *
 * @see https://platform.claude.com/docs/en/build-with-claude/prompt-caching#tracking-cache-performance
 */
export function fromAnthropicUsage(usage: AnthropicUsageWire | null | undefined): CanonicalUsage {
  const cacheWrite = usage?.cache_creation_input_tokens ?? 0;
  const cacheRead = usage?.cache_read_input_tokens ?? 0;
  const result: CanonicalUsage = {
    inputTokens: (usage?.input_tokens ?? 0) + cacheWrite + cacheRead,
    outputTokens: usage?.output_tokens ?? 0,
    cachedInputTokens: cacheRead,
    cacheWriteInputTokens: cacheWrite,
  };
  const thinking = usage?.output_tokens_details?.thinking_tokens;
  if (thinking != null) result.reasoningTokens = thinking;
  return result;
}

/** A tool input object as canonical JSON text (`{}` when absent). */
export function toArgumentsText(input: unknown): string {
  return typeof input === 'object' && input !== null && !Array.isArray(input) ? JSON.stringify(input) : '{}';
}

export function fromAnthropicResponse(body: unknown): CanonicalResponse {
  const parsed = anthropicMessageWireSchema.safeParse(body);
  if (!parsed.success || (parsed.data.type != null && parsed.data.type !== 'message')) {
    const error = anthropicErrorWireSchema.safeParse(body);
    if (error.success && error.data.type === 'error' && error.data.error?.message) {
      throw new UpstreamError(error.data.error.message, {
        status: 502,
        provider: ANTHROPIC_PROVIDER,
        retryable: false,
        upstreamType: error.data.error.type ?? null,
        upstreamRequestId: error.data.request_id ?? null,
      });
    }
    throw new UpstreamError('The provider answered with a body that is not a messages response.', {
      status: 502,
      provider: ANTHROPIC_PROVIDER,
      retryable: false,
      cause: parsed.success ? undefined : parsed.error,
    });
  }
  const message = parsed.data;

  const content: CanonicalAssistantPart[] = message.content.map((block): CanonicalAssistantPart => {
    switch (block.type) {
      case 'text':
        return { type: 'text', text: block.text ?? '' };
      case 'thinking': {
        const part: CanonicalAssistantPart = { type: 'thinking', text: block.thinking ?? '' };
        if (block.signature != null) part.signature = block.signature;
        return part;
      }
      case 'redacted_thinking':
        return { type: 'thinking', text: '', redactedData: block.data ?? '' };
      case 'tool_use':
        return { type: 'tool_call', id: block.id ?? '', name: block.name ?? '', arguments: toArgumentsText(block.input) };
      default:
        // server_tool_use, web_search_tool_result and later kinds.
        return { type: 'unknown', origin: `messages:${block.type}`, raw: block };
    }
  });

  return {
    id: message.id,
    model: message.model ?? '',
    content,
    finishReason: mapAnthropicStopReason(message.stop_reason),
    stopSequence: message.stop_sequence ?? null,
    usage: fromAnthropicUsage(message.usage),
  };
}
