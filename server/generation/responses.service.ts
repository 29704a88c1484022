import { findStoredConversation, insertStoredResponse } from '../../db/queries/stored-responses.queries.js';
import { GatewayError } from '../errors.js';
import type { CanonicalMessage, CanonicalRequest, CanonicalResponse } from '../providers/canonical.js';
import { buildCompactionRequest, toCompactionResponse } from '../translate/responses/compact.js';
import { fromStoredConversation, toStoredConversation, type StoredConversation } from '../translate/responses/history.js';
import type { CompactRequest, ResponsesRequest } from '../translate/responses/responses.wire.js';
import type { ResponseObject, ResponsesStreamEvent } from '../translate/responses/responses-object.wire.js';
import type { ClientCodec } from './codec.js';
import { runGeneration, type GenerationAnswer } from './generate.js';
import type { OperationContext } from '../operations/routing.js';
import type { JsonAnswer } from '../answers.js';
import { createNativeAnswer, createResponsesCodec } from './responses.codec.js';
import { emptyBridgeReport } from '../providers/canonical.js';

function previousNotFound(responseId: string): GatewayError {
  return new GatewayError('INVALID_REQUEST', `Previous response with id '${responseId}' not found.`, { param: 'previous_response_id' });
}

/** The catalog id of the provider a model's requests go to first. */
function primaryProviderId(context: OperationContext, modelId: string): string | undefined {
  return context.services.catalog.get(modelId)?.deployments[0]?.provider.id;
}

interface Continuation {
  /** The stored conversation, prepended to the new input. */
  history: CanonicalMessage[];
  /**
   * The id is the provider's own and the request goes to that provider again:
   * pass `previous_response_id` through and let the provider rebuild its state.
   */
  native: boolean;
}

/**
 * Resolves `previous_response_id` for this account. Every id the gateway hands
 * out, its own or a pass-through provider's, is recorded with its account, so
 * an id of another account (or one never seen) is refused before any provider
 * is asked: a provider behind one shared key would otherwise resolve another
 * tenant's conversation.
 */
async function resolveContinuation(context: OperationContext, modelId: string, responseId: string): Promise<Continuation> {
  const stored = (await findStoredConversation(context.services.db, context.auth.account.id, responseId)) as StoredConversation | undefined;
  if (!stored) throw previousNotFound(responseId);
  const native = stored.nativeProvider !== undefined && stored.nativeProvider === primaryProviderId(context, modelId);
  return { history: fromStoredConversation(stored), native };
}

async function storeAnswer(
  context: OperationContext,
  id: string,
  model: string,
  request: CanonicalRequest,
  response: CanonicalResponse,
  nativeProvider: string | undefined,
): Promise<void> {
  await insertStoredResponse(context.services.db, { id, accountId: context.auth.account.id, model, conversation: toStoredConversation(request, response, nativeProvider) });
}

/**
 * `POST /v1/responses`. `previous_response_id` works on every provider: each
 * answer is stored per account with its whole conversation. A bridged or mock
 * answer is continued by replaying that conversation; an answer a
 * Responses-speaking provider gave (its own id) is continued on that provider
 * by passing the id through, and on any other by replaying.
 */
export async function createResponse(context: OperationContext, body: ResponsesRequest): Promise<GenerationAnswer<ResponseObject, ResponsesStreamEvent>> {
  const continuation = body.previous_response_id ? await resolveContinuation(context, body.model, body.previous_response_id) : undefined;
  const native = createNativeAnswer();
  return runGeneration(context, {
    endpoint: '/v1/responses',
    codec: createResponsesCodec(continuation?.history, native),
    // The body keeps `previous_response_id`: the answer echoes it, and a native continuation sends it.
    body,
    // A replayed conversation is rebuilt here, so it cannot be passed through as is.
    forceBridge: continuation !== undefined && !continuation.native,
    history: continuation?.history,
    onComplete: async (request, response, identity) => {
      if (body.store === false) return;
      // A pass-through answer carries the provider's id: that is the id the client continues from.
      const nativeId = native.responseId;
      await storeAnswer(context, nativeId ?? identity.id, identity.model, request, response, nativeId === undefined ? undefined : native.providerId);
    },
  });
}

/**
 * `POST /v1/responses/compact`: native on providers that speak Responses,
 * otherwise a generation that summarises the supplied context, returned as a
 * Responses object whose output is one assistant message. Billed; never streamed.
 */
export async function compactResponse(context: OperationContext, body: CompactRequest): Promise<JsonAnswer<ResponseObject>> {
  const continuation = body.previous_response_id ? await resolveContinuation(context, body.model, body.previous_response_id) : undefined;
  const history = continuation?.history;
  // Never streamed: a `stream` field is neither honoured nor forwarded.
  const { stream: _stream, ...request } = body;
  const codec: ClientCodec<CompactRequest, ResponseObject, never> = {
    format: 'responses',
    nativeFormat: 'compact',
    idPrefix: 'resp_',
    decode: (compact) => ({ request: buildCompactionRequest(compact, history), report: emptyBridgeReport() }),
    isStream: () => false,
    encodeResponse: (response, identity) => toCompactionResponse(response, { id: identity.id, model: identity.model, createdAt: identity.created }),
    createEncoder: () => {
      throw new GatewayError('INVALID_REQUEST', 'Compaction is never streamed.', { param: 'stream' });
    },
    nativeBody: (compact, upstreamModel) => ({ ...compact, model: upstreamModel }),
    readNativeResponse: (native) => {
      const usage = (native as { usage?: { input_tokens?: number; output_tokens?: number } } | null)?.usage;
      return {
        id: '',
        model: body.model,
        content: [],
        finishReason: 'stop',
        usage: { inputTokens: usage?.input_tokens ?? 0, outputTokens: usage?.output_tokens ?? 0 },
      };
    },
    createNativeDecoder: () => {
      throw new GatewayError('INVALID_REQUEST', 'Compaction is never streamed.', { param: 'stream' });
    },
  };
  const answer = await runGeneration(context, {
    endpoint: '/v1/responses/compact',
    codec,
    body: request as CompactRequest,
    forceBridge: continuation !== undefined && !continuation.native,
    history,
  });
  if (answer.kind !== 'json') throw new GatewayError('INTERNAL_ERROR', 'Compaction answered a stream.');
  return answer;
}
