/**
 * Relay: a provider's stream to the client, in one loop with one `finally`
 * that settles the request however the stream ends. Two sources feed it:
 * canonical events re-encoded in the client's format (bridges, the mock), or
 * a same-format provider's bytes passed through whole frames at a time while
 * a decoder reads usage off them.
 */
import { eventPart, RawPart, type StreamPart, type TypedEvent } from '../answers.js';
import { ClientAbortedError, GatewayError, toGatewayError, UpstreamError } from '../errors.js';
import type { CanonicalStreamEvent } from '../providers/canonical.js';
import type { StreamDecoder, UpstreamResponse } from '../providers/types.js';
import { formatSseFrame, SseParser, type SseEvent } from '../sse/sse-parser.js';
import { toTransportError } from '../upstream/upstream-client.js';
import type { ClientStreamEncoder } from './codec.js';
import { DeliveryTracker } from './delivery-tracker.js';
import type { Meter } from '../operations/metering.js';
import { redactError } from '../operations/redaction.js';

/** What a client is told when a provider's stream ends without its closing event (no `[DONE]`, no `message_stop`). */
export const INCOMPLETE_STREAM_MESSAGE = 'The provider ended the stream before the answer was complete.';

/** Shared by the relay loop and its source: what was delivered, and the failure the client was told of. */
export interface RelayState {
  readonly tracker: DeliveryTracker;
  failed: GatewayError | undefined;
}

export interface RelayOptions<Event> {
  meter: Meter;
  provider: string;
  /** The prompt estimate, billed when the provider never reports its count. */
  estimatedInput: number;
  /** Provider secrets, kept out of the failure messages the gateway writes itself (the provider's bytes come redacted: upstream/secret-redactor.ts). */
  secrets: readonly string[];
  /** The client's in-format error frames. */
  fail(error: GatewayError): TypedEvent<Event>[];
  /** Called once with what was delivered when the stream completed without failure (e.g. to store the answer). */
  finish(tracker: DeliveryTracker): Promise<void> | void;
  /** Releases the upstream (called in the `finally`, whatever happened). */
  release(): void;
  /** The client went away. */
  signal: AbortSignal;
}

/** A failure while reading a provider's stream, as the client will see it. */
function toStreamFailure(error: unknown, provider: string): GatewayError {
  return error instanceof UpstreamError || error instanceof GatewayError ? toGatewayError(error) : toTransportError(error, provider, 'stream').toGatewayError();
}

/**
 * The relay loop. `source` yields the parts to send and records a failure it
 * answered itself in `state.failed`; a failure thrown out of it becomes the
 * client's in-format error frame. The `finally` settles exactly once.
 */
export async function* relay<Event>(source: (state: RelayState) => AsyncIterable<StreamPart<Event>>, options: RelayOptions<Event>): AsyncGenerator<StreamPart<Event>> {
  const state: RelayState = { tracker: new DeliveryTracker(), failed: undefined };
  let completed = false;
  try {
    for await (const part of source(state)) yield part;
    completed = true;
  } catch (error) {
    if (error instanceof ClientAbortedError || options.signal.aborted) return;
    if (!state.failed) {
      state.failed = redactError(toStreamFailure(error, options.provider), options.secrets);
      yield eventPart(options.fail(state.failed));
    }
    completed = true;
  } finally {
    options.release();
    const { tracker, failed } = state;
    options.meter.settle({
      usage: tracker.finalUsage(options.estimatedInput),
      status: 200,
      errorCode: failed ? failed.code : completed ? null : 'CLIENT_ABORTED',
      aborted: !completed,
      provider: options.provider,
    });
    if (completed && !failed) await options.finish(tracker);
  }
}

/** Canonical events → the client's frames (bridges and the mock). */
export function bridgedSource<Event>(events: AsyncIterable<CanonicalStreamEvent>, encoder: ClientStreamEncoder<Event>) {
  return async function* (state: RelayState): AsyncGenerator<StreamPart<Event>> {
    for await (const event of events) {
      state.tracker.observe(event);
      // After a failure the rest is only read for what it delivered.
      if (state.failed) continue;
      let frames: TypedEvent<Event>[];
      if (event.type === 'error') {
        state.failed = new GatewayError('UPSTREAM_ERROR', event.message);
        frames = encoder.push(event);
      } else if (event.type === 'finish' && event.finishReason === 'error') {
        // The decoders' verdict on a stream cut off before its end: a client must not take it for a whole answer.
        state.failed = new GatewayError('UPSTREAM_ERROR', INCOMPLETE_STREAM_MESSAGE);
        frames = encoder.fail(state.failed);
      } else {
        frames = encoder.push(event);
      }
      if (frames.length > 0) yield eventPart(frames);
    }
    if (!state.failed) {
      const closing = encoder.end();
      if (closing.length > 0) yield eventPart(closing);
    }
  };
}

/**
 * Whether a frame reports a failure, whatever the format: JSON with a truthy
 * `error` (OpenAI `{error:{…}}`, Anthropic `{type:"error",…}`), or a
 * `response.failed` / `error` event. Only frames that mention one of these
 * words are parsed.
 */
export function isErrorFrame(frame: SseEvent): boolean {
  if (frame.event === 'error' || frame.event === 'response.failed') return true;
  if (!frame.data.includes('error') && !frame.data.includes('response.failed')) return false;
  try {
    const payload = JSON.parse(frame.data) as { error?: unknown; type?: unknown } | null;
    if (typeof payload !== 'object' || payload === null) return false;
    return Boolean(payload.error) || payload.type === 'error' || payload.type === 'response.failed';
  } catch {
    return false;
  }
}

/**
 * An error payload every SDK throws on with the provider's own error type:
 * JSON with a truthy `error` object (OpenAI `{error:{…}}`, Anthropic
 * `{type:"error",error:{…}}`). A Responses `error` event has no such object:
 * its stream ends with the gateway's `response.failed` and `error` instead.
 */
function carriesErrorObject(frame: SseEvent): boolean {
  try {
    const payload = JSON.parse(frame.data) as { error?: unknown } | null;
    return typeof payload === 'object' && payload !== null && typeof payload.error === 'object' && payload.error !== null;
  } catch {
    return false;
  }
}

/**
 * Where the last complete SSE frame ends in `bytes` (just after a blank line:
 * two line breaks, each `\n`, `\r` or `\r\n`), or 0 when no frame is complete.
 */
export function endOfLastFrame(bytes: Uint8Array): number {
  let i = bytes.length - 1;
  while (i >= 0) {
    if (bytes[i] !== 10 && bytes[i] !== 13) {
      i--;
      continue;
    }
    const end = i + 1;
    let breaks = 0;
    while (i >= 0 && (bytes[i] === 10 || bytes[i] === 13)) {
      if (bytes[i] === 10 && i > 0 && bytes[i - 1] === 13) i--;
      breaks++;
      i--;
    }
    if (breaks >= 2) return end;
  }
  return 0;
}

export interface NativeSourceOptions<Event> {
  response: UpstreamResponse;
  decoder: StreamDecoder;
  /** Frames to keep when the stream must be re-framed (the rest is withheld); undefined: bytes pass as they came. */
  filter: ((data: string) => boolean) | undefined;
  provider: string;
  fail(error: GatewayError): TypedEvent<Event>[];
}

/**
 * Same-format pass-through: the provider's bytes go to the client as they
 * come, whole frames at a time, while a decoder reads usage and delivered
 * text off them. A frame that is or reports a failure is never relayed: the
 * frames before it go out, then the gateway's own in-format error. The
 * transport has redacted provider secrets from the bytes already.
 */
export function nativeSource<Event>(options: NativeSourceOptions<Event>) {
  const { response, decoder, filter } = options;
  return async function* (state: RelayState): AsyncGenerator<StreamPart<Event>> {
    const parser = new SseParser();
    /** Raw bytes after the last complete frame, held back so an error frame never lands inside a half-sent one. */
    let pending: Uint8Array = new Uint8Array(0);
    /** Frames parsed from `pending` whose bytes are not sent yet. */
    let pendingFrames: SseEvent[] = [];
    const reframe = (frames: readonly SseEvent[]): StreamPart<Event> | undefined => {
      const kept = frames.filter((frame) => !filter || filter(frame.data));
      if (kept.length === 0) return undefined;
      return new RawPart<Event>(Buffer.from(kept.map((frame) => formatSseFrame(frame.data, frame.event)).join('')), kept);
    };
    /**
     * Feeds frames to the decoder; the first that is, or reports, a failure.
     * `own`: the provider's error event in the client's own format (the
     * decoder read it as one), which is relayed so the client
     * sees the provider's error type; any other error-shaped frame is
     * replaced by the gateway's own error.
     */
    const decode = (frames: readonly SseEvent[]): { index: number; error: GatewayError; own: boolean } | undefined => {
      for (let index = 0; index < frames.length; index++) {
        const frame = frames[index]!;
        let decoded: CanonicalStreamEvent[];
        try {
          decoded = decoder.push(frame);
        } catch (error) {
          return { index, error: toStreamFailure(error, options.provider), own: false };
        }
        for (const event of decoded) {
          state.tracker.observe(event);
          if (event.type === 'error') return { index, error: new GatewayError('UPSTREAM_ERROR', event.message), own: carriesErrorObject(frame) };
        }
        if (isErrorFrame(frame)) return { index, error: new GatewayError('UPSTREAM_ERROR', 'The provider reported an error during the answer.'), own: false };
      }
      return undefined;
    };
    const failWith = (frames: readonly SseEvent[], failure: { index: number; error: GatewayError; own: boolean }): StreamPart<Event>[] => {
      state.failed = failure.error;
      const before = reframe(frames.slice(0, failure.index));
      const closing = failure.own ? reframe([frames[failure.index]!]) : eventPart(options.fail(state.failed));
      return [...(before ? [before] : []), ...(closing ? [closing] : [])];
    };
    for await (const chunk of response.body) {
      const frames = parser.push(chunk);
      const failure = decode(frames);
      if (failure) {
        // The frames of `pending` not yet sent come first.
        yield* failWith([...pendingFrames, ...frames], { ...failure, index: failure.index + pendingFrames.length });
        return;
      }
      if (filter) {
        const part = reframe(frames);
        if (part) yield part;
        continue;
      }
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      pendingFrames = pendingFrames.length === 0 ? frames : [...pendingFrames, ...frames];
      const cut = endOfLastFrame(pending);
      if (cut > 0) {
        const bytes = pending.subarray(0, cut);
        const sent = pendingFrames;
        pending = pending.subarray(cut);
        pendingFrames = [];
        yield new RawPart<Event>(bytes, sent);
      }
    }
    const tail = parser.end();
    const failure = decode(tail);
    if (!failure) for (const event of decoder.end()) state.tracker.observe(event);
    if (failure) {
      yield* failWith([...pendingFrames, ...tail], { ...failure, index: failure.index + pendingFrames.length });
    } else if (state.tracker.finishReason === 'error') {
      const part = reframe([...pendingFrames, ...tail]);
      if (part) yield part;
      state.failed = new GatewayError('UPSTREAM_ERROR', INCOMPLETE_STREAM_MESSAGE);
      yield eventPart(options.fail(state.failed));
    } else if (filter) {
      const part = reframe(tail);
      if (part) yield part;
    } else if (pending.length > 0) {
      yield new RawPart<Event>(pending, [...pendingFrames, ...tail]);
    }
  };
}
