import { AnthropicStreamDecoder } from '../providers/anthropic/anthropic-stream.js';
import { buildAnthropicMessagesRequest } from '../providers/anthropic/anthropic.adapter.js';
import type { MessagesRequest } from '../providers/anthropic/anthropic.wire.js';
import { fromAnthropicRequest } from '../providers/anthropic/from-anthropic-request.js';
import { fromAnthropicResponse } from '../providers/anthropic/from-anthropic-response.js';
import { MessagesStreamEncoder } from '../providers/anthropic/messages-stream-encoder.js';
import { toAnthropicResponse } from '../providers/anthropic/to-anthropic-response.js';
import { renderStreamError } from '../error-types.js';
import type { ClientCodec } from './codec.js';

/** Anthropic messages (PROTOCOLS.md §3). */
export const messagesCodec: ClientCodec<MessagesRequest> = {
  format: 'messages',
  idPrefix: 'msg_',
  decode: (body) => fromAnthropicRequest(body),
  isStream: (body) => body.stream === true,
  encodeResponse: (response, meta) => toAnthropicResponse(response, { id: meta.id, model: meta.model }),
  createEncoder(meta) {
    const encoder = new MessagesStreamEncoder({ id: meta.id, model: meta.model, inputTokens: meta.inputTokens });
    return {
      push: (event) => encoder.push(event).map((frame) => ({ kind: 'event' as const, event: frame.event, data: frame.data })),
      end: () => encoder.end().map((frame) => ({ kind: 'event' as const, event: frame.event, data: frame.data })),
      fail: (error) => [{ kind: 'event', ...renderStreamError('messages', error) }],
    };
  },
  buildNativeRequest(connection, body, upstreamModel, forwarded) {
    const request = buildAnthropicMessagesRequest(
      connection,
      { ...body, model: upstreamModel },
      { version: forwarded.headers['anthropic-version'], beta: forwarded.headers['anthropic-beta'] },
    );
    // Query parameters such as `?beta=true` reach the provider as the client sent them.
    if (forwarded.query) request.url += `?${forwarded.query}`;
    return request;
  },
  readNativeResponse: (body) => fromAnthropicResponse(body),
  createNativeDecoder: () => new AnthropicStreamDecoder(),
};
