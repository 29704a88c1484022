/**
 * The `gemini` provider kind: Google's `generateContent` format, on the
 * Gemini API (`{baseUrl}/models/{m}:…`, key in `x-goog-api-key`) or on
 * Vertex AI (`{baseUrl}/projects/{p}/locations/{l}/publishers/google/models/{m}:…`,
 * an OAuth token from a service account). Chat in every client format goes
 * through the canonical bridge (no client speaks Gemini's format), count
 * tokens asks `countTokens`, embeddings `batchEmbedContents` (Vertex: `predict`).
 *
 * @see https://ai.google.dev/api/generate-content
 * @see https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference
 */
import { UpstreamError } from '../../errors.js';
import type { CanonicalStreamEvent } from '../canonical.js';
import type { ChatAdapter, CountTokensAdapter, EmbeddingsAdapter, ParseUpstreamError, ProviderConnection, UpstreamResponse, UpstreamTransport } from '../types.js';
import type { MessagesRequest } from '../anthropic/anthropic.wire.js';
import { fromAnthropicRequest } from '../anthropic/from-anthropic-request.js';
import type { EmbeddingItem } from '../openai/openai-embeddings.wire.js';
import { encodeEmbeddingBase64, toFloatArray } from '../../media/embedding-encoding.js';
import { countTextTokens, decodeTokens } from '../../tokenizer.js';
import { parseGeminiError, REDACTED } from './gemini-errors.js';
import { fromGeminiResponse } from './from-gemini-response.js';
import { GeminiStreamDecoder } from './gemini-stream.js';
import { toGeminiRequest } from './to-gemini-request.js';
import { geminiBatchEmbedWireSchema, geminiCountTokensWireSchema, vertexPredictEmbeddingsWireSchema } from './gemini.wire.js';
import { vertexAccessToken } from './vertex-auth.js';

type GeminiMethod = 'generateContent' | 'streamGenerateContent' | 'countTokens' | 'batchEmbedContents' | 'predict';

/** The URL of a method on a model, for the Gemini API or Vertex AI. */
export function geminiMethodUrl(connection: ProviderConnection, model: string, method: GeminiMethod): string {
  const base = connection.baseUrl.replace(/\/+$/, '');
  const name = encodeURIComponent(model);
  const path = connection.vertex
    ? `/projects/${encodeURIComponent(connection.vertex.project)}/locations/${encodeURIComponent(connection.vertex.location)}/publishers/google/models/${name}:${method}`
    : `/models/${name}:${method}`;
  return `${base}${path}${method === 'streamGenerateContent' ? '?alt=sse' : ''}`;
}

/** Headers of every call: the key (Gemini API) or a current access token (Vertex AI), then the provider's own headers. */
export async function buildGeminiHeaders(connection: ProviderConnection): Promise<Record<string, string>> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (connection.vertex) headers.authorization = `Bearer ${await vertexAccessToken(connection.vertex, connection.id)}`;
  else if (connection.apiKey) headers['x-goog-api-key'] = connection.apiKey;
  for (const [name, value] of Object.entries(connection.headers ?? {})) headers[name.toLowerCase()] = value;
  return headers;
}

/**
 * POSTs a JSON body. The static secrets (the API key, the service account
 * key) are redacted from every answer by the transport; a Vertex access
 * token changes every hour, so the answer of a call made with one has that
 * token redacted here (`redact`), as its error message has.
 */
async function post(transport: UpstreamTransport, connection: ProviderConnection, url: string, body: unknown): Promise<{ response: UpstreamResponse; redact: (text: string) => string }> {
  const headers = await buildGeminiHeaders(connection);
  const token = connection.vertex ? headers.authorization?.slice('Bearer '.length) : undefined;
  const redact = token ? (text: string): string => (text.includes(token) ? text.split(token).join(REDACTED) : text) : (text: string): string => text;
  const parseError: ParseUpstreamError = (status, text, responseHeaders) => parseGeminiError(status, redact(text), responseHeaders);
  const response = await transport.send({ method: 'POST', url, headers, body: JSON.stringify(body) }, parseError);
  return { response, redact };
}

/** A JSON answer read whole, with the call's token redacted. */
async function readRedactedJson(transport: UpstreamTransport, call: { response: UpstreamResponse; redact: (text: string) => string }): Promise<unknown> {
  const { value, text } = await transport.readJson(call.response);
  const redacted = call.redact(text);
  return redacted === text ? value : JSON.parse(redacted);
}

export const geminiChatAdapter: ChatAdapter = {
  native: {},
  parseError: parseGeminiError,
  prepare(connection, request) {
    const { body, report } = toGeminiRequest(request);
    return {
      report,
      async complete(transport) {
        const call = await post(transport, connection, geminiMethodUrl(connection, request.model, 'generateContent'), body);
        return fromGeminiResponse(await readRedactedJson(transport, call));
      },
      async stream(transport) {
        const call = await post(transport, connection, geminiMethodUrl(connection, request.model, 'streamGenerateContent'), body);
        return decodeStream(transport, call.response, call.redact);
      },
    };
  },
};

async function* decodeStream(transport: UpstreamTransport, response: UpstreamResponse, redact: (text: string) => string): AsyncGenerator<CanonicalStreamEvent> {
  const decoder = new GeminiStreamDecoder();
  // Events are whole here: a token cannot be cut across two of them.
  for await (const event of transport.readEvents(response)) yield* decoder.push({ ...event, data: redact(event.data) });
  yield* decoder.end();
}

/** `countTokens` over the messages body translated as a generation would be (system, tools and config included). */
export const geminiCountTokensAdapter: CountTokensAdapter = {
  async countTokens(transport, connection, body) {
    const model = String(body.model);
    const { request } = fromAnthropicRequest({ ...body, max_tokens: 1 } as MessagesRequest);
    const { body: generateBody } = toGeminiRequest({ ...request, model });
    delete generateBody.generationConfig;
    // The Gemini API counts a whole request only inside `generateContentRequest`; Vertex takes its fields directly.
    const countBody = connection.vertex ? generateBody : { generateContentRequest: { model: `models/${model}`, ...generateBody } };
    const call = await post(transport, connection, geminiMethodUrl(connection, model, 'countTokens'), countBody);
    const parsed = geminiCountTokensWireSchema.safeParse((await transport.readJson(call.response)).value);
    if (!parsed.success) throw new UpstreamError('the provider answered without totalTokens', { status: 502, provider: connection.id, retryable: false });
    return parsed.data.totalTokens;
  },
};

/**
 * Embeddings: `batchEmbedContents` on the Gemini API (which reports no token
 * count: the gateway counts), `predict` on Vertex AI (which does).
 */
export const geminiEmbeddingsAdapter: EmbeddingsAdapter = {
  async embed(transport, connection, call) {
    const model = String(call.body.model);
    const texts = call.inputs.map((input) => (typeof input === 'string' ? input : decodeTokens(input)));
    const dimensions = typeof call.body.dimensions === 'number' ? call.body.dimensions : undefined;
    let vectors: number[][];
    let promptTokens: number | undefined;
    if (connection.vertex) {
      const body = { instances: texts.map((content) => ({ content })), ...(dimensions !== undefined ? { parameters: { outputDimensionality: dimensions } } : {}) };
      const sent = await post(transport, connection, geminiMethodUrl(connection, model, 'predict'), body);
      const parsed = vertexPredictEmbeddingsWireSchema.safeParse(await readRedactedJson(transport, sent));
      if (!parsed.success) throw new UpstreamError('the provider answered without embeddings', { status: 502, provider: connection.id, retryable: false });
      vectors = parsed.data.predictions.map((prediction) => prediction.embeddings.values);
      const counts = parsed.data.predictions.map((prediction) => prediction.embeddings.statistics?.token_count);
      if (counts.every((count) => typeof count === 'number')) promptTokens = counts.reduce<number>((sum, count) => sum + count!, 0);
    } else {
      const body = {
        requests: texts.map((text) => ({ model: `models/${model}`, content: { parts: [{ text }] }, ...(dimensions !== undefined ? { outputDimensionality: dimensions } : {}) })),
      };
      const sent = await post(transport, connection, geminiMethodUrl(connection, model, 'batchEmbedContents'), body);
      const parsed = geminiBatchEmbedWireSchema.safeParse((await transport.readJson(sent.response)).value);
      if (!parsed.success) throw new UpstreamError('the provider answered without embeddings', { status: 502, provider: connection.id, retryable: false });
      vectors = parsed.data.embeddings.map((embedding) => embedding.values);
      // No count in the answer: the gateway's own (o200k), as for every provider that reports none.
      promptTokens = call.inputs.reduce<number>((sum, input) => sum + (typeof input === 'string' ? countTextTokens(input) : input.length), 0);
    }
    if (vectors.length !== texts.length) throw new UpstreamError('the provider answered a different number of embeddings', { status: 502, provider: connection.id, retryable: false });
    const data: EmbeddingItem[] = vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: call.encodingFormat === 'base64' ? encodeEmbeddingBase64(vector) : toFloatArray(vector),
    }));
    const tokens = promptTokens ?? call.inputs.reduce<number>((sum, input) => sum + (typeof input === 'string' ? countTextTokens(input) : input.length), 0);
    return { body: { object: 'list', data, model: String(call.body.model), usage: { prompt_tokens: tokens, total_tokens: tokens } }, promptTokens: tokens };
  },
};
