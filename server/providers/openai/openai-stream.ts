/**
 * Chat completion chunks from an OpenAI-format upstream → canonical stream
 * events. Input is the SseParser's events (data-only frames ending with
 * `data: [DONE]`, PROTOCOLS.md §2); the decoder owns all of its state.
 */
import type { CanonicalFinishReason, CanonicalStreamEvent, CanonicalUsage } from '../canonical.js';
import type { StreamDecoder } from '../types.js';
import type { SseEvent } from '../../sse/sse-parser.js';
import { isRecord, readString } from './json-values.js';
import { mapOpenAIFinishReason } from './map-openai-finish-reason.js';
import { mapOpenAIUsage } from './map-openai-usage.js';
import { redactSecrets } from './openai-errors.js';
import { createToolCallId, readArguments, readReasoningText } from './read-openai-delta.js';

interface ToolCallState {
  /** Canonical part index. */
  index: number;
  open: boolean;
}

export class OpenAIChatStreamDecoder implements StreamDecoder {
  /** `waiting` until the first chunk with content; `closed` after `finish` or `error`. */
  private state: 'waiting' | 'streaming' | 'closed' = 'waiting';
  private nextPartIndex = 0;
  private openTextIndex: number | undefined;
  private openThinkingIndex: number | undefined;
  /** Keyed by `tool_calls[].index` (chat counts tool calls only; canonical counts all parts). */
  private readonly toolCalls = new Map<string, ToolCallState>();
  private lastToolCallKey: string | undefined;
  private finishReason: CanonicalFinishReason | undefined;
  private usage: CanonicalUsage | undefined;

  push(event: SseEvent): CanonicalStreamEvent[] {
    if (this.state === 'closed') return [];
    // openai-node v6 ends on any data that starts with [DONE]; do the same.
    if (event.data.startsWith('[DONE]')) return this.close('stop');
    if (event.data.trim() === '') return [];
    let payload: unknown;
    try {
      payload = JSON.parse(event.data);
    } catch {
      return this.fail('The provider sent a stream event that is not valid JSON.');
    }
    if (!isRecord(payload)) return this.fail('The provider sent a stream event that is not a chat completion chunk.');
    // Both SDK rules for in-band errors: a truthy `error` key, or an `event: error` frame (openai-node v7).
    if (payload.error || event.event === 'error') return this.failWith(payload.error ?? payload);
    return this.readChunk(payload);
  }

  /**
   * End of input. A stream cut off before any finish_reason or `[DONE]` closes
   * with the `error` finish reason, so the caller can tell it from a full answer.
   */
  end(): CanonicalStreamEvent[] {
    if (this.state === 'closed') return [];
    return this.close('error');
  }

  private readChunk(chunk: Record<string, unknown>): CanonicalStreamEvent[] {
    const choices = Array.isArray(chunk.choices) ? chunk.choices.filter(isRecord) : [];
    // With n > 1 only the first choice is read: the canonical stream has one.
    const choice = choices.find((candidate) => (candidate.index ?? 0) === 0);
    // Groq sends usage in `x_groq.usage` on the last chunk instead of a usage chunk.
    const usage = mapOpenAIUsage(chunk.usage) ?? (isRecord(chunk.x_groq) ? mapOpenAIUsage(chunk.x_groq.usage) : undefined);
    // Chunks with neither (Azure's leading prompt_filter_results chunk) carry nothing for us.
    // @see https://learn.microsoft.com/en-us/azure/ai-foundry/openai/concepts/content-filter
    if (!choice && !usage) return [];

    const events: CanonicalStreamEvent[] = [];
    if (this.state === 'waiting') {
      this.state = 'streaming';
      events.push({ type: 'start', id: readString(chunk.id) ?? '', model: readString(chunk.model) ?? '' });
    }
    if (choice && this.finishReason === undefined) this.readChoice(choice, events);
    if (usage) {
      this.usage = usage;
      // The usage chunk comes after the finish_reason chunk: only now are the totals known.
      if (this.finishReason !== undefined) events.push(...this.close('stop'));
    }
    return events;
  }

  private readChoice(choice: Record<string, unknown>, events: CanonicalStreamEvent[]): void {
    const delta = isRecord(choice.delta) ? choice.delta : {};
    const reasoning = readReasoningText(delta);
    if (reasoning) this.appendThinking(reasoning, events);
    const content = readString(delta.content);
    if (content) this.appendText(content, events);
    // A refusal is the model's answer; a client in another format should still see it.
    const refusal = readString(delta.refusal);
    if (refusal) this.appendText(refusal, events);
    if (Array.isArray(delta.tool_calls)) {
      for (const call of delta.tool_calls) if (isRecord(call)) this.appendToolCall(call, events);
    }
    const finishReason = readString(choice.finish_reason);
    if (finishReason) {
      this.finishReason = mapOpenAIFinishReason(finishReason);
      events.push(...this.endOpenParts());
    }
  }

  private appendText(text: string, events: CanonicalStreamEvent[]): void {
    if (this.openTextIndex === undefined) {
      events.push(...this.endOpenParts());
      this.openTextIndex = this.nextPartIndex++;
      events.push({ type: 'text-start', index: this.openTextIndex });
    }
    events.push({ type: 'text-delta', index: this.openTextIndex, text });
  }

  private appendThinking(text: string, events: CanonicalStreamEvent[]): void {
    if (this.openThinkingIndex === undefined) {
      events.push(...this.endOpenParts());
      this.openThinkingIndex = this.nextPartIndex++;
      events.push({ type: 'thinking-start', index: this.openThinkingIndex });
    }
    events.push({ type: 'thinking-delta', index: this.openThinkingIndex, text });
  }

  private appendToolCall(call: Record<string, unknown>, events: CanonicalStreamEvent[]): void {
    const fields = isRecord(call.function) ? call.function : {};
    const key = this.readToolCallKey(call);
    let toolCall = this.toolCalls.get(key);
    if (!toolCall) {
      // Text or thinking ends here; other tool calls stay open because OpenAI interleaves their arguments.
      events.push(...this.endTextAndThinking());
      toolCall = { index: this.nextPartIndex++, open: true };
      this.toolCalls.set(key, toolCall);
      events.push({
        type: 'tool-call-start',
        index: toolCall.index,
        id: readString(call.id) || createToolCallId(),
        name: readString(fields.name) ?? '',
      });
    } else if (!toolCall.open) {
      // Text came between this call's fragments and closed it; a canonical part cannot reopen.
      return;
    }
    const argumentsDelta = readArguments(fields.arguments);
    if (argumentsDelta) events.push({ type: 'tool-call-delta', index: toolCall.index, argumentsDelta });
  }

  /**
   * OpenAI numbers tool calls by `index`. A few compatible servers omit it:
   * then a new id starts a call and a fragment without id continues the last.
   */
  private readToolCallKey(call: Record<string, unknown>): string {
    const id = readString(call.id);
    let key: string;
    if (typeof call.index === 'number') key = `index:${call.index}`;
    else if (id) key = `id:${id}`;
    else key = this.lastToolCallKey ?? 'index:0';
    this.lastToolCallKey = key;
    return key;
  }

  private endTextAndThinking(): CanonicalStreamEvent[] {
    const events: CanonicalStreamEvent[] = [];
    if (this.openThinkingIndex !== undefined) events.push({ type: 'part-end', index: this.openThinkingIndex });
    if (this.openTextIndex !== undefined) events.push({ type: 'part-end', index: this.openTextIndex });
    this.openThinkingIndex = undefined;
    this.openTextIndex = undefined;
    return events;
  }

  /** Ends every open part, in the order they started. */
  private endOpenParts(): CanonicalStreamEvent[] {
    const open: number[] = [];
    if (this.openThinkingIndex !== undefined) open.push(this.openThinkingIndex);
    if (this.openTextIndex !== undefined) open.push(this.openTextIndex);
    for (const toolCall of this.toolCalls.values()) {
      if (!toolCall.open) continue;
      toolCall.open = false;
      open.push(toolCall.index);
    }
    this.openThinkingIndex = undefined;
    this.openTextIndex = undefined;
    return open.sort((a, b) => a - b).map((index) => ({ type: 'part-end', index }));
  }

  private close(fallbackReason: CanonicalFinishReason): CanonicalStreamEvent[] {
    if (this.state === 'waiting') return this.fail('The provider ended the stream without an answer.');
    const events = this.endOpenParts();
    events.push({
      type: 'finish',
      finishReason: this.finishReason ?? fallbackReason,
      usage: this.usage ?? { inputTokens: 0, outputTokens: 0 },
    });
    this.state = 'closed';
    return events;
  }

  private failWith(error: unknown): CanonicalStreamEvent[] {
    if (typeof error === 'string' && error !== '') return this.fail(error);
    const message = isRecord(error) ? readString(error.message) : undefined;
    const errorType = isRecord(error) ? (readString(error.type) ?? readString(error.code)) : undefined;
    return this.fail(message || 'The provider reported an error during the stream.', errorType);
  }

  private fail(message: string, errorType?: string): CanonicalStreamEvent[] {
    this.state = 'closed';
    const event: CanonicalStreamEvent = { type: 'error', message: redactSecrets(message) };
    if (errorType !== undefined) event.errorType = errorType;
    return [event];
  }
}
