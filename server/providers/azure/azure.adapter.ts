/**
 * The Azure OpenAI provider kind. Azure speaks the OpenAI wire format, so the
 * OpenAI translators do the work (request, answer, stream, including Azure's
 * leading `prompt_filter_results` chunk and its `content_filter` finish
 * reason); what is Azure's own is where a request goes (azure-url.ts), how it
 * authenticates, and how its errors read (azure-errors.ts).
 *
 * Chat completions and Responses are passed through natively; messages are
 * bridged over chat completions. Media operations reuse the OpenAI adapters
 * through {@link toDeployment}, which moves each of their requests to the
 * deployment's URL.
 *
 * @see https://learn.microsoft.com/en-us/azure/ai-foundry/openai/reference
 */
import { createHttpChatAdapter, type HttpChatDefinition } from '../http-chat.js';
import { fromOpenAIChatResponse } from '../openai/from-openai-response.js';
import { OpenAIChatStreamDecoder } from '../openai/openai-stream.js';
import { toOpenAIChatRequest } from '../openai/to-openai-request.js';
import { openAIEmbeddingsAdapter } from '../openai/openai-embeddings.adapter.js';
import { openAIImagesAdapter } from '../openai/openai-images.adapter.js';
import { openAISpeechAdapter } from '../openai/openai-speech.adapter.js';
import { openAITranscriptionAdapter } from '../openai/openai-transcription.adapter.js';
import type {
  EmbeddingsAdapter,
  ImagesAdapter,
  NativeRequestBuilder,
  ProviderConnection,
  SpeechAdapter,
  TranscriptionAdapter,
  UpstreamTransport,
} from '../types.js';
import { parseAzureError } from './azure-errors.js';
import { buildAzureHeaders, buildAzureUrl, type AzureOperationPath } from './azure-url.js';

/** The deployment a body names: the catalog's `upstreamModel`, already swapped in. */
function deploymentOf(body: Record<string, unknown>): string {
  return typeof body.model === 'string' ? body.model : '';
}

function postJson(operation: AzureOperationPath): NativeRequestBuilder {
  return (connection, body) => ({
    method: 'POST',
    url: buildAzureUrl(connection, operation, deploymentOf(body)),
    headers: buildAzureHeaders(connection),
    body: JSON.stringify(body),
  });
}

/** The translators of the chat adapter (exported for the adapter's own tests). */
export const azureChatDefinition: HttpChatDefinition = {
  native: { chat: postJson('/chat/completions'), responses: postJson('/responses') },
  buildChatRequest(connection, request) {
    const { body, report } = toOpenAIChatRequest(request);
    return { request: postJson('/chat/completions')(connection, body, { headers: {}, query: '' }), report };
  },
  parseChatResponse: fromOpenAIChatResponse,
  createStreamDecoder: () => new OpenAIChatStreamDecoder(),
  parseError: parseAzureError,
};

export const azureChatAdapter = createHttpChatAdapter(azureChatDefinition);

/**
 * The transport an OpenAI adapter is given to reach an Azure deployment. The
 * OpenAI adapters address `{baseUrl}{operation}` with a bearer key; each
 * request they send is moved to the deployment's URL, carries Azure's
 * authentication instead, and its errors are read as Azure's.
 */
export function toDeployment(
  transport: UpstreamTransport,
  connection: ProviderConnection,
  deployment: string,
): { transport: UpstreamTransport; connection: ProviderConnection } {
  // No key and no headers: the OpenAI adapter adds neither, the move adds Azure's.
  const bare: ProviderConnection = { id: connection.id, kind: connection.kind, baseUrl: connection.baseUrl };
  const base = connection.baseUrl.replace(/\/+$/, '');
  return {
    connection: bare,
    // Only sending differs; every reader is the transport's own (a new one included).
    transport: {
      ...transport,
      send(request) {
        const operation = request.url.startsWith(base) ? request.url.slice(base.length) : new URL(request.url).pathname;
        const headers = { ...request.headers, ...buildAzureHeaders(connection, null) };
        return transport.send({ ...request, url: buildAzureUrl(connection, operation as AzureOperationPath, deployment), headers }, parseAzureError);
      },
    },
  };
}

export const azureEmbeddingsAdapter: EmbeddingsAdapter = {
  embed(transport, connection, call) {
    const target = toDeployment(transport, connection, deploymentOf(call.body));
    return openAIEmbeddingsAdapter.embed(target.transport, target.connection, call);
  },
};

export const azureImagesAdapter: ImagesAdapter = {
  generate(transport, connection, call) {
    const target = toDeployment(transport, connection, deploymentOf(call.body));
    return openAIImagesAdapter.generate(target.transport, target.connection, call);
  },
  streamGeneration(transport, connection, call) {
    const target = toDeployment(transport, connection, deploymentOf(call.body));
    return openAIImagesAdapter.streamGeneration(target.transport, target.connection, call);
  },
  edit(transport, connection, call) {
    const target = toDeployment(transport, connection, call.fields.model ?? '');
    return openAIImagesAdapter.edit(target.transport, target.connection, call);
  },
  streamEdit(transport, connection, call) {
    const target = toDeployment(transport, connection, call.fields.model ?? '');
    return openAIImagesAdapter.streamEdit(target.transport, target.connection, call);
  },
};

export const azureSpeechAdapter: SpeechAdapter = {
  synthesize(transport, connection, body) {
    const target = toDeployment(transport, connection, deploymentOf(body));
    return openAISpeechAdapter.synthesize(target.transport, target.connection, body);
  },
};

export const azureTranscriptionAdapter: TranscriptionAdapter = {
  transcribe(transport, connection, job) {
    const target = toDeployment(transport, connection, deploymentOf(job.fields));
    return openAITranscriptionAdapter.transcribe(target.transport, target.connection, job);
  },
};
