import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodePng, readPngInfo } from '../../../media/png.js';
import { MediaFormatError } from '../../../media/media-format-error.js';
import { drawMockImage, drawMockImageProgressive, editMockImage } from './mock-images.js';
import { renderMockImage, type MockImageJob } from './mock-image-worker.js';

const directory = mkdtempSync(path.join(os.tmpdir(), 'umg-mock-image-worker-'));

afterAll(() => rmSync(directory, { recursive: true, force: true }));

async function framesOf(job: MockImageJob, signal?: AbortSignal) {
  const frames = [];
  for await (const frame of renderMockImage(job, signal)) frames.push(frame);
  return frames;
}

function writePng(name: string, width: number, height: number, alpha = 255): string {
  const rgba = new Uint8Array(width * height * 4);
  for (let index = 0; index < rgba.length; index += 4) rgba.set([index % 251, 90, 160, alpha], index);
  const file = path.join(directory, name);
  writeFileSync(file, encodePng(width, height, rgba));
  return file;
}

describe('renderMockImage (worker threads)', () => {
  it('draws the same bytes as the inline drawer, partial pictures first', async () => {
    const request = { prompt: 'worker parity', index: 1, width: 320, height: 200 };
    const [final] = await framesOf({ kind: 'generate', ...request, partialImages: null });
    expect(final).toMatchObject({ kind: 'final' });
    expect(final!.png.equals(drawMockImage(request))).toBe(true);
    const streamed = await framesOf({ kind: 'generate', ...request, partialImages: 2 });
    const inline = [...drawMockImageProgressive({ ...request, partialImages: 2 })];
    expect(streamed.map((frame) => frame.kind)).toEqual(['partial', 'partial', 'final']);
    expect(streamed.map((frame) => frame.png.toString('base64'))).toEqual(inline.map((frame) => frame.png.toString('base64')));
  });

  it('edits from files on disk, the first image as it is (small inputs equal the inline edit)', async () => {
    const image = writePng('base.png', 64, 64);
    const mask = writePng('mask.png', 64, 64, 0);
    const [final] = await framesOf({ kind: 'edit', prompt: 'edit', index: 0, width: 128, height: 128, partialImages: null, imagePaths: [image], maskPath: mask });
    expect(final!.png.equals(editMockImage({ prompt: 'edit', index: 0, width: 128, height: 128, images: [readFileSync(image)], mask: readFileSync(mask) }))).toBe(true);
  });

  it('shrinks further images before drawing them as thumbnails, and reports a bad input as MediaFormatError', async () => {
    const [final] = await framesOf({ kind: 'edit', prompt: 'many', index: 0, width: 512, height: 512, partialImages: null, imagePaths: [writePng('a.png', 32, 32), writePng('big.png', 1500, 700)] });
    expect(readPngInfo(final!.png)).toMatchObject({ width: 512, height: 512 });
    const text = path.join(directory, 'text.png');
    writeFileSync(text, 'not a png');
    const failure = await framesOf({ kind: 'edit', prompt: 'x', index: 0, width: 64, height: 64, partialImages: null, imagePaths: [text] }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(MediaFormatError);
    expect((failure as MediaFormatError).reason).toBe('unrecognized');
  });

  it('stops waiting when aborted, and keeps serving later jobs', async () => {
    const controller = new AbortController();
    const pending = framesOf({ kind: 'generate', prompt: 'abort me', index: 0, width: 4096, height: 4096, partialImages: 3 }, controller.signal);
    controller.abort(new Error('client left'));
    await expect(pending).rejects.toThrow('client left');
    const [after] = await framesOf({ kind: 'generate', prompt: 'after', index: 0, width: 16, height: 16, partialImages: null });
    expect(readPngInfo(after!.png)).toMatchObject({ width: 16, height: 16 });
  });
});
