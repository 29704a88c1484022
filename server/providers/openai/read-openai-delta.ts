/** Readers shared by the response and stream translators for fields OpenAI-compatible servers spell differently. */
import { randomUUID } from 'node:crypto';
import { readString } from './json-values.js';

/**
 * Reasoning text of a message or delta. Chat has none; DeepSeek, vLLM and
 * others send `reasoning_content`, OpenRouter and Ollama send `reasoning`.
 * @see https://api-docs.deepseek.com/guides/reasoning_model
 */
export function readReasoningText(message: Record<string, unknown>): string {
  return readString(message.reasoning_content) ?? readString(message.reasoning) ?? '';
}

/** Arguments are a JSON text in chat; some servers send the object itself. */
export function readArguments(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  return JSON.stringify(value);
}

/** For the rare server that omits a tool call's id: clients need one to answer the call. */
export function createToolCallId(): string {
  return `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
}
