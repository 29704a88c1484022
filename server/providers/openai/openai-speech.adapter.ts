/**
 * `POST /audio/speech` on an OpenAI-format provider: the validated body goes
 * as it is (model already the upstream's), and the provider's audio comes
 * back with its own content type, passed on chunk by chunk as it arrives.
 *
 * @see https://platform.openai.com/docs/api-reference/audio/createSpeech
 */
import { ClientAbortedError, GatewayError, UpstreamError } from '../../errors.js';
import type { SpeechAdapter, UpstreamResponse, UpstreamTransport } from '../types.js';
import { buildOpenAIHeaders } from './openai.adapter.js';
import { parseOpenAIError } from './openai-errors.js';

/** `baseUrl` (with its `/v1`) and an operation path. */
export function joinOpenAIUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

/** A 200 that is not audio (JSON, an SSE stream) is the provider misbehaving, not sound to pass on. */
function isAudioContentType(contentType: string): boolean {
  const type = contentType.split(';')[0]!.trim().toLowerCase();
  return type !== 'application/json' && type !== 'text/event-stream' && !type.startsWith('text/');
}

/** The body's chunks; a broken connection becomes an UpstreamError, the client leaving a ClientAbortedError. */
async function* readAudioBody(response: UpstreamResponse, transport: UpstreamTransport): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of response.body) yield chunk;
  } catch (error) {
    if (transport.signal.aborted) throw new ClientAbortedError();
    if (error instanceof UpstreamError || error instanceof GatewayError) throw error;
    throw new UpstreamError(`the provider connection failed during the audio (${(error as { code?: string }).code ?? (error as Error).name})`, {
      status: 0,
      provider: transport.providerId,
      retryable: false,
      cause: error,
    });
  } finally {
    response.body.destroy();
  }
}

export const openAISpeechAdapter: SpeechAdapter = {
  async synthesize(transport, connection, body) {
    const response = await transport.send(
      { method: 'POST', url: joinOpenAIUrl(connection.baseUrl, '/audio/speech'), headers: buildOpenAIHeaders(connection), body: JSON.stringify(body) },
      parseOpenAIError,
    );
    const contentType = response.headers['content-type'] ?? 'application/octet-stream';
    if (!isAudioContentType(contentType)) {
      response.body.destroy();
      throw new UpstreamError(`the provider answered ${contentType.split(';')[0]} instead of audio`, { status: 502, provider: connection.id, retryable: false });
    }
    return { contentType, chunks: readAudioBody(response, transport) };
  },
};
