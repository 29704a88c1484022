/**
 * A `multipart/form-data` body written by the gateway (RFC 7578), for
 * forwarding uploads to an OpenAI-format provider: text fields, then files
 * streamed from disk as they are read, never whole in memory. The length is
 * known in advance (the files' sizes are), so the body goes out with a
 * `content-length` rather than chunked; a file whose size changed on disk
 * fails the upload instead of sending a body that disagrees with it.
 *
 * The body can be iterated more than once (each pass reads the files again),
 * so a retried request sends the same bytes.
 */
import { randomBytes } from 'node:crypto';

export type MultipartPart =
  | { kind: 'field'; name: string; value: string }
  | { kind: 'file'; name: string; filename: string; contentType: string; size: number; open(): AsyncIterable<Uint8Array> };

export interface MultipartBody {
  contentType: string;
  contentLength: number;
  body: AsyncIterable<Uint8Array>;
}

/** Quotes, CR and LF in a name or filename, percent-encoded as browsers do (WHATWG "multipart/form-data encoding"). */
function escapeHeaderValue(value: string): string {
  return value.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

function partHead(boundary: string, part: MultipartPart): Buffer {
  const disposition =
    part.kind === 'field'
      ? `form-data; name="${escapeHeaderValue(part.name)}"`
      : `form-data; name="${escapeHeaderValue(part.name)}"; filename="${escapeHeaderValue(part.filename)}"`;
  const type = part.kind === 'file' ? `\r\nContent-Type: ${part.contentType.replace(/[\r\n]/g, '') || 'application/octet-stream'}` : '';
  return Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}${type}\r\n\r\n`, 'utf8');
}

const LINE_END = Buffer.from('\r\n');

/** Writes `parts` as one multipart body with a fresh random boundary. */
export function writeMultipartBody(parts: readonly MultipartPart[]): MultipartBody {
  const boundary = `----umg-${randomBytes(16).toString('hex')}`;
  const heads = parts.map((part) => partHead(boundary, part));
  const values = parts.map((part) => (part.kind === 'field' ? Buffer.from(part.value, 'utf8') : undefined));
  const closing = Buffer.from(`--${boundary}--\r\n`);
  let contentLength = closing.length;
  parts.forEach((part, index) => {
    contentLength += heads[index]!.length + (part.kind === 'field' ? values[index]!.length : part.size) + LINE_END.length;
  });

  async function* generate(): AsyncGenerator<Uint8Array> {
    for (const [index, part] of parts.entries()) {
      yield heads[index]!;
      if (part.kind === 'field') {
        yield values[index]!;
      } else {
        let sent = 0;
        for await (const chunk of part.open()) {
          sent += chunk.length;
          if (sent > part.size) break;
          yield chunk;
        }
        if (sent !== part.size) throw new Error(`the upload "${part.name}" changed size while it was sent`);
      }
      yield LINE_END;
    }
    yield closing;
  }

  return { contentType: `multipart/form-data; boundary=${boundary}`, contentLength, body: { [Symbol.asyncIterator]: generate } };
}
