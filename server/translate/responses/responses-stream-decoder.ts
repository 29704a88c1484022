/**
 * Responses SSE from an upstream → canonical stream events, for providers that
 * speak Responses and for reading usage off a passed-through stream.
 *
 * Parts are numbered in the order they start: each output_text (or refusal)
 * content part is a text part, each reasoning summary entry (or raw
 * reasoning_text part) a thinking part, each function_call item a tool call.
 * Events are typed by `data.type` (the `event:` line is a fallback). Servers
 * that skip the incremental events and only send `output_item.done` with the
 * full item are read too, as are `.done` events that carry text the deltas
 * did not. The terminal event gives the finish; a stream that ends without one
 * finishes with `error` (it was cut off).
 */
import type { CanonicalStreamEvent } from '../../providers/canonical.js';
import type { StreamDecoder } from '../../providers/types.js';
import type { SseEvent } from '../../sse/sse-parser.js';
import { responsesUsageWireSchema } from './responses-object.wire.js';
import {
  fromResponsesOutputItem,
  fromResponsesUsage,
  mapResponsesStatusToFinishReason,
} from './to-responses-response.js';
import { isRecord } from './responses-shared.js';

interface OpenPart {
  index: number;
  kind: 'text' | 'thinking' | 'tool';
  /** Text or arguments received so far. */
  received: string;
  ended: boolean;
}

/**
 * Where a part lives upstream: its output item, and a key unique per part
 * (`<output_index>:<slot>:<content, summary or replay index>`).
 */
interface PartAddress {
  outputIndex: number;
  key: string;
}

function numberField(record: Record<string, unknown>, key: string): number | undefined {
  const value = record[key];
  return typeof value === 'number' ? value : undefined;
}

function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' ? value : undefined;
}

export class ResponsesStreamDecoder implements StreamDecoder {
  private started = false;
  private finished = false;
  private nextIndex = 0;
  private calledTools = false;
  /** Parts by `<output_index>:<kind>:<content or summary index>`. */
  private readonly parts = new Map<string, OpenPart>();
  /** Output indexes whose item already produced canonical parts. */
  private readonly itemsWithParts = new Set<number>();

  push(event: SseEvent): CanonicalStreamEvent[] {
    if (this.finished) return [];
    const text = event.data.trim();
    if (text === '' || text === '[DONE]') return [];
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      return this.failWith('The provider sent a stream event that is not JSON.', 'server_error');
    }
    if (!isRecord(data)) return [];
    const type = stringField(data, 'type') ?? event.event;
    return this.handle(type, data);
  }

  end(): CanonicalStreamEvent[] {
    if (this.finished) return [];
    const out: CanonicalStreamEvent[] = [];
    this.ensureStarted(out, undefined);
    this.closeAll(out);
    this.finished = true;
    out.push({ type: 'finish', finishReason: 'error', usage: { inputTokens: 0, outputTokens: 0 } });
    return out;
  }

  // -------------------------------------------------------------------------

  private handle(type: string | undefined, data: Record<string, unknown>): CanonicalStreamEvent[] {
    const out: CanonicalStreamEvent[] = [];
    const outputIndex = numberField(data, 'output_index') ?? 0;
    const at = (slot: string, indexField?: string): PartAddress => ({
      outputIndex,
      key: `${outputIndex}:${slot}:${indexField === undefined ? 0 : (numberField(data, indexField) ?? 0)}`,
    });
    // Reasoning models may stream raw reasoning as `reasoning_text` content parts.
    const contentSlot = () => (isRecord(data.part) && data.part.type === 'reasoning_text' ? 'thinking' : 'text');
    switch (type) {
      case 'response.created':
      case 'response.in_progress':
      case 'response.queued':
        this.ensureStarted(out, data.response);
        break;
      case 'response.output_item.added':
        if (isRecord(data.item) && data.item.type === 'function_call') {
          const part = this.openPart(out, at('tool'), 'tool', {
            callId: stringField(data.item, 'call_id') ?? stringField(data.item, 'id') ?? '',
            name: stringField(data.item, 'name') ?? '',
          });
          this.appendTo(out, part, stringField(data.item, 'arguments') ?? '');
        } else {
          this.ensureStarted(out, undefined);
        }
        break;
      case 'response.content_part.added': {
        const slot = contentSlot();
        this.openPart(out, at(slot, 'content_index'), slot === 'thinking' ? 'thinking' : 'text');
        break;
      }
      case 'response.content_part.done':
        this.endAt(out, at(contentSlot(), 'content_index'));
        break;
      case 'response.output_text.delta':
      case 'response.refusal.delta':
        this.deltaAt(out, at('text', 'content_index'), 'text', data.delta);
        break;
      case 'response.output_text.done':
        this.doneAt(out, at('text', 'content_index'), 'text', data.text);
        break;
      case 'response.refusal.done':
        this.doneAt(out, at('text', 'content_index'), 'text', data.refusal);
        break;
      case 'response.reasoning_text.delta':
        this.deltaAt(out, at('thinking', 'content_index'), 'thinking', data.delta);
        break;
      case 'response.reasoning_text.done':
        this.doneAt(out, at('thinking', 'content_index'), 'thinking', data.text);
        break;
      case 'response.reasoning_summary_part.added':
        this.openPart(out, at('summary', 'summary_index'), 'thinking');
        break;
      case 'response.reasoning_summary_text.delta':
        this.deltaAt(out, at('summary', 'summary_index'), 'thinking', data.delta);
        break;
      case 'response.reasoning_summary_text.done':
        this.doneAt(out, at('summary', 'summary_index'), 'thinking', data.text);
        break;
      case 'response.reasoning_summary_part.done':
        this.endAt(out, at('summary', 'summary_index'));
        break;
      case 'response.function_call_arguments.delta':
        this.deltaAt(out, at('tool'), 'tool', data.delta);
        break;
      case 'response.function_call_arguments.done':
        this.doneAt(out, at('tool'), 'tool', data.arguments);
        break;
      case 'response.output_item.done':
        this.itemDone(out, outputIndex, data.item);
        break;
      case 'response.completed':
      case 'response.incomplete':
        this.terminal(out, data.response, type === 'response.incomplete' ? 'incomplete' : 'completed');
        break;
      case 'response.failed': {
        const response = isRecord(data.response) ? data.response : {};
        const error = isRecord(response.error) ? response.error : {};
        return this.failWith(
          stringField(error, 'message') ?? 'The provider reported a failed response.',
          stringField(error, 'code'),
          out,
        );
      }
      case 'error': {
        // The spec's flat shape, or the `{error:{…}}` nesting also seen in traffic.
        const error = isRecord(data.error) ? data.error : data;
        return this.failWith(
          stringField(error, 'message') ?? 'The provider reported an error.',
          stringField(error, 'code') ?? stringField(error, 'type'),
          out,
        );
      }
      default:
        break;
    }
    return out;
  }

  private ensureStarted(out: CanonicalStreamEvent[], response: unknown): void {
    if (this.started) return;
    this.started = true;
    const record = isRecord(response) ? response : {};
    out.push({ type: 'start', id: stringField(record, 'id') ?? '', model: stringField(record, 'model') ?? '' });
  }

  private openPart(
    out: CanonicalStreamEvent[],
    address: PartAddress,
    kind: OpenPart['kind'],
    tool?: { callId: string; name: string },
  ): OpenPart {
    const existing = this.parts.get(address.key);
    if (existing) return existing;
    this.ensureStarted(out, undefined);
    this.itemsWithParts.add(address.outputIndex);
    const part: OpenPart = { index: this.nextIndex++, kind, received: '', ended: false };
    this.parts.set(address.key, part);
    if (kind === 'text') out.push({ type: 'text-start', index: part.index });
    else if (kind === 'thinking') out.push({ type: 'thinking-start', index: part.index });
    else {
      this.calledTools = true;
      out.push({ type: 'tool-call-start', index: part.index, id: tool?.callId ?? '', name: tool?.name ?? '' });
    }
    return part;
  }

  private appendTo(out: CanonicalStreamEvent[], part: OpenPart, delta: string): void {
    if (delta === '' || part.ended) return;
    part.received += delta;
    if (part.kind === 'text') out.push({ type: 'text-delta', index: part.index, text: delta });
    else if (part.kind === 'thinking') out.push({ type: 'thinking-delta', index: part.index, text: delta });
    else out.push({ type: 'tool-call-delta', index: part.index, argumentsDelta: delta });
  }

  /** The part at `address`, opened on the spot when a server skipped its `*.added` (not for tool calls: they need a name). */
  private partAt(out: CanonicalStreamEvent[], address: PartAddress, kind: OpenPart['kind']): OpenPart | undefined {
    const part = this.parts.get(address.key);
    if (part || kind === 'tool') return part;
    return this.openPart(out, address, kind);
  }

  private deltaAt(out: CanonicalStreamEvent[], address: PartAddress, kind: OpenPart['kind'], delta: unknown): void {
    if (typeof delta !== 'string') return;
    const part = this.partAt(out, address, kind);
    if (part) this.appendTo(out, part, delta);
  }

  /** A `.done` carries the whole text: send what the deltas did not. */
  private doneAt(out: CanonicalStreamEvent[], address: PartAddress, kind: OpenPart['kind'], full: unknown): void {
    if (typeof full !== 'string') return;
    const part = this.partAt(out, address, kind);
    if (part && full.startsWith(part.received)) this.appendTo(out, part, full.slice(part.received.length));
  }

  private endAt(out: CanonicalStreamEvent[], address: PartAddress): void {
    const part = this.parts.get(address.key);
    if (!part || part.ended) return;
    part.ended = true;
    out.push({ type: 'part-end', index: part.index });
  }

  private itemDone(out: CanonicalStreamEvent[], outputIndex: number, item: unknown): void {
    if (this.itemsWithParts.has(outputIndex)) {
      if (isRecord(item) && item.type === 'function_call') {
        this.doneAt(out, { outputIndex, key: `${outputIndex}:tool:0` }, 'tool', item.arguments);
      }
      const prefix = `${outputIndex}:`;
      for (const key of this.parts.keys()) {
        if (key.startsWith(prefix)) this.endAt(out, { outputIndex, key });
      }
      return;
    }
    // The whole item at once (servers that skip the incremental events): replay it as parts.
    fromResponsesOutputItem(item).forEach((part, position) => {
      const address = { outputIndex, key: `${outputIndex}:replay:${position}` };
      if (part.type === 'text' || part.type === 'thinking') {
        this.appendTo(out, this.openPart(out, address, part.type), part.text);
      } else if (part.type === 'tool_call') {
        this.appendTo(out, this.openPart(out, address, 'tool', { callId: part.id, name: part.name }), part.arguments);
      } else {
        return;
      }
      this.endAt(out, address);
    });
  }

  private closeAll(out: CanonicalStreamEvent[]): void {
    for (const part of this.parts.values()) {
      if (part.ended) continue;
      part.ended = true;
      out.push({ type: 'part-end', index: part.index });
    }
  }

  private terminal(out: CanonicalStreamEvent[], response: unknown, statusOfEvent: string): void {
    this.ensureStarted(out, response);
    this.closeAll(out);
    this.finished = true;
    const record = isRecord(response) ? response : {};
    const details = isRecord(record.incomplete_details) ? record.incomplete_details : {};
    const usage = responsesUsageWireSchema.safeParse(record.usage);
    out.push({
      type: 'finish',
      finishReason: mapResponsesStatusToFinishReason(
        stringField(record, 'status') ?? statusOfEvent,
        stringField(details, 'reason'),
        this.calledTools,
      ),
      usage: fromResponsesUsage(usage.success ? usage.data : undefined),
    });
  }

  private failWith(message: string, errorType: string | undefined, out: CanonicalStreamEvent[] = []): CanonicalStreamEvent[] {
    this.ensureStarted(out, undefined);
    this.finished = true;
    out.push({ type: 'error', message, ...(errorType === undefined ? {} : { errorType }) });
    return out;
  }
}
