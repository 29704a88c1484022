/**
 * Canonical stream events → the SSE events of a messages stream, in the
 * order the Anthropic SDKs require (PROTOCOLS.md §3): `message_start`, then
 * per block `content_block_start`, deltas, `content_block_stop`, then
 * `message_delta` and `message_stop`.
 *
 * Anthropic streams one block at a time, while canonical parts may
 * interleave (parallel OpenAI tool calls). The part that opened first is
 * streamed live; the others are buffered and sent whole, in the order they
 * started, as soon as the blocks before them are closed.
 *
 * @see https://platform.claude.com/docs/en/build-with-claude/streaming
 */
import type { CanonicalStreamEvent, CanonicalUsage } from '../canonical.js';
import type { AnthropicErrorType, AnthropicStreamFrame } from './anthropic.wire.js';
import { toAnthropicStopReason } from './map-anthropic-stop-reason.js';
import { toAnthropicUsage } from './to-anthropic-response.js';

type Delta = Record<string, unknown> & { type: string };

interface PartState {
  /** The `content_block` of its `content_block_start`. */
  block: Record<string, unknown>;
  redacted: boolean;
  /** Deltas received while another block was streaming. */
  pending: Delta[];
  ended: boolean;
  /** Anthropic block index, once the block has been opened. */
  blockIndex?: number;
}

const ANTHROPIC_ERROR_TYPES = new Set<string>([
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'timeout_error',
  'overloaded_error',
]);

/** Delta kinds whose buffered pieces can be joined into one event. */
const JOINABLE: Record<string, string> = { text_delta: 'text', thinking_delta: 'thinking', input_json_delta: 'partial_json' };

export interface MessagesStreamEncoderOptions {
  /** The `msg_…` id shown to the client. */
  id: string;
  /** The model name the client asked for. */
  model: string;
  /** Prompt size known before the provider answers (an estimate), used until the provider reports its own. */
  inputTokens?: number;
}

export class MessagesStreamEncoder {
  private readonly id: string;
  private readonly model: string;
  private currentUsage: CanonicalUsage;
  private started = false;
  private done = false;
  private nextBlockIndex = 0;
  /** Canonical index of the block open on the wire. */
  private current: number | undefined;
  /** Canonical indexes started while another block was open, in start order. */
  private readonly queue: number[] = [];
  private readonly parts = new Map<number, PartState>();

  constructor(options: MessagesStreamEncoderOptions) {
    this.id = options.id;
    this.model = options.model;
    this.currentUsage = { inputTokens: options.inputTokens ?? 0, outputTokens: 0 };
  }

  /** Usage so far; final once the stream has finished. */
  get usage(): CanonicalUsage {
    return { ...this.currentUsage };
  }

  pingFrame(): AnthropicStreamFrame {
    return { event: 'ping', data: { type: 'ping' } };
  }

  push(event: CanonicalStreamEvent): AnthropicStreamFrame[] {
    if (this.done) return [];
    const frames: AnthropicStreamFrame[] = [];
    switch (event.type) {
      case 'start':
        if (!this.started && event.usage) this.currentUsage = { ...this.currentUsage, ...definedOnly(event.usage) };
        this.ensureStarted(frames);
        break;
      case 'text-start':
        this.startPart(frames, event.index, { type: 'text', text: '' });
        break;
      case 'thinking-start':
        if (event.redactedData !== undefined) {
          this.startPart(frames, event.index, { type: 'redacted_thinking', data: event.redactedData }, true);
        } else {
          this.startPart(frames, event.index, { type: 'thinking', thinking: '', signature: '' });
        }
        break;
      case 'tool-call-start':
        this.startPart(frames, event.index, { type: 'tool_use', id: event.id, name: event.name, input: {} });
        break;
      case 'text-delta':
        this.delta(frames, event.index, { type: 'text_delta', text: event.text });
        break;
      case 'thinking-delta':
        this.delta(frames, event.index, { type: 'thinking_delta', thinking: event.text });
        break;
      case 'thinking-signature':
        this.delta(frames, event.index, { type: 'signature_delta', signature: event.signature });
        break;
      case 'tool-call-delta':
        this.delta(frames, event.index, { type: 'input_json_delta', partial_json: event.argumentsDelta });
        break;
      case 'part-end':
        this.endPart(frames, event.index);
        break;
      case 'finish':
        this.currentUsage = { ...event.usage };
        this.finish(frames, event);
        break;
      case 'error': {
        const type = event.errorType !== undefined && ANTHROPIC_ERROR_TYPES.has(event.errorType) ? event.errorType : 'api_error';
        frames.push({
          event: 'error',
          data: { type: 'error', error: { type: type as AnthropicErrorType, message: event.message } },
        });
        this.done = true;
        break;
      }
    }
    return frames;
  }

  /** End of the canonical stream: closes what is open when no `finish` came (stop reason `end_turn`). */
  end(): AnthropicStreamFrame[] {
    if (this.done) return [];
    const frames: AnthropicStreamFrame[] = [];
    this.finish(frames, undefined);
    return frames;
  }

  private ensureStarted(frames: AnthropicStreamFrame[]): void {
    if (this.started) return;
    this.started = true;
    frames.push({
      event: 'message_start',
      data: {
        type: 'message_start',
        message: {
          id: this.id,
          type: 'message',
          role: 'assistant',
          model: this.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: toAnthropicUsage(this.currentUsage),
        },
      },
    });
  }

  private startPart(frames: AnthropicStreamFrame[], index: number, block: Record<string, unknown>, redacted = false): void {
    this.ensureStarted(frames);
    if (this.parts.has(index)) return;
    this.parts.set(index, { block, redacted, pending: [], ended: false });
    if (this.current === undefined && this.queue.length === 0) this.open(frames, index);
    else this.queue.push(index);
  }

  private delta(frames: AnthropicStreamFrame[], index: number, delta: Delta): void {
    const part = this.parts.get(index);
    if (part === undefined || part.redacted || part.ended) return;
    if (index === this.current) {
      frames.push(this.deltaFrame(part, delta));
      return;
    }
    const last = part.pending[part.pending.length - 1];
    const field = JOINABLE[delta.type];
    if (last !== undefined && field !== undefined && last.type === delta.type) {
      last[field] = String(last[field]) + String(delta[field]);
    } else {
      part.pending.push({ ...delta });
    }
  }

  private endPart(frames: AnthropicStreamFrame[], index: number): void {
    const part = this.parts.get(index);
    if (part === undefined || part.ended) return;
    part.ended = true;
    if (index !== this.current) return;
    this.close(frames, part);
    this.current = undefined;
    this.drain(frames, false);
  }

  /** Opens the queued parts in order; with `all`, also those still streaming (at the end of the answer). */
  private drain(frames: AnthropicStreamFrame[], all: boolean): void {
    while (this.current === undefined && this.queue.length > 0) {
      const index = this.queue.shift() as number;
      this.open(frames, index);
      const part = this.parts.get(index) as PartState;
      if (part.ended || all) {
        part.ended = true;
        this.close(frames, part);
        this.current = undefined;
      }
    }
  }

  private open(frames: AnthropicStreamFrame[], index: number): void {
    const part = this.parts.get(index) as PartState;
    part.blockIndex = this.nextBlockIndex++;
    this.current = index;
    frames.push({
      event: 'content_block_start',
      data: { type: 'content_block_start', index: part.blockIndex, content_block: part.block },
    });
    for (const delta of part.pending) frames.push(this.deltaFrame(part, delta));
    part.pending = [];
  }

  private close(frames: AnthropicStreamFrame[], part: PartState): void {
    frames.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index: part.blockIndex } });
  }

  private deltaFrame(part: PartState, delta: Delta): AnthropicStreamFrame {
    return { event: 'content_block_delta', data: { type: 'content_block_delta', index: part.blockIndex, delta } };
  }

  /** Closes every block, then `message_delta` (cumulative usage) and `message_stop`. */
  private finish(frames: AnthropicStreamFrame[], event: Extract<CanonicalStreamEvent, { type: 'finish' }> | undefined): void {
    this.ensureStarted(frames);
    if (this.current !== undefined) {
      const part = this.parts.get(this.current) as PartState;
      part.ended = true;
      this.close(frames, part);
      this.current = undefined;
    }
    this.drain(frames, true);
    frames.push({
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: {
          stop_reason: toAnthropicStopReason(event?.finishReason ?? 'stop'),
          stop_sequence: event?.finishReason === 'stop_sequence' ? (event.stopSequence ?? null) : null,
        },
        usage: toAnthropicUsage(this.currentUsage),
      },
    });
    frames.push({ event: 'message_stop', data: { type: 'message_stop' } });
    this.done = true;
  }
}

function definedOnly(usage: Partial<CanonicalUsage>): Partial<CanonicalUsage> {
  const result: Partial<CanonicalUsage> = {};
  for (const [key, value] of Object.entries(usage) as [keyof CanonicalUsage, number | undefined][]) {
    if (value !== undefined) result[key] = value;
  }
  return result;
}
