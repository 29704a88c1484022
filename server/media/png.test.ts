import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pngjs from 'pngjs';
import { afterAll, describe, expect, it } from 'vitest';
import { MediaFormatError } from './media-format-error.js';
import { decodePng, encodePng, encodePngRows, PNG_COLOR_TYPE, readPngInfo } from './png.js';
import { requireTool } from './media-test-tools.js';

const workDirectory = mkdtempSync(join(tmpdir(), 'png-test-'));
afterAll(() => rmSync(workDirectory, { recursive: true, force: true }));

function gradient(width: number, height: number): Uint8Array {
  const rgba = new Uint8Array(width * height * 4);
  for (let index = 0; index < rgba.length; index++) rgba[index] = (index * 7 + (index >> 9)) & 0xff;
  return rgba;
}

function expectMediaError(action: () => unknown, reason: MediaFormatError['reason']): void {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(MediaFormatError);
    expect((error as MediaFormatError).reason).toBe(reason);
    return;
  }
  throw new Error('expected a MediaFormatError');
}

describe('encodePng and decodePng', () => {
  it('round-trips RGBA pixels exactly', () => {
    const rgba = gradient(301, 203);
    const png = encodePng(301, 203, rgba);
    const decoded = decodePng(png);
    expect([decoded.width, decoded.height]).toEqual([301, 203]);
    expect(Buffer.from(decoded.rgba).equals(Buffer.from(rgba))).toBe(true);
  });

  it('writes files that ffmpeg decodes to the same size', () => {
    const path = join(workDirectory, 'gradient.png');
    writeFileSync(path, encodePng(640, 480, gradient(640, 480)));
    const probe = JSON.parse(execFileSync(requireTool('ffprobe'), ['-v', 'error', '-show_entries', 'stream=codec_name,width,height', '-of', 'json', path], { encoding: 'utf8' }));
    expect(probe.streams[0]).toMatchObject({ codec_name: 'png', width: 640, height: 480 });
  });

  it('encodes indexed rows with their palette, spanning several compressed bands', () => {
    const palette = Uint8Array.from([255, 0, 0, 0, 255, 0, 0, 0, 255]);
    // 1500 rows of 1500 bytes is over the 1 MiB band, so the zlib stream has several segments.
    const png = encodePngRows({ width: 1500, height: 1500, format: 'indexed', palette, fillRow: (y, row) => row.fill(Math.floor(y / 500)) });
    expect(readPngInfo(png)).toMatchObject({ colorType: PNG_COLOR_TYPE.indexed, bitDepth: 8, hasAlpha: false });
    const decoded = decodePng(png);
    const pixelAt = (x: number, y: number) => Array.from(decoded.rgba.subarray((y * 1500 + x) * 4, (y * 1500 + x) * 4 + 4));
    expect(pixelAt(0, 0)).toEqual([255, 0, 0, 255]);
    expect(pixelAt(1499, 700)).toEqual([0, 255, 0, 255]);
    expect(pixelAt(3, 1499)).toEqual([0, 0, 255, 255]);
  });

  it('decodes other colour types to RGBA (16-bit grey)', () => {
    const grey = new pngjs.PNG({ width: 4, height: 2, colorType: 0, inputColorType: 6, bitDepth: 16, inputHasAlpha: true });
    grey.data.fill(200);
    const bytes = pngjs.PNG.sync.write(grey, { colorType: 0, inputColorType: 6, bitDepth: 16 });
    expect(readPngInfo(bytes)).toMatchObject({ colorType: 0, bitDepth: 16, hasAlpha: false });
    const decoded = decodePng(bytes);
    expect(decoded.rgba.length).toBe(4 * 2 * 4);
    expect(decoded.rgba[3]).toBe(255);
  });

  it('refuses a wrong RGBA length', () => {
    expect(() => encodePng(10, 10, new Uint8Array(10))).toThrow(RangeError);
  });

  it('refuses an image over the pixel limit before inflating it', () => {
    const png = encodePng(64, 64, gradient(64, 64));
    expectMediaError(() => decodePng(png, { maxPixels: 64 * 63 }), 'too_large');
  });
});

describe('readPngInfo', () => {
  const png = encodePng(48, 32, gradient(48, 32));

  it('reads the header', () => {
    expect(readPngInfo(png)).toEqual({ width: 48, height: 32, hasAlpha: true, bitDepth: 8, colorType: 6, interlaced: false });
  });

  it('reports alpha from a tRNS chunk on an opaque colour type', () => {
    const image = new pngjs.PNG({ width: 2, height: 2 });
    image.data.fill(255);
    const rgb = pngjs.PNG.sync.write(image, { colorType: 2 });
    expect(readPngInfo(rgb).hasAlpha).toBe(false);
    // Insert `tRNS` (6 bytes for truecolour) right after IHDR.
    const withTransparency = Buffer.concat([rgb.subarray(0, 33), pngChunkForTest('tRNS', Buffer.alloc(6)), rgb.subarray(33)]);
    expect(readPngInfo(withTransparency).hasAlpha).toBe(true);
  });

  it('calls non-PNG bytes unrecognized', () => {
    expectMediaError(() => readPngInfo(Buffer.from('hello, this is not an image at all')), 'unrecognized');
    expectMediaError(() => readPngInfo(new Uint8Array(0)), 'unrecognized');
  });

  it('calls a truncated PNG corrupt', () => {
    expectMediaError(() => readPngInfo(png.subarray(0, png.length - 20)), 'corrupt');
    expectMediaError(() => readPngInfo(png.subarray(0, 20)), 'corrupt');
  });

  it('calls a PNG with a flipped bit corrupt', () => {
    const damaged = Buffer.from(png);
    damaged[60] = damaged[60]! ^ 0x10;
    expectMediaError(() => readPngInfo(damaged), 'corrupt');
  });

  it('calls invalid header fields corrupt', () => {
    const badDepth = Buffer.from(png);
    badDepth[24] = 3;
    badDepth.writeUInt32BE(crcForTest(badDepth.subarray(12, 29)), 29);
    expectMediaError(() => readPngInfo(badDepth), 'corrupt');
  });
});

function crcForTest(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? 0xedb88320 ^ (crc >>> 1) : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function pngChunkForTest(type: string, data: Buffer): Buffer {
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write(type, 4, 'latin1');
  data.copy(chunk, 8);
  chunk.writeUInt32BE(crcForTest(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  return chunk;
}
