import type { CanonicalUsage } from '../canonical.js';
import type { ChatCompletionUsage } from './openai.wire.js';
import { isRecord } from './json-values.js';

/**
 * A chat `usage` object from an upstream → canonical usage, or undefined when
 * the value is not a usage object (OpenAI sends `"usage": null` on every chunk
 * but the last). `prompt_tokens` already includes cached tokens.
 */
export function mapOpenAIUsage(value: unknown): CanonicalUsage | undefined {
  if (!isRecord(value)) return undefined;
  const usage: CanonicalUsage = {
    inputTokens: readCount(value.prompt_tokens) ?? 0,
    outputTokens: readCount(value.completion_tokens) ?? 0,
  };
  const cached = isRecord(value.prompt_tokens_details) ? readCount(value.prompt_tokens_details.cached_tokens) : undefined;
  if (cached !== undefined) usage.cachedInputTokens = cached;
  const reasoning = isRecord(value.completion_tokens_details)
    ? readCount(value.completion_tokens_details.reasoning_tokens)
    : undefined;
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  return usage;
}

/** Canonical usage → the chat `usage` object, with the details OpenAI always sends. */
export function toOpenAIUsage(usage: CanonicalUsage): ChatCompletionUsage {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cachedInputTokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
  };
}

function readCount(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}
