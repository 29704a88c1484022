import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { GatewayError } from '../server/errors.js';
import { UPLOAD_HEAD_BYTES, type UploadedFile, type UploadStore } from '../server/uploads/upload-store.js';

/** What a multipart route accepts: its file fields, each with a count and a size bound. */
export interface MultipartSpec {
  files: Record<string, { maxFiles: number; maxBytes: number }>;
  /** Most text fields, and the longest one (bytes). */
  maxFields?: number;
  maxFieldBytes?: number;
}

export interface MultipartBody {
  /** Text fields; a field sent several times (`x[]`) is an array. */
  fields: Record<string, string | string[]>;
  /** Uploaded files by field (`image[]` and `image` are kept apart). */
  files: Record<string, UploadedFile[]>;
}

function isMultipart(contentType: string | undefined): boolean {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase() === 'multipart/form-data';
}

/**
 * Reads a `multipart/form-data` body: text fields into memory (bounded),
 * files streamed to the upload store's disk as they arrive, each checked
 * against its field's bounds (413 past a size, 400 for an unexpected field
 * or too many files). A file past its bound is not read further. On any
 * failure the files written so far are removed.
 */
export function readMultipart(req: IncomingMessage, spec: MultipartSpec, store: UploadStore, totalLimit: number): Promise<MultipartBody> {
  if (!isMultipart(req.headers['content-type'])) {
    req.resume();
    return Promise.reject(new GatewayError('UNSUPPORTED_MEDIA_TYPE', `Expected a multipart/form-data body, got "${req.headers['content-type'] ?? 'none'}".`));
  }
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > totalLimit) {
    req.resume();
    return Promise.reject(new GatewayError('PAYLOAD_TOO_LARGE', `The request body is larger than ${totalLimit} bytes.`));
  }
  const maxFiles = Object.values(spec.files).reduce((sum, field) => sum + field.maxFiles, 0);
  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: req.headers,
      limits: { fields: spec.maxFields ?? 32, fieldSize: spec.maxFieldBytes ?? 64 * 1024, files: maxFiles + 1, parts: (spec.maxFields ?? 32) + maxFiles + 1, fieldNameSize: 200 },
      preservePath: false,
    });
  } catch (error) {
    req.resume();
    return Promise.reject(new GatewayError('INVALID_REQUEST', `The multipart body cannot be read: ${(error as Error).message}`));
  }
  return new Promise<MultipartBody>((resolve, reject) => {
    const fields: MultipartBody['fields'] = {};
    const files: MultipartBody['files'] = {};
    const written: UploadedFile[] = [];
    const pendingWrites: Promise<void>[] = [];
    let failed: GatewayError | undefined;
    let finished = false;

    const fail = (error: GatewayError) => {
      if (failed) return;
      failed = error;
      req.unpipe(parser);
      // The rest of the body is read and dropped, so the client sees the answer.
      req.resume();
      void Promise.allSettled(pendingWrites).then(async () => {
        for (const file of written) store.unreserve(file.size);
        await Promise.all(written.map((file) => rm(file.path, { force: true })));
        reject(error);
      });
    };

    parser.on('field', (name, value, info) => {
      if (failed) return;
      if (info.valueTruncated) return fail(new GatewayError('PAYLOAD_TOO_LARGE', `The field '${name}' is too long.`, { param: name }));
      const existing = fields[name];
      if (existing === undefined) fields[name] = value;
      else fields[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
    });

    parser.on('file', (name, stream, info) => {
      const bounds = spec.files[name];
      if (failed || !bounds) {
        stream.resume();
        if (!bounds) fail(new GatewayError('INVALID_REQUEST', `Unexpected file field '${name}'.`, { param: name }));
        return;
      }
      const list = (files[name] ??= []);
      if (list.length >= bounds.maxFiles) {
        stream.resume();
        return fail(new GatewayError('INVALID_REQUEST', `At most ${bounds.maxFiles} file(s) in '${name}'.`, { param: name }));
      }
      const { id, path } = store.newPath();
      const file: UploadedFile = { id, field: name, filename: info.filename ?? 'upload', contentType: info.mimeType, size: 0, path, head: Buffer.alloc(0) };
      list.push(file);
      written.push(file);
      const heads: Buffer[] = [];
      let headBytes = 0;
      const output = createWriteStream(path, { mode: 0o600 });
      pendingWrites.push(
        new Promise<void>((done) => {
          output.once('close', () => done());
          output.once('error', (error) => {
            fail(new GatewayError('INTERNAL_ERROR', 'The upload could not be stored.', { cause: error }));
            done();
          });
        }),
      );
      stream.on('data', (chunk: Buffer) => {
        if (failed) return;
        if (file.size + chunk.length > bounds.maxBytes) {
          stream.unpipe(output);
          stream.resume();
          output.destroy();
          return fail(new GatewayError('PAYLOAD_TOO_LARGE', `The file in '${name}' is larger than ${bounds.maxBytes} bytes.`, { param: name }));
        }
        if (!store.reserve(chunk.length)) {
          stream.unpipe(output);
          stream.resume();
          output.destroy();
          return fail(new GatewayError('SERVICE_UNAVAILABLE', 'Too many uploads in progress; retry shortly.', { retryAfter: 5 }));
        }
        file.size += chunk.length;
        if (headBytes < UPLOAD_HEAD_BYTES) {
          heads.push(chunk.subarray(0, UPLOAD_HEAD_BYTES - headBytes));
          headBytes += Math.min(chunk.length, UPLOAD_HEAD_BYTES - headBytes);
        }
      });
      stream.once('end', () => {
        file.head = Buffer.concat(heads);
      });
      stream.pipe(output);
    });

    parser.once('filesLimit', () => fail(new GatewayError('INVALID_REQUEST', 'Too many files.')));
    parser.once('fieldsLimit', () => fail(new GatewayError('INVALID_REQUEST', 'Too many fields.')));
    parser.once('partsLimit', () => fail(new GatewayError('INVALID_REQUEST', 'Too many parts.')));
    parser.once('error', (error: Error) => fail(new GatewayError('INVALID_REQUEST', `The multipart body cannot be read: ${error.message}`)));
    parser.once('close', () => {
      if (failed || finished) return;
      finished = true;
      void Promise.all(pendingWrites).then(() => {
        if (failed) return;
        for (const file of written) store.add(file);
        resolve({ fields, files });
      });
    });
    req.once('aborted', () => fail(new GatewayError('INVALID_REQUEST', 'The client closed the connection before the body was read.')));
    req.pipe(parser);
  });
}
