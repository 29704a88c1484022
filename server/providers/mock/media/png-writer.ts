/**
 * Encodes 8-bit RGB pixels as a PNG file with Node's zlib. Every row uses
 * the "Up" filter: the mock pictures are made of flat blocks, so most rows
 * equal the one above and filter to zeros, which deflate shrinks to almost
 * nothing.
 *
 * @see https://www.w3.org/TR/png-3/ (chunks, filter type 2, CRC-32)
 */
import { promisify } from 'node:util';
import { crc32, deflate } from 'node:zlib';

/** Deflate runs on the libuv thread pool, off the event loop: a 1080p frame is about 6 MB of input. */
const deflateAsync = promisify(deflate);

const SIGNATURE = Uint8Array.of(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a);
const FILTER_UP = 2;
const COLOUR_TYPE_RGB = 2;

/** `rgb` holds `width × height` pixels, three bytes each, rows top to bottom. */
export async function encodeRgbPng(width: number, height: number, rgb: Uint8Array): Promise<Buffer> {
  const rowBytes = width * 3;
  if (rgb.length !== rowBytes * height) {
    throw new RangeError(`expected ${rowBytes * height} bytes of RGB, got ${rgb.length}`);
  }
  const filtered = Buffer.alloc((rowBytes + 1) * height);
  for (let y = 0; y < height; y++) {
    const out = y * (rowBytes + 1);
    const row = y * rowBytes;
    filtered[out] = FILTER_UP;
    if (y === 0) {
      filtered.set(rgb.subarray(0, rowBytes), out + 1);
      continue;
    }
    const above = rgb.subarray(row - rowBytes, row);
    const current = rgb.subarray(row, row + rowBytes);
    // A row equal to the one above filters to zeros, which `filtered` already holds.
    if (Buffer.compare(above, current) === 0) continue;
    for (let i = 0; i < rowBytes; i++) filtered[out + 1 + i] = (current[i] - above[i]) & 0xff;
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8; // bit depth
  header[9] = COLOUR_TYPE_RGB;
  // compression, filter method and interlace stay 0
  return Buffer.concat([
    SIGNATURE,
    writeChunk('IHDR', header),
    writeChunk('IDAT', await deflateAsync(filtered)),
    writeChunk('IEND', Buffer.alloc(0)),
  ]);
}

function writeChunk(type: string, data: Uint8Array): Buffer {
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write(type, 4, 'latin1');
  chunk.set(data, 8);
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  return chunk;
}
