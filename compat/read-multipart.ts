import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import { GatewayError } from '../server/errors.js';
import { UPLOAD_HEAD_BYTES, type RequestUploads, type UploadedFile } from '../server/uploads/upload-store.js';

/** What a multipart route accepts: its file fields, each with a count and a size bound. */
export interface MultipartSpec {
  files: Record<string, { maxFiles: number; maxBytes: number }>;
  /** Most text fields, and the longest one (bytes). */
  maxFields?: number;
  maxFieldBytes?: number;
}

export interface MultipartLimits {
  /** Largest body, counted on the bytes read, chunked or not (413 past it, at once when Content-Length says so). */
  maxBytes: number;
  /** Longest pause between two pieces of the body (408 past it). */
  idleTimeoutMs: number;
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
 * files streamed to the request's uploads on disk as they arrive, each
 * checked against its field's bounds (413 past a size, 400 for an
 * unexpected field or too many files), the whole body against `maxBytes`
 * as it is read (413), a pause past `idleTimeoutMs` ending it (408). It
 * settles however the body ends: on any failure, or when the client goes
 * away (reset, or a close before the body's end), the reading stops and the
 * request's uploads are ended (files removed, their budget given back).
 */
export function readMultipart(req: IncomingMessage, spec: MultipartSpec, uploads: RequestUploads, limits: MultipartLimits): Promise<MultipartBody> {
  if (!isMultipart(req.headers['content-type'])) {
    req.resume();
    return Promise.reject(new GatewayError('UNSUPPORTED_MEDIA_TYPE', `Expected a multipart/form-data body, got "${req.headers['content-type'] ?? 'none'}".`));
  }
  const tooLarge = () => new GatewayError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limits.maxBytes} bytes.`);
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.maxBytes) {
    req.resume();
    return Promise.reject(tooLarge());
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
    const written: Promise<boolean>[] = [];
    let bytesRead = 0;
    let settled = false;
    let bodyEnded = false;
    let timer: NodeJS.Timeout | undefined;

    const detach = () => {
      settled = true;
      clearTimeout(timer);
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onError);
      uploads.signal.removeEventListener('abort', onUploadsEnded);
    };
    const fail = (error: GatewayError) => {
      if (settled) return;
      detach();
      parser.destroy();
      // The rest of the body is read and dropped, so the client sees the answer.
      req.resume();
      // A failure to remove is the request's to log (app.ts); the answer is this error.
      void uploads
        .end()
        .catch(() => undefined)
        .then(() => reject(error));
    };
    // The timer runs while the body is ours to read, not while the disk holds it back.
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => fail(new GatewayError('REQUEST_TIMEOUT', `The request body stalled for more than ${limits.idleTimeoutMs} ms.`)), limits.idleTimeoutMs);
      timer.unref();
    };
    const onData = (chunk: Buffer) => {
      bytesRead += chunk.length;
      if (bytesRead > limits.maxBytes) return fail(tooLarge());
      const flowing = parser.write(chunk);
      // Writing may have ended the reading (a refused part): the rest is being dropped then.
      if (settled) return;
      if (flowing) return arm();
      clearTimeout(timer);
      req.pause();
    };
    const onEnd = () => {
      bodyEnded = true;
      clearTimeout(timer);
      parser.end();
    };
    const clientGone = () => new GatewayError('INVALID_REQUEST', 'The client closed the connection before the body was read.');
    const onClose = () => {
      if (!req.complete) fail(clientGone());
    };
    const onError = () => fail(clientGone());
    const onUploadsEnded = () => fail(clientGone());

    parser.on('drain', () => {
      if (settled || bodyEnded) return;
      arm();
      req.resume();
    });

    parser.on('field', (name, value, info) => {
      if (settled) return;
      if (info.valueTruncated) return fail(new GatewayError('PAYLOAD_TOO_LARGE', `The field '${name}' is too long.`, { param: name }));
      const existing = fields[name];
      if (existing === undefined) fields[name] = value;
      else fields[name] = Array.isArray(existing) ? [...existing, value] : [existing, value];
    });

    parser.on('file', (name, stream, info) => {
      // A parser destroyed on failure destroys its file stream with an error: expected.
      stream.on('error', () => undefined);
      const bounds = spec.files[name];
      if (settled || !bounds) {
        stream.resume();
        if (!bounds) fail(new GatewayError('INVALID_REQUEST', `Unexpected file field '${name}'.`, { param: name }));
        return;
      }
      const list = (files[name] ??= []);
      if (list.length >= bounds.maxFiles) {
        stream.resume();
        return fail(new GatewayError('INVALID_REQUEST', `At most ${bounds.maxFiles} file(s) in '${name}'.`, { param: name }));
      }
      const created = uploads.create(name, info.filename ?? 'upload', info.mimeType);
      if (!created) {
        stream.resume();
        return fail(clientGone());
      }
      const { file, output } = created;
      list.push(file);
      written.push(new Promise<boolean>((done) => output.once('close', () => done(output.writableFinished))));
      output.once('error', (error) => fail(new GatewayError('INTERNAL_ERROR', 'The upload could not be stored.', { cause: error })));
      const heads: Buffer[] = [];
      let headBytes = 0;
      stream.on('data', (chunk: Buffer) => {
        if (settled) return;
        if (file.size + chunk.length > bounds.maxBytes) {
          return fail(new GatewayError('PAYLOAD_TOO_LARGE', `The file in '${name}' is larger than ${bounds.maxBytes} bytes.`, { param: name }));
        }
        if (!uploads.grow(file, chunk.length)) {
          return fail(uploads.signal.aborted ? clientGone() : new GatewayError('SERVICE_UNAVAILABLE', 'Too many uploads in progress; retry shortly.', { retryAfter: 5 }));
        }
        if (headBytes < UPLOAD_HEAD_BYTES) {
          heads.push(chunk.subarray(0, UPLOAD_HEAD_BYTES - headBytes));
          headBytes += Math.min(chunk.length, UPLOAD_HEAD_BYTES - headBytes);
        }
        if (!output.write(chunk)) {
          stream.pause();
          output.once('drain', () => stream.resume());
        }
      });
      stream.once('end', () => {
        file.head = Buffer.concat(heads);
        output.end();
      });
    });

    parser.once('filesLimit', () => fail(new GatewayError('INVALID_REQUEST', 'Too many files.')));
    parser.once('fieldsLimit', () => fail(new GatewayError('INVALID_REQUEST', 'Too many fields.')));
    parser.once('partsLimit', () => fail(new GatewayError('INVALID_REQUEST', 'Too many parts.')));
    parser.on('error', (error: Error) => fail(new GatewayError('INVALID_REQUEST', `The multipart body cannot be read: ${error.message}`)));
    // The form has ended: the files are whole once every writer has closed.
    parser.once('finish', () => {
      void Promise.all(written).then((whole) => {
        if (settled) return;
        if (!whole.every(Boolean)) return fail(new GatewayError('INTERNAL_ERROR', 'The upload could not be stored.'));
        detach();
        for (const file of Object.values(files).flat()) uploads.markReady(file);
        resolve({ fields, files });
      });
    });

    if (uploads.signal.aborted) return fail(clientGone());
    uploads.signal.addEventListener('abort', onUploadsEnded, { once: true });
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
    req.on('error', onError);
    arm();
  });
}
