import type { CanonicalResponse, CanonicalStreamEvent, CanonicalUsage } from '../providers/canonical.js';
import { countTextTokens } from '../tokenizer.js';

/** Accumulates what a stream delivered, so an aborted or usage-less stream is charged for what was produced. */
export class DeliveryTracker {
  usage: CanonicalUsage | undefined;
  private text = '';
  finishReason: CanonicalResponse['finishReason'] | undefined;
  readonly parts: CanonicalResponse['content'] = [];
  private readonly partByIndex = new Map<number, CanonicalResponse['content'][number]>();
  providerInputTokens: number | undefined;

  observe(event: CanonicalStreamEvent): void {
    switch (event.type) {
      case 'start':
        if (event.usage?.inputTokens) this.providerInputTokens = event.usage.inputTokens;
        break;
      case 'text-start':
        this.addPart(event.index, { type: 'text', text: '' });
        break;
      case 'text-delta': {
        this.text += event.text;
        const part = this.partByIndex.get(event.index) ?? this.addPart(event.index, { type: 'text', text: '' });
        if (part.type === 'text') part.text += event.text;
        break;
      }
      case 'thinking-start':
        this.addPart(event.index, { type: 'thinking', text: '', ...(event.redactedData !== undefined ? { redactedData: event.redactedData } : {}) });
        break;
      case 'thinking-delta': {
        this.text += event.text;
        const part = this.partByIndex.get(event.index);
        if (part?.type === 'thinking') part.text += event.text;
        break;
      }
      case 'thinking-signature': {
        const part = this.partByIndex.get(event.index);
        if (part?.type === 'thinking') part.signature = (part.signature ?? '') + event.signature;
        break;
      }
      case 'tool-call-start':
        this.text += event.name;
        this.addPart(event.index, { type: 'tool_call', id: event.id, name: event.name, arguments: '' });
        break;
      case 'tool-call-delta': {
        this.text += event.argumentsDelta;
        const part = this.partByIndex.get(event.index);
        if (part?.type === 'tool_call') part.arguments += event.argumentsDelta;
        break;
      }
      case 'finish':
        this.usage = event.usage;
        this.finishReason = event.finishReason;
        break;
      default:
        break;
    }
  }

  private addPart(index: number, part: CanonicalResponse['content'][number]): CanonicalResponse['content'][number] {
    this.partByIndex.set(index, part);
    this.parts.push(part);
    return part;
  }

  /** Usage as the provider reported it, or counted from what was delivered. */
  finalUsage(estimatedInput: number): CanonicalUsage {
    if (this.usage && this.finishReason === 'error') {
      // Cut off before the provider's final count: its figures so far (Anthropic's message_start says 1) are provisional.
      const delivered = this.text ? countTextTokens(this.text) : 0;
      return {
        ...this.usage,
        inputTokens: this.usage.inputTokens || (this.providerInputTokens ?? estimatedInput),
        outputTokens: Math.max(this.usage.outputTokens, delivered),
      };
    }
    if (this.usage && (this.usage.outputTokens > 0 || this.usage.inputTokens > 0)) {
      return this.usage.inputTokens > 0 ? this.usage : { ...this.usage, inputTokens: this.providerInputTokens ?? estimatedInput };
    }
    return { inputTokens: this.providerInputTokens ?? estimatedInput, outputTokens: this.text ? countTextTokens(this.text) : 0 };
  }
}

/** The text of an answer, for counting its output when the provider reported no usage. */
export function textOf(response: CanonicalResponse): string {
  let text = '';
  for (const part of response.content) {
    if (part.type === 'text' || part.type === 'thinking') text += part.text;
    else if (part.type === 'tool_call') text += part.name + part.arguments;
  }
  return text;
}

/** Usage as the provider reported it, or counted from the answer when it reported none. */
export function usageOfResponse(response: CanonicalResponse, estimatedInput: number): CanonicalUsage {
  if (response.usage.inputTokens > 0 || response.usage.outputTokens > 0) return response.usage;
  return { inputTokens: estimatedInput, outputTokens: countTextTokens(textOf(response)) };
}
