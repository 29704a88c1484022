import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MediaFormatError } from '../../../media/media-format-error.js';
import { decodeWithFfmpeg } from '../../../media/media-test-tools.js';
import { decodePng, encodePng, readPngInfo, type RgbaImage } from '../../../media/png.js';
import { drawMockImage, drawMockImageProgressive, editMockImage, editMockImageProgressive } from './mock-images.js';

const SPEC_SIZES = [
  [256, 256],
  [512, 512],
  [1024, 1024],
  [1536, 1024],
  [1024, 1536],
  [2048, 2048],
  [4096, 4096],
] as const;

const workDirectory = mkdtempSync(join(tmpdir(), 'mock-images-test-'));
afterAll(() => rmSync(workDirectory, { recursive: true, force: true }));

const pixel = (image: RgbaImage, x: number, y: number) => Array.from(image.rgba.subarray((y * image.width + x) * 4, (y * image.width + x) * 4 + 4));

function solid(width: number, height: number, rgba: [number, number, number, number]): Buffer {
  const pixels = new Uint8Array(width * height * 4);
  for (let index = 0; index < pixels.length; index += 4) pixels.set(rgba, index);
  return encodePng(width, height, pixels);
}

function distinctColors(image: RgbaImage): number {
  const colors = new Set<number>();
  const words = new Uint32Array(image.rgba.buffer, image.rgba.byteOffset, image.rgba.byteLength / 4);
  for (let index = 0; index < words.length; index += 7) colors.add(words[index]!);
  return colors.size;
}

describe('drawMockImage', () => {
  it.each(SPEC_SIZES)('draws exactly %ix%i', (width, height) => {
    const png = drawMockImage({ prompt: 'a lighthouse at dusk', index: 0, width, height });
    expect(readPngInfo(png)).toMatchObject({ width, height });
    const decoded = decodePng(png);
    expect([decoded.width, decoded.height]).toEqual([width, height]);
    expect(decoded.rgba.length).toBe(width * height * 4);
    expect(distinctColors(decoded)).toBeGreaterThan(2);
  });

  it('writes PNGs that ffmpeg decodes without complaint', () => {
    const path = join(workDirectory, 'mock.png');
    writeFileSync(path, drawMockImage({ prompt: 'ffmpeg check', index: 2, width: 1536, height: 1024 }));
    expect(decodeWithFfmpeg(path)).toEqual({ status: 0, errors: '' });
  });

  it('is deterministic', () => {
    const request = { prompt: 'same prompt', index: 1, width: 512, height: 512 };
    expect(drawMockImage(request).equals(drawMockImage({ ...request }))).toBe(true);
  });

  it('depends visibly on the prompt and on the index', () => {
    const base = decodePng(drawMockImage({ prompt: 'a cat', index: 0, width: 256, height: 256 }));
    const otherPrompt = decodePng(drawMockImage({ prompt: 'a dog', index: 0, width: 256, height: 256 }));
    const otherIndex = decodePng(drawMockImage({ prompt: 'a cat', index: 1, width: 256, height: 256 }));
    const differingPixels = (left: RgbaImage, right: RgbaImage) => {
      let count = 0;
      for (let index = 0; index < left.rgba.length; index += 4) {
        if (left.rgba[index] !== right.rgba[index] || left.rgba[index + 1] !== right.rgba[index + 1] || left.rgba[index + 2] !== right.rgba[index + 2]) count++;
      }
      return count;
    };
    // "Visibly": a large share of the pixels changes, not a few.
    expect(differingPixels(base, otherPrompt)).toBeGreaterThan(256 * 256 * 0.3);
    expect(differingPixels(base, otherIndex)).toBeGreaterThan(256 * 256 * 0.1);
  });

  it('refuses sizes it cannot draw', () => {
    expect(() => drawMockImage({ prompt: 'x', index: 0, width: 0, height: 256 })).toThrow(RangeError);
    expect(() => drawMockImage({ prompt: 'x', index: 0, width: 8192, height: 256 })).toThrow(RangeError);
    expect(() => drawMockImage({ prompt: 'x', index: 0, width: 256.5, height: 256 })).toThrow(RangeError);
  });
});

describe('drawMockImageProgressive', () => {
  it('yields the partial images, coarse first, then the final image', () => {
    const request = { prompt: 'progressive', index: 0, width: 1024, height: 1536 };
    const frames = [...drawMockImageProgressive({ ...request, partialImages: 3 })];
    expect(frames.map((frame) => (frame.kind === 'partial' ? `partial ${frame.partialImageIndex}` : 'final'))).toEqual(['partial 0', 'partial 1', 'partial 2', 'final']);
    const final = frames.at(-1)!.png;
    expect(final.equals(drawMockImage(request))).toBe(true);
    const decoded = frames.map((frame) => decodePng(frame.png));
    for (const image of decoded) expect([image.width, image.height]).toEqual([1024, 1536]);
    // The first partial is made of 128-pixel blocks: all pixels of a block are equal.
    expect(pixel(decoded[0]!, 0, 0)).toEqual(pixel(decoded[0]!, 127, 127));
    expect(frames[0]!.png.equals(final)).toBe(false);
    expect(frames[0]!.png.length).toBeLessThan(final.length);
  });

  it('yields only the final image when no partial image is asked for', () => {
    const frames = [...drawMockImageProgressive({ prompt: 'p', index: 0, width: 256, height: 256, partialImages: 0 })];
    expect(frames.map((frame) => frame.kind)).toEqual(['final']);
  });

  it('refuses more than 3 partial images', () => {
    expect(() => [...drawMockImageProgressive({ prompt: 'p', index: 0, width: 256, height: 256, partialImages: 4 })]).toThrow(RangeError);
  });
});

describe('editMockImage', () => {
  const source = solid(256, 256, [10, 20, 30, 255]);

  it('returns exactly the requested size, whatever the input size', () => {
    for (const [width, height] of [[256, 256], [1024, 1024], [1536, 1024]] as const) {
      const edited = decodePng(editMockImage({ prompt: 'add a moon', index: 0, width, height, images: [source] }));
      expect([edited.width, edited.height]).toEqual([width, height]);
    }
  });

  it('repaints exactly the fully transparent area of the mask', () => {
    const maskPixels = new Uint8Array(256 * 256 * 4).fill(255);
    for (let y = 0; y < 256; y++) {
      for (let x = 0; x < 128; x++) maskPixels[(y * 256 + x) * 4 + 3] = 0;
    }
    // A half-transparent pixel on the right is not "fully transparent": it stays.
    maskPixels[(10 * 256 + 200) * 4 + 3] = 128;
    const edited = decodePng(editMockImage({ prompt: 'paint the left half', index: 0, width: 512, height: 512, images: [source], mask: encodePng(256, 256, maskPixels) }));
    for (let y = 0; y < 512; y += 5) {
      for (let x = 0; x < 512; x += 5) {
        if (x < 256) expect(pixel(edited, x, y)).not.toEqual([10, 20, 30, 255]);
        else expect(pixel(edited, x, y)).toEqual([10, 20, 30, 255]);
      }
    }
    expect(pixel(edited, 400, 20)).toEqual([10, 20, 30, 255]);
    for (let y = 0; y < 512; y += 9) expect(pixel(edited, 3, y)[3]).toBe(255);
  });

  it('repaints a centred region when there is no mask', () => {
    const edited = decodePng(editMockImage({ prompt: 'no mask', index: 0, width: 256, height: 256, images: [source] }));
    expect(pixel(edited, 128, 128)).not.toEqual([10, 20, 30, 255]);
    expect(pixel(edited, 5, 5)).toEqual([10, 20, 30, 255]);
    expect(pixel(edited, 250, 128)).toEqual([10, 20, 30, 255]);
  });

  it('keeps the source alpha outside the edited area', () => {
    const translucent = solid(64, 64, [200, 100, 50, 40]);
    const edited = decodePng(editMockImage({ prompt: 'alpha', index: 0, width: 64, height: 64, images: [translucent] }));
    expect(pixel(edited, 1, 1)).toEqual([200, 100, 50, 40]);
  });

  it('shows the further images as thumbnails in the bottom-left corner', () => {
    const second = solid(100, 100, [250, 0, 250, 255]);
    const edited = decodePng(editMockImage({ prompt: 'thumbs', index: 0, width: 512, height: 512, images: [source, second] }));
    // Thumbnails are 1/8 of the short side (64 px) with an 8 px gap.
    expect(pixel(edited, 8 + 32, 512 - 8 - 32)).toEqual([250, 0, 250, 255]);
    expect(pixel(edited, 500, 500)).toEqual([10, 20, 30, 255]);
  });

  it('is deterministic and depends on the prompt', () => {
    const request = { prompt: 'edit me', index: 0, width: 256, height: 256, images: [source] };
    expect(editMockImage(request).equals(editMockImage({ ...request }))).toBe(true);
    expect(editMockImage(request).equals(editMockImage({ ...request, prompt: 'edit me differently' }))).toBe(false);
  });

  it('throws MediaFormatError for an input that is not a PNG', () => {
    expect(() => editMockImage({ prompt: 'x', index: 0, width: 256, height: 256, images: [Buffer.from('GIF89a not a png')] })).toThrow(MediaFormatError);
    expect(() => editMockImage({ prompt: 'x', index: 0, width: 256, height: 256, images: [source], mask: Buffer.from('nope') })).toThrow(MediaFormatError);
  });

  it('streams partial edits then the final edit', () => {
    const request = { prompt: 'stream edit', index: 0, width: 512, height: 512, images: [source] };
    const frames = [...editMockImageProgressive({ ...request, partialImages: 2 })];
    expect(frames.map((frame) => frame.kind)).toEqual(['partial', 'partial', 'final']);
    expect(frames[2]!.png.equals(editMockImage(request))).toBe(true);
    for (const frame of frames) expect(readPngInfo(frame.png)).toMatchObject({ width: 512, height: 512 });
  });
});
