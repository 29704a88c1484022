/**
 * A `multipart/form-data` request body for an OpenAI-format upload: text
 * fields, then one file streamed from disk as it is sent (never whole in
 * memory), with its exact length known up front so the provider gets a
 * `content-length`. The body can be iterated again (a retry re-reads the file).
 *
 * @see https://www.rfc-editor.org/rfc/rfc7578
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';

/** The file part: where its bytes are and how to label them. */
export interface MultipartFilePart {
  field: string;
  path: string;
  filename: string;
  contentType: string;
  size: number;
}

export interface MultipartRequestBody {
  /** `multipart/form-data; boundary=…` */
  contentType: string;
  contentLength: number;
  body: AsyncIterable<Uint8Array>;
}

/**
 * Names and file names in part headers, escaped as browsers do (WHATWG
 * "multipart/form-data encoding algorithm"): a quote or a line break cannot
 * end the header.
 */
function escapeHeaderValue(value: string): string {
  return value.replaceAll('"', '%22').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
}

/** A declared content type fit for a part header (a client's value is not trusted to be one). */
function safeContentType(value: string): string {
  return /^[\w.+-]+\/[\w.+-]+$/.test(value) ? value : 'application/octet-stream';
}

/** Text fields (a field with several values is repeated, as `name[]` fields are sent) and one file, in that order. */
export function toMultipartBody(fields: Record<string, string | readonly string[]>, file: MultipartFilePart): MultipartRequestBody {
  const boundary = `----umg-${randomBytes(16).toString('hex')}`;
  let head = '';
  for (const [name, value] of Object.entries(fields)) {
    for (const item of typeof value === 'string' ? [value] : value) {
      head += `--${boundary}\r\ncontent-disposition: form-data; name="${escapeHeaderValue(name)}"\r\n\r\n${item}\r\n`;
    }
  }
  head +=
    `--${boundary}\r\ncontent-disposition: form-data; name="${escapeHeaderValue(file.field)}"; filename="${escapeHeaderValue(file.filename)}"\r\n` +
    `content-type: ${safeContentType(file.contentType)}\r\n\r\n`;
  const headBytes = Buffer.from(head, 'utf8');
  const tailBytes = Buffer.from(`\r\n--${boundary}--\r\n`, 'latin1');
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    contentLength: headBytes.length + file.size + tailBytes.length,
    body: {
      async *[Symbol.asyncIterator]() {
        yield headBytes;
        for await (const chunk of createReadStream(file.path)) yield chunk as Buffer;
        yield tailBytes;
      },
    },
  };
}
