/**
 * The OpenAI video API over HTTP: `POST /videos` (multipart, as the official
 * SDK sends it), `GET /videos/{id}` to poll, `GET /videos/{id}/content`
 * (`?variant=thumbnail|spritesheet`) to download, `DELETE /videos/{id}`.
 *
 * @see https://platform.openai.com/docs/api-reference/videos
 */
import { randomBytes } from 'node:crypto';
import { UpstreamError } from '../../errors.js';
import type { ProviderConnection, UpstreamFile, UpstreamTransport, UpstreamVideo, VideoJobRef, VideosAdapter, VideoVariant } from '../types.js';
import { buildOpenAIHeaders } from './openai.adapter.js';
import { parseOpenAIError } from './openai-errors.js';
import { openAIVideoWireSchema, type OpenAIVideoWire } from './openai-videos.wire.js';

/** Content types of the variants when the provider does not say (OpenAI: webp thumbnail, jpeg spritesheet). */
const DEFAULT_CONTENT_TYPES: Record<VideoVariant, string> = { video: 'video/mp4', thumbnail: 'image/webp', spritesheet: 'image/jpeg' };

function videoUrl(connection: ProviderConnection, id: string, suffix = ''): string {
  return `${connection.baseUrl.replace(/\/+$/, '')}/videos/${encodeURIComponent(id)}${suffix}`;
}

/** Headers of a request without a JSON body. */
function bareHeaders(connection: ProviderConnection): Record<string, string> {
  const headers = buildOpenAIHeaders(connection);
  delete headers['content-type'];
  return headers;
}

/** A multipart part's header block. Names and file names are ours or escaped (no quote or line break gets through). */
function partHeader(boundary: string, name: string, file?: { filename: string; contentType: string }): Buffer {
  const disposition = file
    ? `form-data; name="${name}"; filename="${file.filename.replace(/["\r\n\\]/g, '_')}"`
    : `form-data; name="${name}"`;
  const type = file ? `\r\nContent-Type: ${file.contentType}` : '';
  return Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}${type}\r\n\r\n`);
}

/**
 * The create body as `multipart/form-data`, streamed (the reference file is
 * read from storage as it is sent, never whole in memory), with its exact
 * length so the provider sees a `content-length`.
 */
function toMultipartBody(fields: Record<string, string>, file: UpstreamFile | undefined): { boundary: string; length: number; body: AsyncIterable<Uint8Array> } {
  const boundary = `umg-${randomBytes(16).toString('hex')}`;
  const head: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) head.push(partHeader(boundary, name, undefined), Buffer.from(value, 'utf8'), Buffer.from('\r\n'));
  const fileHeader = file ? partHeader(boundary, 'input_reference', file) : Buffer.alloc(0);
  const closing = Buffer.from(`${file ? '\r\n' : ''}--${boundary}--\r\n`);
  const length = head.reduce((sum, part) => sum + part.length, 0) + fileHeader.length + (file?.size ?? 0) + closing.length;
  async function* body(): AsyncGenerator<Uint8Array> {
    for (const part of head) yield part;
    if (file) {
      yield fileHeader;
      let sent = 0;
      for await (const chunk of file.open()) {
        sent += chunk.length;
        yield chunk;
      }
      if (sent !== file.size) throw new Error(`the input reference changed size while it was sent (${sent} of ${file.size} bytes)`);
    }
    yield closing;
  }
  return { boundary, length, body: body() };
}

/** The provider's video object → ours. */
export function fromOpenAIVideo(wire: OpenAIVideoWire): UpstreamVideo {
  const status = wire.status === 'completed' ? 'completed' : wire.status === 'failed' || wire.status === 'cancelled' ? 'failed' : wire.status === 'queued' ? 'queued' : 'in_progress';
  const video: UpstreamVideo = { id: wire.id, status };
  if (typeof wire.progress === 'number') video.progress = Math.max(0, Math.min(100, Math.round(wire.progress)));
  const seconds = Number(wire.seconds);
  if (status === 'completed' && Number.isFinite(seconds) && seconds > 0) video.durationSeconds = seconds;
  if (status === 'failed') {
    const error = wire.error;
    video.error = (typeof error === 'string' ? error : (error?.message ?? error?.code)) || `The provider reports the generation as ${wire.status}.`;
  }
  return video;
}

async function readVideo(transport: UpstreamTransport, connection: ProviderConnection, response: Awaited<ReturnType<UpstreamTransport['send']>>): Promise<UpstreamVideo> {
  const { value } = await transport.readJson(response);
  const parsed = openAIVideoWireSchema.safeParse(value);
  if (!parsed.success) throw new UpstreamError('the provider answered without a video object', { status: 502, provider: connection.id, retryable: false });
  return fromOpenAIVideo(parsed.data);
}

export const openAIVideosAdapter: VideosAdapter = {
  async create(transport, connection, request, options) {
    const fields: Record<string, string> = { model: request.model, prompt: request.prompt, size: request.size, seconds: String(request.seconds) };
    const multipart = toMultipartBody(fields, request.inputReference);
    const response = await transport.send(
      {
        method: 'POST',
        url: `${connection.baseUrl.replace(/\/+$/, '')}/videos`,
        headers: {
          ...bareHeaders(connection),
          'content-type': `multipart/form-data; boundary=${multipart.boundary}`,
          'content-length': String(multipart.length),
          'idempotency-key': options.idempotencyKey,
        },
        body: multipart.body,
      },
      parseOpenAIError,
    );
    return readVideo(transport, connection, response);
  },

  async retrieve(transport, connection, job) {
    const response = await transport.send({ method: 'GET', url: videoUrl(connection, job.providerJobId), headers: bareHeaders(connection) }, parseOpenAIError);
    return readVideo(transport, connection, response);
  },

  async download(transport, connection, job, variant) {
    const query = variant === 'video' ? '' : `?variant=${variant}`;
    const response = await transport.send(
      { method: 'GET', url: videoUrl(connection, job.providerJobId, `/content${query}`), headers: { ...bareHeaders(connection), accept: 'application/binary' } },
      parseOpenAIError,
    );
    const declared = Number(response.headers['content-length']);
    const contentType = response.headers['content-type']?.split(';')[0]?.trim() || DEFAULT_CONTENT_TYPES[variant];
    return { contentType, ...(Number.isFinite(declared) && declared >= 0 ? { contentLength: declared } : {}), body: response.body };
  },

  async remove(transport, connection, job: VideoJobRef) {
    try {
      const response = await transport.send({ method: 'DELETE', url: videoUrl(connection, job.providerJobId), headers: bareHeaders(connection) }, parseOpenAIError);
      // Read to the end (small): the connection goes back to the pool.
      await transport.readBytes(response, 1024 * 1024);
    } catch (error) {
      if (error instanceof UpstreamError && error.status === 404) return;
      throw error;
    }
  },
};
