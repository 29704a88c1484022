/**
 * `GET /v1/images/files/{id}?expires&signature`: a generated image by its
 * signed link, without an API key. A bad signature and an expired link are
 * both `403 FORBIDDEN`, decided before the database is read, so neither
 * tells whether the id exists; a correctly signed, live link to an image
 * that is gone (swept) is `404 NOT_FOUND`. `Range` is served per RFC 9110
 * (media/byte-range.ts), with the image id as its strong entity tag.
 */
import type { BinaryAnswer } from '../answers.js';
import { GatewayError } from '../errors.js';
import { byteRangeHeaders, chooseByteRange } from '../media/byte-range.js';
import type { Services } from '../services.js';

export interface ImageFileRequest {
  id: string;
  expires: string;
  signature: string;
}

/** The request headers a download obeys. */
export interface DownloadHeaders {
  range?: string;
  'if-range'?: string;
}

export async function readImageFile(services: Services, request: ImageFileRequest, headers: DownloadHeaders = {}, now = new Date()): Promise<BinaryAnswer> {
  const store = services.generatedImages;
  if (store.checkLink(request.id, request.expires, request.signature, now) !== 'valid') {
    throw new GatewayError('FORBIDDEN', 'This image link is invalid or has expired.');
  }
  const image = await store.read(request.id, now);
  if (!image) throw new GatewayError('NOT_FOUND', 'This image no longer exists.');
  const bytes = image.bytes;
  // The bytes behind an id never change: the id is a strong tag.
  const etag = `"${request.id}"`;
  const choice = chooseByteRange(bytes.byteLength, { range: headers.range, ifRange: headers['if-range'] }, etag);
  const served = choice.kind === 'partial' ? bytes.subarray(choice.start, choice.end + 1) : bytes;
  const maxAge = Math.max(0, Math.floor((image.expiresAt.getTime() - now.getTime()) / 1000));
  return {
    kind: 'binary',
    contentType: image.contentType,
    contentLength: served.byteLength,
    status: choice.kind === 'partial' ? 206 : 200,
    body: (async function* () {
      yield served;
    })(),
    meta: {
      headers: {
        ...byteRangeHeaders(choice, bytes.byteLength, etag),
        // The bytes behind a link never change; it may be cached until it expires, by the client only.
        'cache-control': `private, max-age=${maxAge}, immutable`,
        'x-content-type-options': 'nosniff',
      },
    },
  };
}
