/**
 * Canonical response → the Anthropic messages response a client receives
 * (PROTOCOLS.md §3).
 */
import type { CanonicalResponse, CanonicalUsage } from '../canonical.js';
import type { AnthropicResponseBlock, AnthropicUsage, MessagesResponse } from './anthropic.wire.js';
import { toAnthropicStopReason } from './map-anthropic-stop-reason.js';

/**
 * Canonical usage → Anthropic usage: `input_tokens` counts uncached input
 * only, so cache reads and writes are taken out of the prompt total.
 */
export function toAnthropicUsage(usage: CanonicalUsage): AnthropicUsage {
  const cacheRead = usage.cachedInputTokens ?? 0;
  const cacheWrite = usage.cacheWriteInputTokens ?? 0;
  return {
    input_tokens: Math.max(0, usage.inputTokens - cacheRead - cacheWrite),
    output_tokens: usage.outputTokens,
    cache_creation_input_tokens: cacheWrite,
    cache_read_input_tokens: cacheRead,
  };
}

/** Tool arguments (JSON text) → Anthropic `input`, which must be an object; unreadable arguments become `{}`. */
export function toToolInputObject(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Falls through to an empty input.
  }
  return {};
}

/** `options.id` should be a `msg_…` id; `options.model` is the model name the client asked for. */
export function toAnthropicResponse(response: CanonicalResponse, options: { id: string; model: string }): MessagesResponse {
  const content: AnthropicResponseBlock[] = [];
  for (const part of response.content) {
    switch (part.type) {
      case 'text':
        content.push({ type: 'text', text: part.text });
        break;
      case 'thinking':
        if (part.redactedData !== undefined) content.push({ type: 'redacted_thinking', data: part.redactedData });
        else content.push({ type: 'thinking', thinking: part.text, signature: part.signature ?? '' });
        break;
      case 'tool_call':
        content.push({ type: 'tool_use', id: part.id, name: part.name, input: toToolInputObject(part.arguments) });
        break;
      case 'unknown': {
        // Only blocks that came from Anthropic (server tool results…) can be shown as they are.
        const raw = part.raw;
        if (part.origin.startsWith('messages:') && typeof raw === 'object' && raw !== null && !Array.isArray(raw)) {
          content.push(raw as AnthropicResponseBlock);
        }
        break;
      }
    }
  }
  const stopReason = toAnthropicStopReason(response.finishReason);
  return {
    id: options.id,
    type: 'message',
    role: 'assistant',
    model: options.model,
    content,
    stop_reason: stopReason,
    stop_sequence: stopReason === 'stop_sequence' ? (response.stopSequence ?? null) : null,
    usage: toAnthropicUsage(response.usage),
  };
}
