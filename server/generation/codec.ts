import type { TypedEvent } from '../answers.js';
import type { GatewayError } from '../errors.js';
import type { BridgeReport, CanonicalRequest, CanonicalResponse, CanonicalStreamEvent, CanonicalUsage } from '../providers/canonical.js';
import type { ChatFormat, StreamDecoder } from '../providers/types.js';

/** Identity of one answer, fixed before the provider is called. */
export interface AnswerIdentity {
  id: string;
  /** The catalog model id the client asked for. */
  model: string;
  created: number;
  /** Prompt estimate, used until the provider reports its own count. */
  inputTokens: number;
}

export interface ClientStreamEncoder<Event> {
  push(event: CanonicalStreamEvent): TypedEvent<Event>[];
  /** Frames closing a stream that ended normally (e.g. `data: [DONE]`). */
  end(): TypedEvent<Event>[];
  /** An in-format error frame for a failure after the stream started. */
  fail(error: GatewayError): TypedEvent<Event>[];
}

/**
 * Everything the generation pipeline needs to know about one client format
 * (chat completions, messages, responses, compaction): how to read its
 * requests into canonical form, how to answer in it (`Json` and `Event` are
 * its answer and stream event types), and how to pass it through to a
 * provider that speaks it natively.
 */
export interface ClientCodec<Body extends Record<string, unknown>, Json, Event> {
  format: ChatFormat;
  /** The provider request format a pass-through uses (`compact`: native Responses compaction). */
  nativeFormat: ChatFormat | 'compact';
  /** Prefix of answer ids (`chatcmpl-`, `msg_`, `resp_`). */
  idPrefix: string;
  decode(body: Body): { request: CanonicalRequest; report: BridgeReport };
  isStream(body: Body): boolean;
  encodeResponse(response: CanonicalResponse, identity: AnswerIdentity, body: Body): Json;
  createEncoder(identity: AnswerIdentity, body: Body): ClientStreamEncoder<Event>;
  /** The body a same-format provider receives: the client's, with only the model (and usage reporting) changed. */
  nativeBody(body: Body, upstreamModel: string): Record<string, unknown>;
  /** Called when a request is passed through to this provider (before it is sent). */
  onNativeRequest?(providerId: string): void;
  /** Reads a native JSON answer for billing. */
  readNativeResponse(body: unknown): CanonicalResponse;
  /** A decoder of the native stream, used to read usage and delivered text from passed-through bytes. */
  createNativeDecoder(): StreamDecoder;
  /**
   * Whether a passed-through native stream must be re-framed (e.g. chat without
   * include_usage: the usage chunk the gateway asked for is withheld).
   */
  nativeFrameFilter?(body: Body): ((data: string) => boolean) | undefined;
}

export type { CanonicalUsage };
