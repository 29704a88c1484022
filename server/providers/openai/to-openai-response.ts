/** Canonical response → the chat completion the client receives (PROTOCOLS.md §2). */
import type { CanonicalResponse } from '../canonical.js';
import { toOpenAIFinishReason } from './map-openai-finish-reason.js';
import { toOpenAIUsage } from './map-openai-usage.js';
import type { ChatCompletion, ChatCompletionMessage, ChatMessageToolCall } from './openai.wire.js';

export interface ToOpenAIChatResponseOptions {
  /** `chatcmpl-…` id the gateway gives this answer. */
  id: string;
  /** The model id the client asked for (not the provider's). */
  model: string;
  /** Unix seconds. */
  created: number;
  /**
   * Also send thinking text as the non-standard `message.reasoning_content`
   * (DeepSeek's convention, which many chat UIs display). Off by default:
   * OpenAI never sends it, and thinking is otherwise dropped from chat output.
   */
  includeReasoning?: boolean;
}

export function toOpenAIChatResponse(response: CanonicalResponse, options: ToOpenAIChatResponseOptions): ChatCompletion {
  let text = '';
  let reasoning = '';
  const toolCalls: ChatMessageToolCall[] = [];
  for (const part of response.content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'thinking') reasoning += part.text;
    else if (part.type === 'tool_call') {
      toolCalls.push({ id: part.id, type: 'function', function: { name: part.name, arguments: part.arguments } });
    }
  }
  const message: ChatCompletionMessage = {
    role: 'assistant',
    content: text === '' && toolCalls.length > 0 ? null : text,
    refusal: null,
  };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (options.includeReasoning && reasoning !== '') message.reasoning_content = reasoning;
  return {
    id: options.id,
    object: 'chat.completion',
    created: options.created,
    model: options.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: toOpenAIFinishReason(response.finishReason) }],
    usage: toOpenAIUsage(response.usage),
  };
}
