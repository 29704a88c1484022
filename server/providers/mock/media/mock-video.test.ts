/**
 * The mock video must be a real video: these tests check it with ffprobe and
 * ffmpeg (test tools only; the generator never runs them). Without them the
 * tests fail, on purpose: a skipped check would hide a broken file.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolPath } from '../../../media/media-test-tools.js';
import { blockPictureToRgb, MockVideoScene } from './mock-video-scene.js';
import { normaliseMockVideoRequest, renderMockVideo, renderMockVideoToFiles, type MockVideoRequest } from './mock-video.js';
import { renderMockVideoInWorker, renderMockVideoToFilesInWorker } from './mock-video-worker.js';

interface ToolRun {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

function runTool(tool: 'ffmpeg' | 'ffprobe', args: string[]): Promise<ToolRun> {
  return new Promise((resolve, reject) => {
    const binary = toolPath(tool);
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.once('error', (error: NodeJS.ErrnoException) => {
      reject(
        error.code === 'ENOENT'
          ? new Error(`${tool} does not run at ${binary}; these tests need it (npm ci installs it, or set FFMPEG_PATH / FFPROBE_PATH)`)
          : error,
      );
    });
    child.once('close', (code) =>
      resolve({ code, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr).toString('utf8') }),
    );
  });
}

interface ProbedStream {
  codec_name: string;
  width: number;
  height: number;
  pix_fmt?: string;
}

async function probe(path: string): Promise<{ streams: ProbedStream[]; format: { duration?: string } }> {
  const run = await runTool('ffprobe', [
    '-v',
    'error',
    '-show_entries',
    'stream=codec_name,width,height,pix_fmt:format=duration',
    '-of',
    'json',
    path,
  ]);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout.toString('utf8'));
}

/**
 * Decodes every frame; ffmpeg must exit 0 and print nothing at `-v error`,
 * even with its strictest error detection (any bitstream flaw is fatal).
 */
async function decodeCleanly(path: string, outputArgs: string[] = ['-f', 'null', '-']): Promise<Buffer> {
  const strict = ['-xerror', '-err_detect', '+crccheck+bitstream+buffer+explode+careful+compliant'];
  const run = await runTool('ffmpeg', ['-nostdin', '-v', 'error', ...strict, '-i', path, ...outputArgs]);
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return run.stdout;
}

/** Types of the top-level boxes of an MP4 file. */
function topLevelBoxes(file: Buffer): string[] {
  const types: string[] = [];
  for (let offset = 0; offset + 8 <= file.length; ) {
    const size = file.readUInt32BE(offset);
    types.push(file.toString('latin1', offset + 4, offset + 8));
    if (size < 8) break;
    offset += size;
  }
  return types;
}

let directory = '';
beforeAll(async () => {
  // Fail every test at once, with the reason, when the tools are missing.
  await runTool('ffprobe', ['-version']);
  await runTool('ffmpeg', ['-version']);
  directory = await mkdtemp(join(tmpdir(), 'mock-video-'));
});
afterAll(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
});

describe('renderMockVideoToFiles', () => {
  const cases: (MockVideoRequest & { name: string })[] = [
    { name: '1920x1080, 2 s', prompt: 'a lighthouse at dusk', width: 1920, height: 1080, seconds: 2 },
    { name: '1080x1920, 1 s', prompt: 'portrait', width: 1080, height: 1920, seconds: 1 },
    { name: '1280x720, 3 s', prompt: 'a red fox in snow', width: 1280, height: 720, seconds: 3 },
    { name: '720x1280, 1 s', prompt: 'tall', width: 720, height: 1280, seconds: 1 },
    { name: '1024x1792, 1 s', prompt: 'sora portrait', width: 1024, height: 1792, seconds: 1 },
    { name: '1792x1024, 1 s', prompt: 'sora landscape', width: 1792, height: 1024, seconds: 1 },
    { name: '480x480, 2 s', prompt: 'square', width: 480, height: 480, seconds: 2 },
    { name: '320x240, 20 s (longest)', prompt: 'long', width: 320, height: 240, seconds: 20 },
    { name: '16x16, 1 s (smallest)', prompt: 'tiny', width: 16, height: 16, seconds: 1 },
    { name: '1918x18, cropped on both axes', prompt: 'strip', width: 1918, height: 18, seconds: 1 },
    { name: '18x1920, one macroblock wide', prompt: 'pole', width: 18, height: 1920, seconds: 1 },
    { name: '1920x1920, level 5.0', prompt: 'big square', width: 1920, height: 1920, seconds: 1 },
    { name: '64x48 at 24 fps, 2.5 s', prompt: 'fractional', width: 64, height: 48, seconds: 2.5, fps: 24 },
    { name: '640x360 at 25 fps, 1.9 s', prompt: 'pal', width: 640, height: 360, seconds: 1.9, fps: 25 },
    { name: '640x360 at 60 fps, 1 s', prompt: 'fast', width: 640, height: 360, seconds: 1, fps: 60 },
    { name: '64x64 at 1 fps, 3 s (every frame an IDR)', prompt: 'slow', width: 64, height: 64, seconds: 3, fps: 1 },
  ];

  for (const { name, ...request } of cases) {
    it(`${name}: h264 in MP4 of the exact size and duration, decoding without errors`, async () => {
      const base = join(directory, name.replace(/[^a-z0-9]+/gi, '-'));
      const paths = { videoPath: `${base}.mp4`, thumbnailPath: `${base}.png`, spritesheetPath: `${base}-sprites.png` };
      const result = await renderMockVideoToFiles({ ...request, ...paths });
      const fps = request.fps ?? 30;

      // round(seconds × fps) frames: at most half a frame off the request.
      expect(Math.abs(result.durationSeconds - request.seconds)).toBeLessThanOrEqual(0.5 / fps + 1e-9);
      expect(result.contentTypes).toEqual({ video: 'video/mp4', thumbnail: 'image/png', spritesheet: 'image/png' });
      // The six tool runs are independent; overlapping them keeps the suite short on a busy machine.
      const [video, , thumbnail, , spritesheet] = await Promise.all([
        probe(paths.videoPath),
        decodeCleanly(paths.videoPath),
        probe(paths.thumbnailPath),
        decodeCleanly(paths.thumbnailPath),
        probe(paths.spritesheetPath),
        decodeCleanly(paths.spritesheetPath),
      ]);
      expect(video.streams).toEqual([
        { codec_name: 'h264', width: request.width, height: request.height, pix_fmt: 'yuv420p' },
      ]);
      expect(Math.abs(Number(video.format.duration) - request.seconds)).toBeLessThanOrEqual(1 / fps);

      const file = await readFile(paths.videoPath);
      expect(file.length).toBe(result.byteLengths.video);
      expect(topLevelBoxes(file)).toEqual(['ftyp', 'moov', 'mdat']);

      expect(thumbnail.streams).toMatchObject([{ codec_name: 'png', width: request.width, height: request.height }]);

      const layout = result.spritesheetLayout;
      expect(layout.tileCount).toBe(Math.ceil(result.durationSeconds));
      expect(Math.max(layout.tileWidth, layout.tileHeight)).toBe(160);
      expect(spritesheet.streams).toMatchObject([{ codec_name: 'png', width: layout.width, height: layout.height }]);
      expect(layout.width).toBe(layout.columns * layout.tileWidth);
      expect(layout.height).toBe(layout.rows * layout.tileHeight);
    });
  }
});

describe('decoded pictures', () => {
  it('every decoded sample equals the scene the encoder was given', async () => {
    const request = { prompt: 'exactness', width: 100, height: 70, seconds: 3, fps: 10 };
    const videoPath = join(directory, 'exact.mp4');
    const result = await renderMockVideoToFiles({
      ...request,
      videoPath,
      thumbnailPath: join(directory, 'exact.png'),
      spritesheetPath: join(directory, 'exact-sprites.png'),
    });
    const packets = await runTool('ffprobe', ['-v', 'error', '-show_entries', 'packet=flags', '-of', 'csv=p=0', videoPath]);
    const keyframes = packets.stdout
      .toString('utf8')
      .trim()
      .split('\n')
      .flatMap((flags, index) => (flags.startsWith('K') ? [index] : []));
    expect(keyframes).toEqual([0, 10, 20]); // one IDR picture per second

    const raw = await decodeCleanly(videoPath, ['-f', 'rawvideo', '-pix_fmt', 'yuv420p', '-']);
    const { width, height } = request;
    const frameBytes = (width * height * 3) / 2;
    expect(raw.length).toBe(frameBytes * result.frameCount);

    const scene = new MockVideoScene({ ...request, frameCount: result.frameCount });
    const picture = scene.createPicture();
    for (let frame = 0; frame < result.frameCount; frame++) {
      scene.renderFrame(frame, picture);
      const expected = Buffer.alloc(frameBytes);
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) expected[y * width + x] = picture[((y >> 4) * scene.macroblockColumns + (x >> 4)) * 3];
      }
      for (let plane = 1; plane <= 2; plane++) {
        const offset = width * height + (plane - 1) * (width / 2) * (height / 2);
        for (let y = 0; y < height / 2; y++) {
          for (let x = 0; x < width / 2; x++) {
            expected[offset + y * (width / 2) + x] = picture[((y >> 3) * scene.macroblockColumns + (x >> 3)) * 3 + plane];
          }
        }
      }
      const decoded = raw.subarray(frame * frameBytes, (frame + 1) * frameBytes);
      expect(decoded.equals(expected), `frame ${frame}`).toBe(true);
    }
  });

  it('the thumbnail shows the middle frame as a player would', async () => {
    const request = { prompt: 'thumbnail', width: 160, height: 96, seconds: 2 };
    const rendered = await renderMockVideo(request);
    const thumbnailPath = join(directory, 'thumbnail-check.png');
    await writeFile(thumbnailPath, rendered.thumbnail);
    const rgb = await decodeCleanly(thumbnailPath, ['-f', 'rawvideo', '-pix_fmt', 'rgb24', '-']);

    const scene = new MockVideoScene({ ...request, fps: rendered.fps, frameCount: rendered.frameCount });
    const picture = scene.createPicture();
    scene.renderFrame(Math.round(rendered.thumbnailTimeSeconds * rendered.fps), picture);
    const expected = blockPictureToRgb(picture, scene.macroblockColumns, 160, 96, 160, 96);
    expect(rgb.equals(Buffer.from(expected))).toBe(true);
  });

  it('changes over time and with the prompt', () => {
    const frameCount = 60;
    const render = (prompt: string, frame: number) => {
      const scene = new MockVideoScene({ prompt, width: 320, height: 240, fps: 30, frameCount });
      const picture = scene.createPicture();
      scene.renderFrame(frame, picture);
      return Buffer.from(picture);
    };
    expect(render('a', 0).equals(render('a', 0))).toBe(true);
    expect(render('a', 0).equals(render('a', 10))).toBe(false); // the bar moved
    expect(render('a', 0).equals(render('a', 30))).toBe(false); // the next second
    expect(render('a', 0).equals(render('b', 0))).toBe(false);
  });
});

describe('renderMockVideo', () => {
  const request = { prompt: 'determinism', width: 320, height: 180, seconds: 3 };

  it('gives the same bytes for the same request', async () => {
    const first = await renderMockVideo(request);
    const second = await renderMockVideo({ ...request });
    expect(first.video.equals(second.video)).toBe(true);
    expect(first.thumbnail.equals(second.thumbnail)).toBe(true);
    expect(first.spritesheet.equals(second.spritesheet)).toBe(true);
  });

  it('gives different bytes for a different prompt', async () => {
    const first = await renderMockVideo(request);
    const other = await renderMockVideo({ ...request, prompt: 'determinism!' });
    expect(first.video.equals(other.video)).toBe(false);
    expect(first.thumbnail.equals(other.thumbnail)).toBe(false);
    expect(first.spritesheet.equals(other.spritesheet)).toBe(false);
  });

  it('describes what it rendered', async () => {
    const result = await renderMockVideo({ prompt: 'x', width: 1280, height: 720, seconds: 8 });
    expect(result).toMatchObject({
      width: 1280,
      height: 720,
      fps: 30,
      frameCount: 240,
      durationSeconds: 8,
      codec: 'avc1.42c01f',
      thumbnailTimeSeconds: 3.5,
      spritesheetLayout: {
        intervalSeconds: 1,
        tileCount: 8,
        columns: 5,
        rows: 2,
        tileWidth: 160,
        tileHeight: 90,
        width: 800,
        height: 180,
      },
    });
    expect(result.video.subarray(4, 8).toString('latin1')).toBe('ftyp');
    expect(result.thumbnail.subarray(1, 4).toString('latin1')).toBe('PNG');
  });

  it('rejects sizes and durations it cannot render', async () => {
    const bad: MockVideoRequest[] = [
      { prompt: 'x', width: 17, height: 16, seconds: 1 },
      { prompt: 'x', width: 14, height: 16, seconds: 1 },
      { prompt: 'x', width: 16, height: 1922, seconds: 1 },
      { prompt: 'x', width: 16, height: 16, seconds: 0 },
      { prompt: 'x', width: 16, height: 16, seconds: Number.NaN },
      { prompt: 'x', width: 16, height: 16, seconds: 61 },
      { prompt: 'x', width: 16, height: 16, seconds: 1, fps: 0 },
      { prompt: 'x', width: 16, height: 16, seconds: 1, fps: 29.97 },
    ];
    for (const request of bad) {
      expect(() => normaliseMockVideoRequest(request)).toThrow(RangeError);
      await expect(renderMockVideo(request)).rejects.toThrow(RangeError);
    }
  });

  it('stops when aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('deleted'));
    await expect(renderMockVideo(request, { signal: controller.signal })).rejects.toThrow('deleted');
  });
});

describe('renderMockVideoInWorker', () => {
  it('renders the same bytes on a worker thread', async () => {
    const request = { prompt: 'worker', width: 640, height: 360, seconds: 2 };
    const [inWorker, inline] = await Promise.all([renderMockVideoInWorker(request), renderMockVideo(request)]);
    expect(Buffer.isBuffer(inWorker.video)).toBe(true);
    expect(inWorker.video.equals(inline.video)).toBe(true);
    expect(inWorker.thumbnail.equals(inline.thumbnail)).toBe(true);
    expect(inWorker.spritesheet.equals(inline.spritesheet)).toBe(true);
    expect(inWorker.spritesheetLayout).toEqual(inline.spritesheetLayout);
  });

  it('writes files from a worker thread', async () => {
    const paths = {
      videoPath: join(directory, 'worker.mp4'),
      thumbnailPath: join(directory, 'worker.png'),
      spritesheetPath: join(directory, 'worker-sprites.png'),
    };
    const result = await renderMockVideoToFilesInWorker({ prompt: 'worker', width: 256, height: 144, seconds: 1, ...paths });
    expect((await readFile(paths.videoPath)).length).toBe(result.byteLengths.video);
    const video = await probe(paths.videoPath);
    expect(video.streams[0]).toMatchObject({ codec_name: 'h264', width: 256, height: 144 });
  });

  it('passes validation errors back', async () => {
    await expect(renderMockVideoInWorker({ prompt: 'x', width: 15, height: 16, seconds: 1 })).rejects.toThrow(
      /width must be an even integer/,
    );
  });

  it('terminates the worker when aborted', async () => {
    const controller = new AbortController();
    const pending = renderMockVideoInWorker(
      { prompt: 'x', width: 1920, height: 1080, seconds: 20 },
      { signal: controller.signal },
    );
    controller.abort(new Error('deleted'));
    await expect(pending).rejects.toThrow('deleted');
  });
});
