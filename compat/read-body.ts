import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../server/errors.js';

/** Reads a request body up to `limit` bytes (413 PAYLOAD_TOO_LARGE past it). Events, not an async iterator: cheaper per request. */
export function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    return Promise.reject(new GatewayError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`));
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (error?: Error) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
      if (error) {
        req.resume();
        reject(error);
      } else {
        resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
      }
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) finish(new GatewayError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`));
      else chunks.push(chunk);
    };
    const onEnd = () => finish();
    const onError = (error: Error) => finish(error);
    const onClose = () => finish(new GatewayError('INVALID_REQUEST', 'The client closed the connection before the body was read.'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

function isJsonContentType(contentType: string | undefined): boolean {
  if (!contentType) return true;
  const mediaType = contentType.split(';')[0]!.trim().toLowerCase();
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

/** A JSON object body: 415 for another content type, 400 for broken or non-object JSON. */
export async function readJsonBody(req: IncomingMessage, limit: number): Promise<{ value: Record<string, unknown>; raw: Buffer }> {
  if (!isJsonContentType(req.headers['content-type'])) {
    req.resume();
    throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', `Expected an application/json body, got "${req.headers['content-type']}".`);
  }
  const raw = await readRawBody(req, limit);
  if (raw.length === 0) throw new GatewayError('INVALID_REQUEST', 'The request body is empty; a JSON object is required.');
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch (error) {
    throw new GatewayError('INVALID_REQUEST', `The request body is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new GatewayError('INVALID_REQUEST', 'The request body must be a JSON object.');
  }
  return { value: value as Record<string, unknown>, raw };
}
