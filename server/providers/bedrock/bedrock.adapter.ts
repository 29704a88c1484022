/**
 * The Bedrock provider: Converse (`POST /model/{modelId}/converse`) and
 * ConverseStream (`…/converse-stream`, answered in the binary eventstream
 * framing), signed with AWS Signature V4, sent over the gateway's own
 * transport (its timeouts, retries, cooldown and spans).
 *
 * No client format is Bedrock's own: every request crosses through the
 * canonical types, and the bridge report names what Converse cannot carry.
 *
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html
 * @see https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ConverseStream.html
 */
import { randomUUID } from 'node:crypto';
import type { CanonicalRequest, CanonicalStreamEvent } from '../canonical.js';
import type { ChatAdapter, ParseUpstreamError, ProviderConnection, UpstreamHttpRequest, UpstreamResponse, UpstreamTransport } from '../types.js';
import { parseBedrockError } from './bedrock-errors.js';
import { signBedrockRequest } from './bedrock-signing.js';
import { BedrockEventStreamFramer, BedrockStreamDecoder, streamMessageError, type BedrockStreamMessage } from './bedrock-stream.js';
import { fromBedrockResponse } from './from-bedrock-response.js';
import { toBedrockRequest } from './to-bedrock-request.js';

const EVENTSTREAM_CONTENT_TYPE = 'application/vnd.amazon.eventstream';

/** The URL of an operation on a model; the model id (an ARN may hold `/` and `:`) is one encoded path segment. */
export function bedrockUrl(connection: ProviderConnection, model: string, operation: 'converse' | 'converse-stream'): string {
  return `${connection.baseUrl.replace(/\/+$/, '')}/model/${encodeURIComponent(model)}/${operation}`;
}

/** A signed Converse or ConverseStream request, and readers that keep its signature out of what they read. */
export async function buildBedrockRequest(
  connection: ProviderConnection,
  model: string,
  body: string,
  stream: boolean,
): Promise<{ request: UpstreamHttpRequest; parseError: ParseUpstreamError; redact: (text: string) => string }> {
  const url = bedrockUrl(connection, model, stream ? 'converse-stream' : 'converse');
  const signed = await signBedrockRequest(connection, url, body, stream ? EVENTSTREAM_CONTENT_TYPE : 'application/json');
  // The transport redacts the provider's static secrets; the signature is new with each request.
  const redact = (text: string): string => (signed.signature && text.includes(signed.signature) ? text.split(signed.signature).join('[redacted]') : text);
  const parseError: ParseUpstreamError = (status, text, headers) => parseBedrockError(status, redact(text), headers);
  return { request: { method: 'POST', url, headers: signed.headers, body }, parseError, redact };
}

function requestIdOf(response: UpstreamResponse): string {
  return response.headers['x-amzn-requestid'] ?? randomUUID();
}

async function* readMessages(transport: UpstreamTransport, response: UpstreamResponse, redact: (text: string) => string): AsyncGenerator<BedrockStreamMessage> {
  const framer = new BedrockEventStreamFramer(redact);
  for await (const chunk of transport.readChunks(response)) yield* framer.push(chunk);
  framer.end();
}

/**
 * The canonical events of a ConverseStream answer. Its first message is read
 * before the stream is handed on: an exception there (throttling, a model
 * not ready) is thrown as the HTTP error it stands for, so the deployment
 * can be failed over like any refused request. A later one ends the stream
 * with an in-band error.
 */
async function streamConverse(
  transport: UpstreamTransport,
  response: UpstreamResponse,
  model: string,
  redact: (text: string) => string,
): Promise<AsyncIterable<CanonicalStreamEvent>> {
  const requestId = requestIdOf(response);
  const messages = readMessages(transport, response, redact);
  const first = await messages.next();
  if (!first.done && first.value.messageType !== 'event') {
    await messages.return(undefined);
    throw streamMessageError(first.value, requestId);
  }
  const decoder = new BedrockStreamDecoder(requestId, model);
  return (async function* () {
    try {
      if (!first.done) yield* decoder.push(first.value);
      for await (const message of { [Symbol.asyncIterator]: () => messages }) yield* decoder.push(message);
      yield* decoder.end();
    } finally {
      await messages.return(undefined);
    }
  })();
}

export const bedrockChatAdapter: ChatAdapter = {
  native: {},
  parseError: parseBedrockError,
  prepare(connection: ProviderConnection, request: CanonicalRequest) {
    const { body, report } = toBedrockRequest(request);
    const bodyText = JSON.stringify(body);
    return {
      report,
      async complete(transport) {
        const built = await buildBedrockRequest(connection, request.model, bodyText, false);
        const response = await transport.send(built.request, built.parseError);
        const { value, text } = await transport.readJson(response);
        const redacted = built.redact(text);
        return fromBedrockResponse(redacted === text ? value : (JSON.parse(redacted) as unknown), requestIdOf(response), request.model);
      },
      async stream(transport) {
        const built = await buildBedrockRequest(connection, request.model, bodyText, true);
        const response = await transport.send(built.request, built.parseError);
        return streamConverse(transport, response, request.model, built.redact);
      },
    };
  },
};
