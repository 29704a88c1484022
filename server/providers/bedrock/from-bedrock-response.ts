/**
 * Bedrock Converse answer → canonical response.
 */
import type { CanonicalAssistantPart, CanonicalResponse, CanonicalUsage } from '../canonical.js';
import { UpstreamError } from '../../errors.js';
import { bedrockConverseResponseWireSchema, type BedrockUsageWire } from './bedrock.wire.js';
import { BEDROCK_PROVIDER } from './bedrock-errors.js';
import { mapBedrockStopReason } from './map-bedrock-stop-reason.js';

/**
 * Bedrock usage → canonical usage. Like Anthropic, Bedrock counts the
 * uncached prompt in `inputTokens` and reports cache reads and writes apart
 * (`totalTokens` adds all four); the canonical `inputTokens` is the whole prompt.
 *
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_TokenUsage.html
 * @see https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html
 */
export function fromBedrockUsage(usage: BedrockUsageWire | null | undefined): CanonicalUsage {
  const cacheRead = usage?.cacheReadInputTokens ?? 0;
  const cacheWrite = usage?.cacheWriteInputTokens ?? 0;
  return {
    inputTokens: (usage?.inputTokens ?? 0) + cacheRead + cacheWrite,
    outputTokens: usage?.outputTokens ?? 0,
    cachedInputTokens: cacheRead,
    cacheWriteInputTokens: cacheWrite,
  };
}

/** The stop sequence Claude reports in `additionalModelResponseFields` when asked for `/stop_sequence`. */
export function stopSequenceOf(fields: unknown): string | null {
  const value = typeof fields === 'object' && fields !== null ? (fields as { stop_sequence?: unknown }).stop_sequence : undefined;
  return typeof value === 'string' ? value : null;
}

/** A tool input as canonical JSON text (`{}` unless an object). */
export function toArgumentsText(input: unknown): string {
  return typeof input === 'object' && input !== null && !Array.isArray(input) ? JSON.stringify(input) : '{}';
}

/** Bedrock gives no message id: the request id it answered with stands in (`id`), with the model the request named. */
export function fromBedrockResponse(body: unknown, id: string, model: string): CanonicalResponse {
  const parsed = bedrockConverseResponseWireSchema.safeParse(body);
  if (!parsed.success) {
    throw new UpstreamError('The provider answered with a body that is not a Converse response.', {
      status: 502,
      provider: BEDROCK_PROVIDER,
      retryable: false,
      cause: parsed.error,
    });
  }
  const answer = parsed.data;
  const content: CanonicalAssistantPart[] = [];
  for (const block of answer.output.message.content) {
    if (block.text != null) {
      content.push({ type: 'text', text: block.text });
    } else if (block.toolUse != null) {
      content.push({ type: 'tool_call', id: block.toolUse.toolUseId, name: block.toolUse.name, arguments: toArgumentsText(block.toolUse.input) });
    } else if (block.reasoningContent != null) {
      const reasoning = block.reasoningContent;
      if (reasoning.redactedContent != null) {
        content.push({ type: 'thinking', text: '', redactedData: reasoning.redactedContent });
      } else {
        const part: CanonicalAssistantPart = { type: 'thinking', text: reasoning.reasoningText?.text ?? '' };
        if (reasoning.reasoningText?.signature) part.signature = reasoning.reasoningText.signature;
        content.push(part);
      }
    }
    // Other kinds (guard content, citations, later ones) have no canonical form.
  }
  return {
    id,
    model,
    content,
    finishReason: mapBedrockStopReason(answer.stopReason),
    stopSequence: stopSequenceOf(answer.additionalModelResponseFields),
    usage: fromBedrockUsage(answer.usage),
  };
}
