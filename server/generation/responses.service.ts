import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { GatewayError } from '../errors.js';
import type { CanonicalMessage } from '../providers/canonical.js';
import { buildCompactionRequest, toCompactionResponse } from '../translate/responses/compact.js';
import { fromStoredConversation, toStoredConversation, type StoredConversation } from '../translate/responses/history.js';
import type { CompactRequest, ResponsesRequest } from '../translate/responses/responses.wire.js';
import { buildOpenAIHeaders } from '../providers/openai/openai.adapter.js';
import type { ClientCodec } from './codec.js';
import { runGeneration, type GenerationContext } from './generate.js';
import { createResponsesCodec } from './responses.codec.js';
import { emptyBridgeReport } from '../providers/canonical.js';

/** The conversation behind one of this account's earlier answers; another account's id is "not found". */
async function loadHistory(db: Kysely<Database>, accountId: string, responseId: string): Promise<CanonicalMessage[] | undefined> {
  const row = await db
    .selectFrom('stored_responses')
    .select('conversation')
    .where('id', '=', responseId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row ? fromStoredConversation(row.conversation as StoredConversation) : undefined;
}

function routesNatively(context: GenerationContext, modelId: string): boolean {
  const model = context.services.catalog.get(modelId);
  return model?.deployments[0]?.provider.kind === 'openai';
}

/**
 * `POST /v1/responses`. `previous_response_id` works on every provider: an
 * answer given through a bridge is stored (per account) and its conversation
 * rebuilt for the next turn; an id the gateway does not know is left to a
 * provider that speaks Responses itself (it keeps its own state).
 */
export async function createResponse(context: GenerationContext, body: ResponsesRequest): Promise<unknown> {
  let history: CanonicalMessage[] | undefined;
  let forwardedBody = body;
  if (body.previous_response_id) {
    history = await loadHistory(context.services.db, context.auth.account.id, body.previous_response_id);
    if (history) {
      const { previous_response_id: _previous, ...rest } = body;
      forwardedBody = rest as ResponsesRequest;
    } else if (!routesNatively(context, body.model)) {
      throw new GatewayError('INVALID_REQUEST', `Previous response with id '${body.previous_response_id}' not found.`, { param: 'previous_response_id' });
    }
  }
  return runGeneration(context, {
    endpoint: '/v1/responses',
    codec: createResponsesCodec(history),
    body: forwardedBody,
    // A conversation that continues one of ours is rebuilt here, so it cannot be passed through as is.
    forceBridge: history !== undefined,
    onComplete: async (request, response, meta) => {
      if (body.store === false) return;
      await context.services.db
        .insertInto('stored_responses')
        .values({ id: meta.id, account_id: context.auth.account.id, model: meta.model, conversation: JSON.stringify(toStoredConversation(request, response)) })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
    },
  });
}

/**
 * `POST /v1/responses/compact`: native on providers that speak Responses,
 * otherwise a generation that summarises the supplied context, returned as a
 * Responses object whose output is one assistant message. Billed; never streamed.
 */
export async function compactResponse(context: GenerationContext, body: CompactRequest): Promise<unknown> {
  let history: CanonicalMessage[] | undefined;
  if (body.previous_response_id) {
    history = await loadHistory(context.services.db, context.auth.account.id, body.previous_response_id);
    if (!history && !routesNatively(context, body.model)) {
      throw new GatewayError('INVALID_REQUEST', `Previous response with id '${body.previous_response_id}' not found.`, { param: 'previous_response_id' });
    }
  }
  const codec: ClientCodec<CompactRequest> = {
    format: 'responses',
    idPrefix: 'resp_',
    decode: (request) => ({ request: buildCompactionRequest(request, history), report: emptyBridgeReport() }),
    isStream: () => false,
    encodeResponse: (response, meta) => toCompactionResponse(response, { id: meta.id, model: meta.model, createdAt: meta.created }),
    createEncoder: () => {
      throw new GatewayError('INVALID_REQUEST', 'Compaction is never streamed.', { param: 'stream' });
    },
    buildNativeRequest: (connection, request, upstreamModel) => ({
      method: 'POST',
      url: `${connection.baseUrl}/responses/compact`,
      headers: buildOpenAIHeaders(connection),
      body: JSON.stringify({ ...request, model: upstreamModel }),
    }),
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
  return runGeneration(context, { endpoint: '/v1/responses/compact', codec, body: { ...body, stream: false } as CompactRequest, forceBridge: history !== undefined });
}
