import type { BridgeReport, CanonicalRequest, CanonicalResponse, CanonicalStreamEvent, CanonicalUsage } from '../providers/canonical.js';
import type { ChatFormat, ProviderConnection, StreamDecoder, UpstreamHttpRequest } from '../providers/types.js';
import type { GatewayError } from '../errors.js';
import type { StreamItem } from '../streaming.js';

/** Identity of one answer, fixed before the provider is called. */
export interface AnswerMeta {
  id: string;
  /** The catalog model id the client asked for. */
  model: string;
  created: number;
  /** Prompt estimate, used until the provider reports its own count. */
  inputTokens: number;
}

export interface ClientStreamEncoder {
  push(event: CanonicalStreamEvent): StreamItem[];
  /** Frames closing a stream that ended normally (e.g. `data: [DONE]`). */
  end(): StreamItem[];
  /** An in-format error frame for a failure after the stream started. */
  fail(error: GatewayError): StreamItem[];
}

/**
 * Everything the generation pipeline needs to know about one client format
 * (chat completions, messages, responses): how to read its requests into
 * canonical form, how to answer in it, and how to pass it through to a
 * provider that speaks it natively.
 */
export interface ClientCodec<Body extends Record<string, unknown> = Record<string, unknown>> {
  format: ChatFormat;
  /** Prefix of answer ids (`chatcmpl-`, `msg_`, `resp_`). */
  idPrefix: string;
  decode(body: Body): { request: CanonicalRequest; report: BridgeReport };
  isStream(body: Body): boolean;
  encodeResponse(response: CanonicalResponse, meta: AnswerMeta, body: Body): unknown;
  createEncoder(meta: AnswerMeta, body: Body): ClientStreamEncoder;
  /** The same-format upstream request: the client's body with only the model (and usage reporting) changed. */
  buildNativeRequest(connection: ProviderConnection, body: Body, upstreamModel: string, forwarded: NativeForwarding): UpstreamHttpRequest;
  /** Reads a native JSON answer for billing; `usage` undefined when the provider gave none. */
  readNativeResponse(body: unknown): CanonicalResponse;
  /** A decoder of the native stream, used to read usage and delivered text from passed-through bytes. */
  createNativeDecoder(): StreamDecoder;
  /**
   * Whether a passed-through native stream must be re-framed (e.g. chat without
   * include_usage: the usage chunk the gateway asked for is withheld).
   */
  nativeFrameFilter?(body: Body): ((data: string) => boolean) | undefined;
}

export interface NativeForwarding {
  headers: Readonly<Record<string, string | undefined>>;
  query: string;
}

export type { CanonicalUsage };
