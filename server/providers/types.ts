/**
 * The contract between the routing layer and a provider adapter. Adapters are
 * pure translators plus data; the HTTP itself (pool, retries, timeouts, abort)
 * lives in server/upstream/. An adapter imports nothing but the canonical
 * types, these types, the SSE parser and the error classes.
 */
import type { BridgeReport, CanonicalRequest, CanonicalResponse, CanonicalStreamEvent } from './canonical.js';
import type { SseEvent } from '../sse/sse-parser.js';
import type { UpstreamError } from '../errors.js';

/** The three chat wire formats a client may speak. */
export type ChatFormat = 'chat' | 'messages' | 'responses';

/** A provider as configured (secrets already resolved from the environment). */
export interface ProviderConnection {
  /** Provider id from the catalog, e.g. `openai-main`. */
  id: string;
  kind: 'openai' | 'anthropic' | 'mock';
  /** Base URL including the version prefix, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Resolved secret; never logged. */
  apiKey?: string;
  /** Extra headers sent on every request (OpenAI-compatible servers often need some). */
  headers?: Record<string, string>;
}

export interface UpstreamHttpRequest {
  method: 'POST' | 'GET';
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** Stateful translator of one provider stream into canonical events. */
export interface StreamDecoder {
  push(event: SseEvent): CanonicalStreamEvent[];
  /** End of input; emits a closing `finish` if the provider never sent one. */
  end(): CanonicalStreamEvent[];
}

export interface ChatProviderAdapter {
  kind: ProviderConnection['kind'];
  /** Formats this provider speaks natively; a client in one of them is passed through. */
  nativeFormats: readonly ChatFormat[];
  /** Canonical request → provider HTTP request, with what could not be carried. */
  buildChatRequest(connection: ProviderConnection, request: CanonicalRequest): {
    request: UpstreamHttpRequest;
    report: BridgeReport;
  };
  /** Provider JSON body → canonical response. Throws UpstreamError on a body it cannot read. */
  parseChatResponse(body: unknown): CanonicalResponse;
  createStreamDecoder(): StreamDecoder;
  /** Provider error answer → UpstreamError (status kept, retryable set, message safe). */
  parseError(status: number, bodyText: string, headers: Record<string, string | undefined>): UpstreamError;
}
