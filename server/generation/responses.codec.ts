import { buildOpenAIHeaders } from '../providers/openai/openai.adapter.js';
import type { CanonicalMessage } from '../providers/canonical.js';
import { fromResponsesRequest } from '../translate/responses/from-responses-request.js';
import { ResponsesStreamDecoder } from '../translate/responses/responses-stream-decoder.js';
import { ResponsesStreamEncoder } from '../translate/responses/responses-stream-encoder.js';
import type { ResponsesRequest } from '../translate/responses/responses.wire.js';
import { fromResponsesResponse, toResponsesResponse } from '../translate/responses/to-responses-response.js';
import type { ClientCodec } from './codec.js';

/** OpenAI Responses (PROTOCOLS.md §4); `history` is the conversation rebuilt from `previous_response_id`. */
export function createResponsesCodec(history?: CanonicalMessage[]): ClientCodec<ResponsesRequest> {
  return {
    format: 'responses',
    idPrefix: 'resp_',
    decode: (body) => fromResponsesRequest(body, history),
    isStream: (body) => body.stream === true,
    encodeResponse: (response, meta, body) => toResponsesResponse(response, { id: meta.id, model: meta.model, createdAt: meta.created, request: body }),
    createEncoder(meta, body) {
      const encoder = new ResponsesStreamEncoder({ id: meta.id, model: meta.model, createdAt: meta.created, request: body });
      const toItems = (frames: ReturnType<typeof encoder.push>) => frames.map((frame) => ({ kind: 'event' as const, event: frame.event, data: frame.data }));
      return {
        push: (event) => toItems(encoder.push(event)),
        end: () => toItems(encoder.end()),
        // `response.failed`, then the `error` event, numbered in sequence with what went before.
        fail: (error) => toItems(encoder.push({ type: 'error', message: error.message, errorType: error.code })),
      };
    },
    buildNativeRequest(connection, body, upstreamModel) {
      return {
        method: 'POST',
        url: `${connection.baseUrl}/responses`,
        headers: buildOpenAIHeaders(connection),
        body: JSON.stringify({ ...body, model: upstreamModel }),
      };
    },
    readNativeResponse: (body) => fromResponsesResponse(body),
    createNativeDecoder: () => new ResponsesStreamDecoder(),
  };
}
