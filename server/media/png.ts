/**
 * PNG inspection, decoding and encoding.
 *
 * Decoding uses `pngjs`: it accepts every colour type, bit depth and
 * interlacing the PNG specification allows, normalises all of them to 8-bit
 * RGBA, checks chunk CRCs, and inflates with Node's native zlib (about twice
 * as fast as the pure-JS `fast-png` on a 2048² image here).
 *
 * Encoding is our own banded writer ({@link encodePngRows}): rows are produced
 * on demand and compressed a band at a time, so a 4096×4096 image never
 * exists unfiltered in memory, and repeated rows (the mock pictures are made
 * of them) cost almost nothing to compress.
 *
 * @see https://www.w3.org/TR/png-3/
 */
import { constants as zlibConstants, crc32, deflateRawSync } from 'node:zlib';
import pngjs from 'pngjs';
import { MediaFormatError } from './media-format-error.js';

export const PNG_SIGNATURE = Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** PNG colour types (IHDR byte 9). */
export const PNG_COLOR_TYPE = { grayscale: 0, truecolor: 2, indexed: 3, grayscaleAlpha: 4, truecolorAlpha: 6 } as const;

/** Bit depths allowed for each colour type (PNG spec, table 11.1). */
const ALLOWED_BIT_DEPTHS: Record<number, readonly number[]> = {
  0: [1, 2, 4, 8, 16],
  2: [8, 16],
  3: [1, 2, 4, 8],
  4: [8, 16],
  6: [8, 16],
};

/** What the header chunks of a PNG say, read without inflating the image data. */
export interface PngInfo {
  width: number;
  height: number;
  /** An alpha channel (colour types 4 and 6) or a `tRNS` transparency chunk. */
  hasAlpha: boolean;
  bitDepth: number;
  colorType: number;
  interlaced: boolean;
}

/** A decoded image: 8-bit RGBA, row-major, no padding. */
export interface RgbaImage {
  width: number;
  height: number;
  rgba: Uint8Array;
}

/** Largest image {@link decodePng} inflates unless told otherwise: 4096×4096 (64 MiB of RGBA). */
export const DEFAULT_MAX_DECODED_PIXELS = 4096 * 4096;

const readUint32 = (bytes: Uint8Array, offset: number): number =>
  ((bytes[offset]! << 24) | (bytes[offset + 1]! << 16) | (bytes[offset + 2]! << 8) | bytes[offset + 3]!) >>> 0;

const chunkTypeAt = (bytes: Uint8Array, offset: number): string =>
  String.fromCharCode(bytes[offset]!, bytes[offset + 1]!, bytes[offset + 2]!, bytes[offset + 3]!);

/**
 * Reads the size and pixel format of a PNG and checks its structure: the
 * signature, a valid `IHDR` first, every chunk's length and CRC, at least one
 * `IDAT`, and a closing `IEND`. Nothing is inflated, so a 4 MB file costs one
 * native CRC pass. Throws {@link MediaFormatError} (`unrecognized` for
 * non-PNG bytes, `corrupt` for a broken PNG).
 */
export function readPngInfo(bytes: Uint8Array): PngInfo {
  if (bytes.length < PNG_SIGNATURE.length || PNG_SIGNATURE.some((value, index) => bytes[index] !== value)) {
    throw new MediaFormatError('unrecognized', 'The file is not a PNG image.');
  }
  // Signature (8) + IHDR length, type, 13 data bytes and CRC (25).
  if (bytes.length < 8 + 25 || readUint32(bytes, 8) !== 13 || chunkTypeAt(bytes, 12) !== 'IHDR') {
    throw new MediaFormatError('corrupt', 'The PNG image has no valid IHDR header.');
  }
  const width = readUint32(bytes, 16);
  const height = readUint32(bytes, 20);
  const bitDepth = bytes[24]!;
  const colorType = bytes[25]!;
  const [compression, filter, interlace] = [bytes[26]!, bytes[27]!, bytes[28]!];
  if (width === 0 || height === 0 || width > 0x7fffffff || height > 0x7fffffff) {
    throw new MediaFormatError('corrupt', 'The PNG image has an invalid size.');
  }
  if (!ALLOWED_BIT_DEPTHS[colorType]?.includes(bitDepth) || compression !== 0 || filter !== 0 || interlace > 1) {
    throw new MediaFormatError('corrupt', 'The PNG image header has invalid format fields.');
  }

  let hasTransparencyChunk = false;
  let hasPalette = false;
  let hasImageData = false;
  let offset = 8;
  for (;;) {
    if (offset + 12 > bytes.length) throw new MediaFormatError('corrupt', 'The PNG image is truncated.');
    const length = readUint32(bytes, offset);
    if (length > 0x7fffffff || offset + 12 + length > bytes.length) {
      throw new MediaFormatError('corrupt', 'The PNG image is truncated.');
    }
    const type = chunkTypeAt(bytes, offset + 4);
    const storedCrc = readUint32(bytes, offset + 8 + length);
    if (crc32(bytes.subarray(offset + 4, offset + 8 + length)) !== storedCrc) {
      throw new MediaFormatError('corrupt', `The PNG image has a bad checksum in its ${JSON.stringify(type)} chunk.`);
    }
    if (type === 'PLTE') hasPalette = true;
    else if (type === 'tRNS' && !hasImageData) hasTransparencyChunk = true;
    else if (type === 'IDAT') hasImageData = true;
    else if (type === 'IEND') break;
    offset += 12 + length;
  }
  if (!hasImageData) throw new MediaFormatError('corrupt', 'The PNG image has no image data.');
  if (colorType === PNG_COLOR_TYPE.indexed && !hasPalette) {
    throw new MediaFormatError('corrupt', 'The indexed PNG image has no palette.');
  }
  return {
    width,
    height,
    hasAlpha: colorType === PNG_COLOR_TYPE.grayscaleAlpha || colorType === PNG_COLOR_TYPE.truecolorAlpha || hasTransparencyChunk,
    bitDepth,
    colorType,
    interlaced: interlace === 1,
  };
}

/**
 * Decodes any valid PNG to 8-bit RGBA. The header is checked first
 * ({@link readPngInfo}), so an image over `maxPixels` is refused
 * (`too_large`) before anything is inflated.
 */
export function decodePng(bytes: Uint8Array, options: { maxPixels?: number } = {}): RgbaImage {
  const info = readPngInfo(bytes);
  const maxPixels = options.maxPixels ?? DEFAULT_MAX_DECODED_PIXELS;
  if (info.width * info.height > maxPixels) {
    throw new MediaFormatError('too_large', `The PNG image is ${info.width}x${info.height}, over the ${maxPixels}-pixel limit.`);
  }
  try {
    const decoded = pngjs.PNG.sync.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    return { width: decoded.width, height: decoded.height, rgba: new Uint8Array(decoded.data.buffer, decoded.data.byteOffset, decoded.data.byteLength) };
  } catch (error) {
    throw new MediaFormatError('corrupt', 'The PNG image data cannot be decoded.', { cause: error });
  }
}

/**
 * A picture described row by row for {@link encodePngRows}.
 *
 * `fillRow(y, row)` writes row `y` (top first, called once per row in order)
 * into `row`: one palette index per pixel for `indexed`, 4 bytes per pixel for
 * `rgba`. The buffer is reused between calls and holds the previous row.
 */
export interface PngRowSource {
  width: number;
  height: number;
  format: 'indexed' | 'rgba';
  /** `indexed` only: RGB triples, at most 256 of them. */
  palette?: Uint8Array;
  fillRow(y: number, row: Uint8Array): void;
}

/** Rows compressed together: bounds memory to about 1 MiB whatever the image size. */
const BAND_BYTES = 1 << 20;

/** zlib header for deflate with a 32 KiB window, default compression (RFC 1950). */
const ZLIB_HEADER = Uint8Array.from([0x78, 0x9c]);

/** A final, empty, fixed-Huffman deflate block (RFC 1951 3.2.6): closes a stream of sync-flushed blocks. */
const FINAL_EMPTY_DEFLATE_BLOCK = Uint8Array.from([0x03, 0x00]);

/** One PNG chunk: length, type, data and the CRC-32 of type and data. */
export function pngChunk(type: string, data: Uint8Array): Buffer {
  const chunk = Buffer.allocUnsafe(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write(type, 4, 'latin1');
  chunk.set(data, 8);
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  return chunk;
}

/**
 * Encodes a picture row by row into a PNG (8-bit indexed or RGBA,
 * non-interlaced). Each row is stored with the `Up` filter, so a row equal to
 * the one above compresses to nearly nothing. Rows are deflated in bands of
 * about 1 MiB (zlib `compressionLevel`, default 6), each band closed with a sync flush so that the bands
 * concatenate into one zlib stream; memory stays bounded by the band size.
 */
export function encodePngRows(source: PngRowSource, options: { compressionLevel?: number } = {}): Buffer {
  const { width, height, format } = source;
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`Invalid PNG size ${width}x${height}.`);
  }
  const bytesPerPixel = format === 'rgba' ? 4 : 1;
  const rowBytes = width * bytesPerPixel;
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header[8] = 8;
  header[9] = format === 'rgba' ? PNG_COLOR_TYPE.truecolorAlpha : PNG_COLOR_TYPE.indexed;
  const chunks: Buffer[] = [Buffer.from(PNG_SIGNATURE), pngChunk('IHDR', header)];
  if (format === 'indexed') {
    const palette = source.palette;
    if (!palette || palette.length === 0 || palette.length % 3 !== 0 || palette.length > 768) {
      throw new RangeError('An indexed PNG needs a palette of 1 to 256 RGB triples.');
    }
    chunks.push(pngChunk('PLTE', palette));
  }

  const rowsPerBand = Math.max(1, Math.floor(BAND_BYTES / (rowBytes + 1)));
  const band = new Uint8Array(rowsPerBand * (rowBytes + 1));
  let previous = Buffer.alloc(rowBytes);
  let current = Buffer.alloc(rowBytes);
  // Adler-32 (RFC 1950 8.2) of the filtered bytes, kept as two sums. Doubles
  // hold them exactly for a whole row, so they are reduced once per row.
  let sumA = 1;
  let sumB = 0;
  let first = true;
  for (let bandStart = 0; bandStart < height; bandStart += rowsPerBand) {
    const bandRows = Math.min(rowsPerBand, height - bandStart);
    let position = 0;
    for (let y = bandStart; y < bandStart + bandRows; y++) {
      current.set(previous);
      source.fillRow(y, current);
      band[position++] = 2; // filter type Up; above the first row counts as zeros
      sumA += 2;
      sumB += sumA;
      if (current.equals(previous)) {
        band.fill(0, position, position + rowBytes);
        position += rowBytes;
        sumB += sumA * rowBytes;
      } else {
        for (let x = 0; x < rowBytes; x++) {
          const difference = (current[x]! - previous[x]!) & 0xff;
          band[position++] = difference;
          sumA += difference;
          sumB += sumA;
        }
      }
      sumA %= 65521;
      sumB %= 65521;
      [previous, current] = [current, previous];
    }
    const deflated = deflateRawSync(band.subarray(0, position), { level: options.compressionLevel ?? 6, finishFlush: zlibConstants.Z_SYNC_FLUSH });
    chunks.push(pngChunk('IDAT', first ? Buffer.concat([ZLIB_HEADER, deflated]) : deflated));
    first = false;
  }
  const trailer = Buffer.alloc(6);
  trailer.set(FINAL_EMPTY_DEFLATE_BLOCK, 0);
  trailer.writeUInt32BE(((sumB << 16) | sumA) >>> 0, 2);
  chunks.push(pngChunk('IDAT', trailer), pngChunk('IEND', new Uint8Array(0)));
  return Buffer.concat(chunks);
}

/** Encodes 8-bit RGBA pixels (row-major, `width * height * 4` bytes) as a PNG. */
export function encodePng(width: number, height: number, rgba: Uint8Array): Buffer {
  if (rgba.length !== width * height * 4) {
    throw new RangeError(`Expected ${width * height * 4} bytes of RGBA for ${width}x${height}, got ${rgba.length}.`);
  }
  const rowBytes = width * 4;
  return encodePngRows({
    width,
    height,
    format: 'rgba',
    fillRow: (y, row) => row.set(rgba.subarray(y * rowBytes, (y + 1) * rowBytes)),
  });
}
