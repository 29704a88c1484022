/**
 * A chat adapter for a provider spoken to over HTTP: the provider's
 * translators (request builder, response reader, stream decoder) plus the
 * one way of running them through a transport.
 */
import type { BridgeReport, CanonicalRequest, CanonicalResponse, CanonicalStreamEvent } from './canonical.js';
import type { ChatAdapter, NativeRequestBuilder, ParseUpstreamError, ProviderConnection, StreamDecoder, UpstreamHttpRequest, UpstreamTransport, ChatFormat } from './types.js';

export interface HttpChatDefinition {
  native: Partial<Record<ChatFormat | 'compact', NativeRequestBuilder>>;
  buildChatRequest(connection: ProviderConnection, request: CanonicalRequest): { request: UpstreamHttpRequest; report: BridgeReport };
  /** Provider JSON body → canonical response. Throws UpstreamError on a body it cannot read. */
  parseChatResponse(body: unknown): CanonicalResponse;
  createStreamDecoder(): StreamDecoder;
  parseError: ParseUpstreamError;
}

export function createHttpChatAdapter(definition: HttpChatDefinition): ChatAdapter {
  return {
    native: definition.native,
    parseError: definition.parseError,
    prepare(connection, request) {
      const built = definition.buildChatRequest(connection, request);
      return {
        report: built.report,
        async complete(transport) {
          const response = await transport.send(built.request, definition.parseError);
          const { value } = await transport.readJson(response);
          return definition.parseChatResponse(value);
        },
        async stream(transport) {
          const response = await transport.send(built.request, definition.parseError);
          return decodeEvents(transport, response, definition.createStreamDecoder());
        },
      };
    },
  };
}

async function* decodeEvents(
  transport: UpstreamTransport,
  response: Awaited<ReturnType<UpstreamTransport['send']>>,
  decoder: StreamDecoder,
): AsyncGenerator<CanonicalStreamEvent> {
  for await (const event of transport.readEvents(response)) yield* decoder.push(event);
  yield* decoder.end();
}
