import {
  ChatStreamEncoder,
  fromOpenAIChatRequest,
  fromOpenAIChatResponse,
  OpenAIChatStreamDecoder,
  toOpenAIChatResponse,
  type ChatCompletion,
  type ChatCompletionRequest,
  type ChatStreamFrame,
} from '../providers/openai/index.js';
import { renderStreamError } from '../error-types.js';
import type { ClientCodec } from './codec.js';

/** What a chat completions stream carries: chunks, an in-band error payload, and the closing `[DONE]`. */
export type ChatStreamEvent = ChatStreamFrame | '[DONE]';

const DONE = { data: '[DONE]' as const };

/** OpenAI chat completions (PROTOCOLS.md §2). */
export const chatCodec: ClientCodec<ChatCompletionRequest, ChatCompletion, ChatStreamEvent> = {
  format: 'chat',
  nativeFormat: 'chat',
  idPrefix: 'chatcmpl-',
  decode: (body) => fromOpenAIChatRequest(body),
  isStream: (body) => body.stream === true,
  encodeResponse: (response, identity) => toOpenAIChatResponse(response, { id: identity.id, model: identity.model, created: identity.created }),
  createEncoder(identity, body) {
    const encoder = new ChatStreamEncoder({
      id: identity.id,
      model: identity.model,
      created: identity.created,
      includeUsage: body.stream_options?.include_usage === true,
    });
    return {
      push: (event) => encoder.push(event).map((data) => ({ data })),
      end: () => (encoder.failed ? [] : [DONE]),
      // PROTOCOLS.md §2: an in-band `{"error":…}` payload, then close without [DONE].
      fail: (error) => [renderStreamError('chat', error) as { data: ChatStreamFrame }],
    };
  },
  nativeBody(body, upstreamModel) {
    const upstreamBody: Record<string, unknown> = { ...body, model: upstreamModel };
    // Always learn the usage of a stream; the chunk is withheld from clients that did not ask for it.
    if (body.stream === true) upstreamBody.stream_options = { ...(body.stream_options ?? {}), include_usage: true };
    return upstreamBody;
  },
  readNativeResponse: (body) => fromOpenAIChatResponse(body),
  createNativeDecoder: () => new OpenAIChatStreamDecoder(),
  nativeFrameFilter(body) {
    if (body.stream_options?.include_usage === true) return undefined;
    // Drop the usage-only chunk (`choices: []`) the client did not ask for.
    return (data) => !(data.includes('"usage":{') && /"choices"\s*:\s*\[\s*\]/.test(data));
  },
};
