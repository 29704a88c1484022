/**
 * Chat completion body from an OpenAI-format upstream → canonical response.
 * Read leniently: OpenAI-compatible servers differ in small ways (content as
 * parts, arguments as objects, `reasoning_content`), and only a body that is
 * not a chat completion at all is an error.
 */
import type { CanonicalAssistantPart, CanonicalResponse } from '../canonical.js';
import { UpstreamError } from '../../errors.js';
import { isRecord, readString } from './json-values.js';
import { mapOpenAIFinishReason } from './map-openai-finish-reason.js';
import { mapOpenAIUsage } from './map-openai-usage.js';
import { createToolCallId, readArguments, readReasoningText } from './read-openai-delta.js';

export function fromOpenAIChatResponse(body: unknown): CanonicalResponse {
  if (!isRecord(body) || !Array.isArray(body.choices)) throw createUnreadableBodyError(body);
  const choices = body.choices.filter(isRecord);
  // With n > 1 only the first choice is read: the canonical response has one.
  const choice = choices.find((candidate) => (candidate.index ?? 0) === 0) ?? choices[0];
  const message = isRecord(choice?.message) ? choice.message : {};

  const content: CanonicalAssistantPart[] = [];
  const reasoning = readReasoningText(message);
  if (reasoning) content.push({ type: 'thinking', text: reasoning });
  const text = readMessageText(message.content);
  if (text) content.push({ type: 'text', text });
  // A refusal is the model's answer; a client in another format should still see it.
  const refusal = readString(message.refusal);
  if (refusal) content.push({ type: 'text', text: refusal });
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (!isRecord(call) || !isRecord(call.function)) continue;
      content.push({
        type: 'tool_call',
        id: readString(call.id) || createToolCallId(),
        name: readString(call.function.name) ?? '',
        arguments: readArguments(call.function.arguments) || '{}',
      });
    }
  }

  return {
    id: readString(body.id) ?? '',
    model: readString(body.model) ?? '',
    content,
    finishReason: mapOpenAIFinishReason(readString(choice?.finish_reason)),
    usage: mapOpenAIUsage(body.usage) ?? { inputTokens: 0, outputTokens: 0 },
  };
}

/** `content` is a string for OpenAI; some compatible servers answer with text parts. */
function readMessageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (isRecord(part) && part.type === 'text' ? (readString(part.text) ?? '') : ''))
    .join('');
}

function createUnreadableBodyError(body: unknown): UpstreamError {
  // Some OpenAI-compatible servers answer an error with status 200; keep their message, never the body.
  const upstreamMessage = isRecord(body) && isRecord(body.error) ? readString(body.error.message) : undefined;
  return new UpstreamError(
    upstreamMessage
      ? `The provider answered with an error: ${upstreamMessage}`
      : 'The provider answered with a body that is not a chat completion.',
    { status: 502, provider: 'openai', retryable: false },
  );
}
