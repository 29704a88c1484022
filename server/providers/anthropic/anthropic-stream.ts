/**
 * Anthropic messages stream (SSE events from the provider) → canonical stream
 * events. Byte splitting is the SSE parser's business; this translator sees
 * whole events.
 *
 * @see https://platform.claude.com/docs/en/build-with-claude/streaming
 */
import type { CanonicalStreamEvent } from '../canonical.js';
import type { StreamDecoder } from '../types.js';
import type { SseEvent } from '../../sse/sse-parser.js';
import { UpstreamError } from '../../errors.js';
import { anthropicStreamEventWireSchema, type AnthropicUsageWire } from './anthropic-answer.wire.js';
import { ANTHROPIC_PROVIDER, fromAnthropicUsage, toArgumentsText } from './from-anthropic-response.js';
import { mapAnthropicStopReason } from './map-anthropic-stop-reason.js';

const HANDLED_EVENTS = new Set([
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'error',
]);

interface OpenBlock {
  kind: 'text' | 'thinking' | 'tool_call';
  /** Canonical part index: blocks we cannot express (server tool blocks) are skipped, so indexes differ. */
  index: number;
  /** Whether any argument text was sent for a tool call (an empty input must still read as `{}`). */
  sawArguments: boolean;
}

export class AnthropicStreamDecoder implements StreamDecoder {
  /** Open blocks by Anthropic index; `null` marks a block we skip. */
  private readonly blocks = new Map<number, OpenBlock | null>();
  private nextIndex = 0;
  private readonly usage: Required<Pick<AnthropicUsageWire, 'input_tokens' | 'output_tokens'>> & AnthropicUsageWire = {
    input_tokens: 0,
    output_tokens: 0,
  };
  /** A `finish` or `error` went out: later events are ignored. */
  private done = false;

  push(event: SseEvent): CanonicalStreamEvent[] {
    if (this.done || event.data === '') return [];
    let json: unknown;
    try {
      json = JSON.parse(event.data);
    } catch (error) {
      throw this.unreadable(error);
    }
    const type =
      typeof json === 'object' && json !== null && typeof (json as { type?: unknown }).type === 'string'
        ? (json as { type: string }).type
        : event.event;
    if (type === undefined || !HANDLED_EVENTS.has(type)) return [];
    const parsed = anthropicStreamEventWireSchema.safeParse({ ...(json as object), type });
    if (!parsed.success) throw this.unreadable(parsed.error);
    const data = parsed.data;

    switch (data.type) {
      case 'message_start': {
        this.updateUsage(data.message.usage);
        return [
          {
            type: 'start',
            id: data.message.id ?? '',
            model: data.message.model ?? '',
            usage: fromAnthropicUsage(this.usage),
          },
        ];
      }
      case 'content_block_start':
        return this.startBlock(data.index, data.content_block);
      case 'content_block_delta': {
        const block = this.blocks.get(data.index);
        if (!block) return [];
        const delta = data.delta;
        if (delta.type === 'text_delta' && block.kind === 'text' && delta.text) {
          return [{ type: 'text-delta', index: block.index, text: delta.text }];
        }
        if (delta.type === 'thinking_delta' && block.kind === 'thinking' && delta.thinking) {
          return [{ type: 'thinking-delta', index: block.index, text: delta.thinking }];
        }
        if (delta.type === 'signature_delta' && block.kind === 'thinking' && delta.signature) {
          return [{ type: 'thinking-signature', index: block.index, signature: delta.signature }];
        }
        if (delta.type === 'input_json_delta' && block.kind === 'tool_call' && delta.partial_json) {
          block.sawArguments = true;
          return [{ type: 'tool-call-delta', index: block.index, argumentsDelta: delta.partial_json }];
        }
        // citations_delta and later kinds have no canonical form.
        return [];
      }
      case 'content_block_stop': {
        const block = this.blocks.get(data.index);
        this.blocks.delete(data.index);
        return block ? this.closeBlock(block) : [];
      }
      case 'message_delta': {
        this.updateUsage(data.usage);
        const events = this.closeAll();
        events.push({
          type: 'finish',
          finishReason: mapAnthropicStopReason(data.delta?.stop_reason),
          stopSequence: data.delta?.stop_sequence ?? null,
          usage: fromAnthropicUsage(this.usage),
        });
        this.done = true;
        return events;
      }
      case 'error': {
        this.done = true;
        const message = data.error?.message || 'The provider reported an error during the stream.';
        const error: CanonicalStreamEvent = { type: 'error', message };
        if (data.error?.type) error.errorType = data.error.type;
        return [error];
      }
      default:
        // message_stop: the finish went out with message_delta.
        return [];
    }
  }

  end(): CanonicalStreamEvent[] {
    if (this.done) return [];
    this.done = true;
    // The provider stopped without message_delta: the answer is incomplete.
    const events = this.closeAll();
    events.push({ type: 'finish', finishReason: 'error', stopSequence: null, usage: fromAnthropicUsage(this.usage) });
    return events;
  }

  private startBlock(
    anthropicIndex: number,
    block: { type: string; text?: string | null; thinking?: string | null; signature?: string | null; data?: string | null; id?: string | null; name?: string | null; input?: unknown },
  ): CanonicalStreamEvent[] {
    const open = (kind: OpenBlock['kind']): OpenBlock => {
      const state: OpenBlock = { kind, index: this.nextIndex++, sawArguments: false };
      this.blocks.set(anthropicIndex, state);
      return state;
    };
    switch (block.type) {
      case 'text': {
        const { index } = open('text');
        const events: CanonicalStreamEvent[] = [{ type: 'text-start', index }];
        if (block.text) events.push({ type: 'text-delta', index, text: block.text });
        return events;
      }
      case 'thinking': {
        const { index } = open('thinking');
        const events: CanonicalStreamEvent[] = [{ type: 'thinking-start', index }];
        if (block.thinking) events.push({ type: 'thinking-delta', index, text: block.thinking });
        if (block.signature) events.push({ type: 'thinking-signature', index, signature: block.signature });
        return events;
      }
      case 'redacted_thinking': {
        const { index } = open('thinking');
        return [{ type: 'thinking-start', index, redactedData: block.data ?? '' }];
      }
      case 'tool_use': {
        const state = open('tool_call');
        const events: CanonicalStreamEvent[] = [
          { type: 'tool-call-start', index: state.index, id: block.id ?? '', name: block.name ?? '' },
        ];
        // The input normally streams as input_json_delta from `{}`; a non-empty start value is sent whole.
        const initial = toArgumentsText(block.input);
        if (initial !== '{}') {
          state.sawArguments = true;
          events.push({ type: 'tool-call-delta', index: state.index, argumentsDelta: initial });
        }
        return events;
      }
      default:
        // server_tool_use, web_search_tool_result…: no canonical stream form.
        this.blocks.set(anthropicIndex, null);
        return [];
    }
  }

  private closeBlock(block: OpenBlock): CanonicalStreamEvent[] {
    const events: CanonicalStreamEvent[] = [];
    if (block.kind === 'tool_call' && !block.sawArguments) {
      events.push({ type: 'tool-call-delta', index: block.index, argumentsDelta: '{}' });
    }
    events.push({ type: 'part-end', index: block.index });
    return events;
  }

  private closeAll(): CanonicalStreamEvent[] {
    const events: CanonicalStreamEvent[] = [];
    for (const block of this.blocks.values()) if (block) events.push(...this.closeBlock(block));
    this.blocks.clear();
    return events;
  }

  /** Anthropic usage values are cumulative: a field present in an event replaces the previous value. */
  private updateUsage(usage: AnthropicUsageWire | null | undefined): void {
    if (!usage) return;
    if (usage.input_tokens != null) this.usage.input_tokens = usage.input_tokens;
    if (usage.output_tokens != null) this.usage.output_tokens = usage.output_tokens;
    if (usage.cache_creation_input_tokens != null) this.usage.cache_creation_input_tokens = usage.cache_creation_input_tokens;
    if (usage.cache_read_input_tokens != null) this.usage.cache_read_input_tokens = usage.cache_read_input_tokens;
    if (usage.output_tokens_details != null) this.usage.output_tokens_details = usage.output_tokens_details;
  }

  private unreadable(cause: unknown): UpstreamError {
    return new UpstreamError('The provider sent a stream event that is not valid Anthropic JSON.', {
      status: 502,
      provider: ANTHROPIC_PROVIDER,
      retryable: false,
      cause,
    });
  }
}
