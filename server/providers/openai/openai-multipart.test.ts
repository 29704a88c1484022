import { Readable } from 'node:stream';
import busboy from 'busboy';
import { describe, expect, it } from 'vitest';
import { writeMultipartBody, type MultipartPart } from './openai-multipart.js';

async function collect(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/** Parses a body with busboy, the parser the gateway itself reads uploads with. */
function parse(contentType: string, bytes: Buffer): Promise<{ fields: Record<string, string>; files: Array<{ field: string; filename: string; type: string; bytes: Buffer }> }> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    const files: Array<{ field: string; filename: string; type: string; bytes: Buffer }> = [];
    const parser = busboy({ headers: { 'content-type': contentType } });
    parser.on('field', (name, value) => (fields[name] = value));
    parser.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => files.push({ field, filename: info.filename ?? '', type: info.mimeType, bytes: Buffer.concat(chunks) }));
    });
    parser.on('close', () => resolve({ fields, files }));
    parser.on('error', reject);
    Readable.from([bytes]).pipe(parser);
  });
}

function file(name: string, filename: string, bytes: Buffer, chunkSize = 3): MultipartPart {
  return {
    kind: 'file',
    name,
    filename,
    contentType: 'image/png',
    size: bytes.length,
    async *open() {
      for (let offset = 0; offset < bytes.length; offset += chunkSize) yield bytes.subarray(offset, offset + chunkSize);
    },
  };
}

describe('writeMultipartBody', () => {
  const first = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 13, 10, 45, 45]);
  const second = Buffer.alloc(1000, 0xab);
  const parts: MultipartPart[] = [
    { kind: 'field', name: 'prompt', value: 'a hat, "quoted"\nand more — ünïcode' },
    { kind: 'field', name: 'n', value: '2' },
    file('image[]', 'one.png', first),
    file('image[]', 'tw"o\r\n.png', second, 64),
  ];

  it('writes a body busboy reads back exactly, with the announced length', async () => {
    const body = writeMultipartBody(parts);
    const bytes = await collect(body.body);
    expect(bytes.length).toBe(body.contentLength);
    const parsed = await parse(body.contentType, bytes);
    expect(parsed.fields).toEqual({ prompt: 'a hat, "quoted"\nand more — ünïcode', n: '2' });
    expect(parsed.files.map((entry) => [entry.field, entry.filename, entry.type, entry.bytes.equals(entry.filename === 'one.png' ? first : second)])).toEqual([
      ['image[]', 'one.png', 'image/png', true],
      ['image[]', 'tw%22o%0D%0A.png', 'image/png', true],
    ]);
  });

  it('can be read again (a retried request sends the same bytes) and uses a fresh boundary per body', async () => {
    const body = writeMultipartBody(parts);
    expect((await collect(body.body)).equals(await collect(body.body))).toBe(true);
    expect(writeMultipartBody(parts).contentType).not.toBe(body.contentType);
  });

  it('fails rather than send a body whose file changed size', async () => {
    const shrunk: MultipartPart = { ...(file('image', 'a.png', first) as Extract<MultipartPart, { kind: 'file' }>), size: first.length + 5 };
    await expect(collect(writeMultipartBody([shrunk]).body)).rejects.toThrow(/changed size/);
    const grown: MultipartPart = { ...(file('image', 'a.png', first) as Extract<MultipartPart, { kind: 'file' }>), size: first.length - 5 };
    await expect(collect(writeMultipartBody([grown]).body)).rejects.toThrow(/changed size/);
  });
});
