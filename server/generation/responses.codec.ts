import type { CanonicalMessage } from '../providers/canonical.js';
import type { StreamDecoder } from '../providers/types.js';
import { fromResponsesRequest } from '../translate/responses/from-responses-request.js';
import { ResponsesStreamDecoder } from '../translate/responses/responses-stream-decoder.js';
import { ResponsesStreamEncoder } from '../translate/responses/responses-stream-encoder.js';
import type { ResponsesRequest } from '../translate/responses/responses.wire.js';
import type { ResponseObject, ResponsesStreamEvent } from '../translate/responses/responses-object.wire.js';
import { fromResponsesResponse, toResponsesResponse } from '../translate/responses/to-responses-response.js';
import type { ClientCodec } from './codec.js';

/**
 * What one request's codec learned from a provider that answered natively
 * (pass-through). The client sees that provider's ids and sequence numbers,
 * so storing the answer and failing a stream half-way must use them too.
 */
export interface NativeAnswer {
  /** Catalog id of the provider the last native request was built for. */
  providerId: string | undefined;
  /** The provider's response id, once its answer or stream start was read. */
  responseId: string | undefined;
  /** `sequence_number` of the last event of the provider's stream, -1 before any. */
  lastSequenceNumber: number;
}

export function createNativeAnswer(): NativeAnswer {
  return { providerId: undefined, responseId: undefined, lastSequenceNumber: -1 };
}

const SEQUENCE_NUMBER = /"sequence_number"\s*:\s*(\d+)/;

/**
 * `store` is the gateway's to honour (it decides whether the answer is kept for
 * `previous_response_id`), so a bridge does not report it as dropped.
 */
function withoutGatewayFields(decoded: ReturnType<typeof fromResponsesRequest>): ReturnType<typeof fromResponsesRequest> {
  if (!decoded.request.extra || !('store' in decoded.request.extra)) return decoded;
  const { store: _store, ...extra } = decoded.request.extra;
  return {
    request: { ...decoded.request, extra },
    report: { dropped: decoded.report.dropped.filter((name) => name !== 'store'), approximated: decoded.report.approximated },
  };
}

/** The Responses stream decoder, noting the provider's response id and sequence numbers on the way. */
function createTrackingDecoder(native: NativeAnswer): StreamDecoder {
  const decoder = new ResponsesStreamDecoder();
  return {
    push(event) {
      const events = decoder.push(event);
      // A frame that reports a failure is not relayed (the gateway's own failure frames take its place).
      if (events.some((decoded) => decoded.type === 'error')) return events;
      const match = SEQUENCE_NUMBER.exec(event.data);
      if (match) native.lastSequenceNumber = Math.max(native.lastSequenceNumber, Number(match[1]));
      for (const decoded of events) if (decoded.type === 'start' && decoded.id !== '') native.responseId ??= decoded.id;
      return events;
    },
    end: () => decoder.end(),
  };
}

/**
 * OpenAI Responses (PROTOCOLS.md §4); `history` is the conversation rebuilt
 * from `previous_response_id`, `native` collects what a pass-through answer
 * revealed (one per request).
 */
export function createResponsesCodec(
  history?: CanonicalMessage[],
  native: NativeAnswer = createNativeAnswer(),
): ClientCodec<ResponsesRequest, ResponseObject, ResponsesStreamEvent> {
  return {
    format: 'responses',
    nativeFormat: 'responses',
    idPrefix: 'resp_',
    decode: (body) => withoutGatewayFields(fromResponsesRequest(body, history)),
    isStream: (body) => body.stream === true,
    encodeResponse: (response, identity, body) => toResponsesResponse(response, { id: identity.id, model: identity.model, createdAt: identity.created, request: body }),
    createEncoder(identity, body) {
      // After part of a provider's own stream went out (a pass-through that failed), the
      // failure continues that stream: its response id, its numbering, no second `response.created`.
      const continued = native.lastSequenceNumber >= 0;
      const encoder = new ResponsesStreamEncoder({
        id: continued ? (native.responseId ?? identity.id) : identity.id,
        model: identity.model,
        createdAt: identity.created,
        request: body,
        ...(continued ? { continueAfter: native.lastSequenceNumber } : {}),
      });
      const toItems = (frames: ReturnType<typeof encoder.push>) => frames.map((frame) => ({ event: frame.event, data: frame.data }));
      return {
        push: (event) => toItems(encoder.push(event)),
        end: () => toItems(encoder.end()),
        // `response.failed`, then the `error` event, numbered in sequence with what went before.
        fail: (error) => toItems(encoder.push({ type: 'error', message: error.message, errorType: error.code })),
      };
    },
    onNativeRequest(providerId) {
      native.providerId = providerId;
      native.responseId = undefined;
    },
    nativeBody: (body, upstreamModel) => ({ ...body, model: upstreamModel }),
    readNativeResponse(body) {
      const response = fromResponsesResponse(body);
      if (response.id !== '') native.responseId = response.id;
      return response;
    },
    createNativeDecoder: () => createTrackingDecoder(native),
  };
}
