/**
 * Encodes 8-bit RGB pixels as a PNG file with Node's zlib. Every row uses
 * the "Up" filter: the mock pictures are made of flat blocks, so most rows
 * equal the one above and filter to zeros, which deflate shrinks to almost
 * nothing.
 *
 * @see https://www.w3.org/TR/png-3/ (chunks, filter type 2, CRC-32)
 */
import { promisify } from 'node:util';
import { deflate } from 'node:zlib';
import { PNG_COLOR_TYPE, PNG_SIGNATURE, pngChunk } from '../../../media/png.js';

/** Deflate runs on the libuv thread pool, off the event loop: a 1080p frame is about 6 MB of input. */
const deflateAsync = promisify(deflate);

const FILTER_UP = 2;

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
  header[9] = PNG_COLOR_TYPE.truecolor;
  // compression, filter method and interlace stay 0
  return Buffer.concat([
    PNG_SIGNATURE,
    pngChunk('IHDR', header),
    pngChunk('IDAT', await deflateAsync(filtered)),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}
