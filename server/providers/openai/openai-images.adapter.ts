/**
 * Image generation and edits on an OpenAI-format provider. Generation bodies
 * are passed through (only `model` swapped); edits are re-sent as a
 * multipart body the gateway writes, with the client's text fields and its
 * files streamed from disk byte for byte. Streams (`stream: true`) relay the
 * provider's `image_generation.*` / `image_edit.*` events; an error event
 * ends them with an UpstreamError.
 *
 * @see https://platform.openai.com/docs/api-reference/images
 */
import { UpstreamError } from '../../errors.js';
import type { ImagesResponse, ImageStreamEvent } from './openai-images.wire.js';
import type { ImageEditCall, ImagesAdapter, ProviderConnection, UpstreamHttpRequest, UpstreamResponse, UpstreamTransport } from '../types.js';
import { parseOpenAIError } from './openai-errors.js';
import { writeMultipartBody, type MultipartPart } from './openai-multipart.js';
import { buildOpenAIHeaders, joinOpenAIUrl } from './openai.adapter.js';
import { isRecord, readString } from './json-values.js';

function buildGenerationRequest(connection: ProviderConnection, body: Record<string, unknown>): UpstreamHttpRequest {
  return { method: 'POST', url: joinOpenAIUrl(connection.baseUrl, '/images/generations'), headers: buildOpenAIHeaders(connection), body: JSON.stringify(body) };
}

/** The edit as the provider's multipart form: the text fields, the images under the field names the client used, then the mask. */
export function buildEditRequest(connection: ProviderConnection, call: ImageEditCall): UpstreamHttpRequest {
  const parts: MultipartPart[] = Object.entries(call.fields).map(([name, value]) => ({ kind: 'field', name, value }));
  for (const file of [...call.images, ...(call.mask ? [call.mask] : [])]) {
    parts.push({ kind: 'file', name: file.field, filename: file.filename, contentType: file.contentType, size: file.size, open: () => file.open() });
  }
  const multipart = writeMultipartBody(parts);
  const headers = buildOpenAIHeaders(connection);
  headers['content-type'] = multipart.contentType;
  headers['content-length'] = String(multipart.contentLength);
  return { method: 'POST', url: joinOpenAIUrl(connection.baseUrl, '/images/edits'), headers, body: multipart.body };
}

async function readImages(transport: UpstreamTransport, connection: ProviderConnection, response: UpstreamResponse): Promise<ImagesResponse> {
  const { value } = await transport.readJson(response);
  if (!isRecord(value) || !Array.isArray(value.data)) {
    throw new UpstreamError('the provider answered without image data', { status: 502, provider: connection.id, retryable: false });
  }
  return { ...value, created: typeof value.created === 'number' ? value.created : Math.floor(Date.now() / 1000), data: value.data };
}

/** The provider's events; an error frame (an `error` event, or data with an `error` object) ends the stream as an UpstreamError. */
async function* readImageEvents(transport: UpstreamTransport, connection: ProviderConnection, response: UpstreamResponse): AsyncGenerator<ImageStreamEvent> {
  for await (const frame of transport.readEvents(response)) {
    if (frame.data === '[DONE]') return;
    let data: unknown;
    try {
      data = JSON.parse(frame.data);
    } catch (error) {
      throw new UpstreamError('the provider sent an event that is not JSON', { status: 502, provider: connection.id, retryable: false, cause: error });
    }
    if (!isRecord(data)) continue;
    const failure = isRecord(data.error) ? data.error : frame.event === 'error' || data.type === 'error' ? data : undefined;
    if (failure) {
      const message = readString(failure.message) ?? 'The provider reported an error during the stream.';
      throw new UpstreamError(message.slice(0, 1000), { status: 502, provider: connection.id, retryable: false, upstreamType: readString(failure.type) ?? readString(failure.code) ?? null });
    }
    if (typeof data.type === 'string') yield data as ImageStreamEvent;
  }
}

export const openAIImagesAdapter: ImagesAdapter = {
  async generate(transport, connection, call) {
    return readImages(transport, connection, await transport.send(buildGenerationRequest(connection, call.body), parseOpenAIError));
  },
  async streamGeneration(transport, connection, call) {
    const response = await transport.send(buildGenerationRequest(connection, call.body), parseOpenAIError);
    return readImageEvents(transport, connection, response);
  },
  async edit(transport, connection, call) {
    return readImages(transport, connection, await transport.send(buildEditRequest(connection, call), parseOpenAIError));
  },
  async streamEdit(transport, connection, call) {
    const response = await transport.send(buildEditRequest(connection, call), parseOpenAIError);
    return readImageEvents(transport, connection, response);
  },
};
