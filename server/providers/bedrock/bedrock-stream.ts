/**
 * ConverseStream: the `application/vnd.amazon.eventstream` binary framing
 * (bytes → messages) and the stateful translator of its events into
 * canonical stream events.
 *
 * A message is a 12-byte prelude (total length, headers length, prelude
 * CRC32), binary headers, the payload and a message CRC32. We cut the byte
 * stream into whole messages by the prelude's length and leave checksums and
 * header decoding to Smithy's codec. Headers name what a message is:
 * `:message-type` `event` (with `:event-type`), `exception` (with
 * `:exception-type`) or `error` (with `:error-code`, `:error-message`).
 *
 * The transport masks a provider secret in this binary body byte for byte
 * (upstream/secret-redactor.ts); the message checksum then fails, so a stream
 * that would carry a secret ends with an error instead.
 *
 * @see https://docs.aws.amazon.com/transcribe/latest/dg/streaming-setting-up.html#streaming-event-stream
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStreamOutput.html
 */
import { EventStreamCodec, type Message } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import type { CanonicalStreamEvent, CanonicalUsage } from '../canonical.js';
import { UpstreamError } from '../../errors.js';
import { bedrockStreamPayloadSchemas, type BedrockStreamEventType, type BedrockUsageWire } from './bedrock.wire.js';
import { BEDROCK_PROVIDER, fromBedrockStreamException } from './bedrock-errors.js';
import { fromBedrockUsage, stopSequenceOf } from './from-bedrock-response.js';
import { mapBedrockStopReason } from './map-bedrock-stop-reason.js';

/** One decoded eventstream message, as the translator reads it. */
export interface BedrockStreamMessage {
  /** `event`, `exception` or `error`. */
  messageType: string;
  /** `:event-type` of an event, `:exception-type` of an exception, `:error-code` of an error. */
  type: string | undefined;
  /** The payload parsed as JSON (undefined when empty). */
  payload: unknown;
  /** `:error-message` of an `error` message. */
  errorMessage?: string;
}

const PRELUDE_LENGTH = 12;
/** Smallest valid message: prelude plus the message CRC. */
const MINIMUM_MESSAGE_LENGTH = 16;
/** Largest message accepted (the format allows 16 MiB of payload; Bedrock's events are small). */
const MAXIMUM_MESSAGE_LENGTH = 16 * 1024 * 1024 + 128 * 1024;

function unreadable(message: string, cause?: unknown): UpstreamError {
  return new UpstreamError(message, { status: 502, provider: BEDROCK_PROVIDER, retryable: false, cause });
}

function stringHeader(message: Message, name: string): string | undefined {
  const header = message.headers[name];
  return header?.type === 'string' ? header.value : undefined;
}

/** Bytes as they arrive → whole eventstream messages, decoded (checksums checked). */
export class BedrockEventStreamFramer {
  private readonly codec = new EventStreamCodec(toUtf8, fromUtf8);
  private buffered: Buffer = Buffer.alloc(0);

  /** `redact` rewrites each payload's text before it is parsed (the request's signature out of an echo). */
  constructor(private readonly redact: (text: string) => string = (text) => text) {}

  push(bytes: Uint8Array): BedrockStreamMessage[] {
    this.buffered = this.buffered.length === 0 ? Buffer.from(bytes) : Buffer.concat([this.buffered, bytes]);
    const messages: BedrockStreamMessage[] = [];
    while (this.buffered.length >= PRELUDE_LENGTH) {
      const length = this.buffered.readUInt32BE(0);
      if (length < MINIMUM_MESSAGE_LENGTH || length > MAXIMUM_MESSAGE_LENGTH) throw unreadable(`The provider sent an eventstream message of impossible length ${length}.`);
      if (this.buffered.length < length) break;
      const frame = this.buffered.subarray(0, length);
      this.buffered = this.buffered.subarray(length);
      messages.push(this.decode(frame));
    }
    return messages;
  }

  /** End of the bytes: a partial message left over means the stream was cut. */
  end(): void {
    if (this.buffered.length > 0) throw unreadable('The provider stream ended inside an eventstream message.');
  }

  private decode(frame: Uint8Array): BedrockStreamMessage {
    let message: Message;
    try {
      message = this.codec.decode(frame);
    } catch (error) {
      throw unreadable('The provider sent an eventstream message that does not decode.', error);
    }
    const messageType = stringHeader(message, ':message-type') ?? 'event';
    const type =
      messageType === 'exception' ? stringHeader(message, ':exception-type') : messageType === 'error' ? stringHeader(message, ':error-code') : stringHeader(message, ':event-type');
    let payload: unknown;
    if (message.body.byteLength > 0) {
      try {
        payload = JSON.parse(this.redact(Buffer.from(message.body.buffer, message.body.byteOffset, message.body.byteLength).toString('utf8')));
      } catch (error) {
        throw unreadable('The provider sent an eventstream payload that is not JSON.', error);
      }
    }
    const decoded: BedrockStreamMessage = { messageType, type, payload };
    const errorMessage = stringHeader(message, ':error-message');
    if (errorMessage !== undefined) decoded.errorMessage = errorMessage;
    return decoded;
  }
}

/** The UpstreamError an exception or error message stands for. */
export function streamMessageError(message: BedrockStreamMessage, requestId?: string): UpstreamError {
  const payload = message.payload as { message?: unknown; Message?: unknown } | undefined;
  const text = typeof payload?.message === 'string' ? payload.message : typeof payload?.Message === 'string' ? payload.Message : message.errorMessage;
  return fromBedrockStreamException(message.type, text, requestId);
}

interface OpenBlock {
  kind: 'text' | 'thinking' | 'tool_call';
  /** Canonical part index. */
  index: number;
  /** Whether argument text was sent for a tool call (an empty input still reads as `{}`). */
  sawArguments: boolean;
}

/**
 * ConverseStream events → canonical events. Text and reasoning blocks have
 * no `contentBlockStart` (their first delta opens them); tool use blocks do.
 * `messageStop` carries the stop reason and `metadata`, after it, the usage:
 * the canonical `finish` goes out with the usage.
 */
export class BedrockStreamDecoder {
  private readonly blocks = new Map<number, OpenBlock>();
  private nextIndex = 0;
  private started = false;
  private stopReason: string | null | undefined;
  private stopSequence: string | null = null;
  private sawStop = false;
  private usage: BedrockUsageWire | undefined;
  /** A `finish` or `error` went out: later messages are ignored. */
  private done = false;

  constructor(
    private readonly id: string,
    private readonly model: string,
  ) {}

  push(message: BedrockStreamMessage): CanonicalStreamEvent[] {
    if (this.done) return [];
    if (message.messageType !== 'event') {
      this.done = true;
      const error = streamMessageError(message);
      const event: CanonicalStreamEvent = { type: 'error', message: error.message };
      if (error.upstreamType) event.errorType = error.upstreamType;
      return [...this.closeAll(), event];
    }
    const type = message.type;
    if (type === undefined || !(type in bedrockStreamPayloadSchemas)) return [];
    const events: CanonicalStreamEvent[] = [];
    if (!this.started) {
      this.started = true;
      events.push({ type: 'start', id: this.id, model: this.model });
    }
    const schema = bedrockStreamPayloadSchemas[type as BedrockStreamEventType];
    const parsed = schema.safeParse(message.payload ?? {});
    if (!parsed.success) throw unreadable(`The provider sent a ${type} event that is not Bedrock's.`, parsed.error);
    switch (type as BedrockStreamEventType) {
      case 'messageStart':
        break;
      case 'contentBlockStart': {
        const data = parsed.data as { contentBlockIndex: number; start?: { toolUse?: { toolUseId: string; name: string } | null } | null };
        const toolUse = data.start?.toolUse;
        if (toolUse) {
          events.push(...this.closeOthers(data.contentBlockIndex));
          const block = this.open(data.contentBlockIndex, 'tool_call');
          events.push({ type: 'tool-call-start', index: block.index, id: toolUse.toolUseId, name: toolUse.name });
        }
        break;
      }
      case 'contentBlockDelta':
        events.push(...this.delta(parsed.data as { contentBlockIndex: number; delta: Record<string, unknown> }));
        break;
      case 'contentBlockStop': {
        const index = (parsed.data as { contentBlockIndex: number }).contentBlockIndex;
        const block = this.blocks.get(index);
        if (block) {
          this.blocks.delete(index);
          events.push(...this.closeBlock(block));
        }
        break;
      }
      case 'messageStop':
        events.push(...this.closeAll());
        this.sawStop = true;
        this.stopReason = (parsed.data as { stopReason?: string | null }).stopReason;
        this.stopSequence = stopSequenceOf((parsed.data as { additionalModelResponseFields?: unknown }).additionalModelResponseFields);
        break;
      case 'metadata': {
        const usage = (parsed.data as { usage?: BedrockUsageWire | null }).usage;
        if (usage) this.usage = usage;
        if (this.sawStop) {
          this.done = true;
          events.push(this.finish());
        }
        break;
      }
    }
    return events;
  }

  end(): CanonicalStreamEvent[] {
    if (this.done) return [];
    this.done = true;
    const events = this.closeAll();
    if (this.sawStop) {
      // The stop came without its metadata: the answer is whole, its usage unknown (billing estimates it).
      events.push(this.finish());
    } else {
      events.push({ type: 'finish', finishReason: 'error', stopSequence: null, usage: this.currentUsage() });
    }
    return events;
  }

  private finish(): CanonicalStreamEvent {
    return { type: 'finish', finishReason: mapBedrockStopReason(this.stopReason), stopSequence: this.stopSequence, usage: this.currentUsage() };
  }

  private currentUsage(): CanonicalUsage {
    return fromBedrockUsage(this.usage);
  }

  private delta(data: { contentBlockIndex: number; delta: Record<string, unknown> }): CanonicalStreamEvent[] {
    const delta = data.delta as {
      text?: string | null;
      toolUse?: { input?: string | null } | null;
      reasoningContent?: { text?: string | null; signature?: string | null; redactedContent?: string | null } | null;
    };
    const events: CanonicalStreamEvent[] = [];
    let block = this.blocks.get(data.contentBlockIndex);
    if (delta.text != null) {
      if (!block) {
        events.push(...this.closeOthers(data.contentBlockIndex));
        block = this.open(data.contentBlockIndex, 'text');
        events.push({ type: 'text-start', index: block.index });
      }
      if (delta.text !== '' && block.kind === 'text') events.push({ type: 'text-delta', index: block.index, text: delta.text });
    } else if (delta.toolUse != null) {
      if (block?.kind === 'tool_call' && delta.toolUse.input) {
        block.sawArguments = true;
        events.push({ type: 'tool-call-delta', index: block.index, argumentsDelta: delta.toolUse.input });
      }
    } else if (delta.reasoningContent != null) {
      const reasoning = delta.reasoningContent;
      if (!block) {
        events.push(...this.closeOthers(data.contentBlockIndex));
        block = this.open(data.contentBlockIndex, 'thinking');
        const start: CanonicalStreamEvent = { type: 'thinking-start', index: block.index };
        if (reasoning.redactedContent != null) start.redactedData = reasoning.redactedContent;
        events.push(start);
      }
      if (block.kind === 'thinking') {
        if (reasoning.text) events.push({ type: 'thinking-delta', index: block.index, text: reasoning.text });
        if (reasoning.signature) events.push({ type: 'thinking-signature', index: block.index, signature: reasoning.signature });
      }
    }
    return events;
  }

  private open(bedrockIndex: number, kind: OpenBlock['kind']): OpenBlock {
    const block: OpenBlock = { kind, index: this.nextIndex++, sawArguments: false };
    this.blocks.set(bedrockIndex, block);
    return block;
  }

  /** Canonical parts go one at a time: a block left open when another starts ends first. */
  private closeOthers(bedrockIndex: number): CanonicalStreamEvent[] {
    const events: CanonicalStreamEvent[] = [];
    for (const [index, block] of this.blocks) {
      if (index === bedrockIndex) continue;
      this.blocks.delete(index);
      events.push(...this.closeBlock(block));
    }
    return events;
  }

  private closeBlock(block: OpenBlock): CanonicalStreamEvent[] {
    const events: CanonicalStreamEvent[] = [];
    if (block.kind === 'tool_call' && !block.sawArguments) events.push({ type: 'tool-call-delta', index: block.index, argumentsDelta: '{}' });
    events.push({ type: 'part-end', index: block.index });
    return events;
  }

  private closeAll(): CanonicalStreamEvent[] {
    const events: CanonicalStreamEvent[] = [];
    for (const block of this.blocks.values()) events.push(...this.closeBlock(block));
    this.blocks.clear();
    return events;
  }
}
