import { AnthropicStreamDecoder } from '../providers/anthropic/anthropic-stream.js';
import type { AnthropicStreamFrame, MessagesRequest, MessagesResponse } from '../providers/anthropic/anthropic.wire.js';
import { fromAnthropicRequest } from '../providers/anthropic/from-anthropic-request.js';
import { fromAnthropicResponse } from '../providers/anthropic/from-anthropic-response.js';
import { MessagesStreamEncoder } from '../providers/anthropic/messages-stream-encoder.js';
import { toAnthropicResponse } from '../providers/anthropic/to-anthropic-response.js';
import { renderStreamError } from '../error-types.js';
import type { ClientCodec } from './codec.js';

/** The data of a messages stream event (`data.type` is the event name). */
export type MessagesStreamEvent = AnthropicStreamFrame['data'];

/** Anthropic messages (PROTOCOLS.md §3). */
export const messagesCodec: ClientCodec<MessagesRequest, MessagesResponse, MessagesStreamEvent> = {
  format: 'messages',
  nativeFormat: 'messages',
  idPrefix: 'msg_',
  decode: (body) => fromAnthropicRequest(body),
  isStream: (body) => body.stream === true,
  encodeResponse: (response, identity) => toAnthropicResponse(response, { id: identity.id, model: identity.model }),
  createEncoder(identity) {
    const encoder = new MessagesStreamEncoder({ id: identity.id, model: identity.model, inputTokens: identity.inputTokens });
    return {
      push: (event) => encoder.push(event).map((frame) => ({ event: frame.event, data: frame.data })),
      end: () => encoder.end().map((frame) => ({ event: frame.event, data: frame.data })),
      fail: (error) => [renderStreamError('messages', error) as { event: string; data: MessagesStreamEvent }],
    };
  },
  nativeBody: (body, upstreamModel) => ({ ...body, model: upstreamModel }),
  readNativeResponse: (body) => fromAnthropicResponse(body),
  createNativeDecoder: () => new AnthropicStreamDecoder(),
};
