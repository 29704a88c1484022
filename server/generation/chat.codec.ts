import {
  ChatStreamEncoder,
  fromOpenAIChatRequest,
  fromOpenAIChatResponse,
  OpenAIChatStreamDecoder,
  toOpenAIChatResponse,
  buildOpenAIHeaders,
  type ChatCompletionRequest,
} from '../providers/openai/index.js';
import { renderStreamError } from '../error-types.js';
import type { ClientCodec } from './codec.js';

const DONE: { kind: 'event'; data: string } = { kind: 'event', data: '[DONE]' };

/** OpenAI chat completions (PROTOCOLS.md §2). */
export const chatCodec: ClientCodec<ChatCompletionRequest> = {
  format: 'chat',
  idPrefix: 'chatcmpl-',
  decode: (body) => fromOpenAIChatRequest(body),
  isStream: (body) => body.stream === true,
  encodeResponse: (response, meta) => toOpenAIChatResponse(response, { id: meta.id, model: meta.model, created: meta.created }),
  createEncoder(meta, body) {
    const encoder = new ChatStreamEncoder({
      id: meta.id,
      model: meta.model,
      created: meta.created,
      includeUsage: body.stream_options?.include_usage === true,
    });
    return {
      push: (event) => encoder.push(event).map((data) => ({ kind: 'event' as const, data })),
      end: () => (encoder.failed ? [] : [DONE]),
      // PROTOCOLS.md §2: an in-band `{"error":…}` payload, then close without [DONE].
      fail: (error) => [{ kind: 'event', ...renderStreamError('chat', error) }],
    };
  },
  buildNativeRequest(connection, body, upstreamModel) {
    const upstreamBody: Record<string, unknown> = { ...body, model: upstreamModel };
    // Always learn the usage of a stream; the chunk is withheld from clients that did not ask for it.
    if (body.stream === true) upstreamBody.stream_options = { ...(body.stream_options ?? {}), include_usage: true };
    return {
      method: 'POST',
      url: `${connection.baseUrl}/chat/completions`,
      headers: buildOpenAIHeaders(connection),
      body: JSON.stringify(upstreamBody),
    };
  },
  readNativeResponse: (body) => fromOpenAIChatResponse(body),
  createNativeDecoder: () => new OpenAIChatStreamDecoder(),
  nativeFrameFilter(body) {
    if (body.stream_options?.include_usage === true) return undefined;
    // Drop the usage-only chunk (`choices: []`) the client did not ask for.
    return (data) => !(data.includes('"usage":{') && /"choices"\s*:\s*\[\s*\]/.test(data));
  },
};
