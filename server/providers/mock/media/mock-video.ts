/**
 * The mock provider's video generator: a real, playable H.264/MP4 video of
 * the requested size and duration, a PNG thumbnail and a PNG spritesheet,
 * computed offline in plain TypeScript (no ffmpeg, no native code).
 *
 * The output is a pure function of the request: the same prompt, size,
 * duration and frame rate give the same bytes (the PNGs as long as zlib's
 * output does not change). The picture is made of flat 16×16 blocks (see
 * mock-video-scene.ts), which is what makes a hand-written encoder fast:
 * 1280×720 × 8 s takes about 70 ms of CPU once warm, 1920×1080 × 20 s about
 * 250 ms, and the files are tens of kilobytes per second of video.
 *
 * `renderMockVideo` yields to the event loop every few milliseconds, so it
 * can run on the gateway's main thread; `renderMockVideoInWorker`
 * (mock-video-worker.ts) moves it to a worker thread instead.
 */
import { writeFile } from 'node:fs/promises';
import { H264BlockEncoder } from './h264-block-encoder.js';
import { blockPictureToRgb, MockVideoScene } from './mock-video-scene.js';
import { writeMp4 } from './mp4-writer.js';
import { encodeRgbPng } from './png-writer.js';

/** What to render. */
export interface MockVideoRequest {
  /** Any text; it picks the colours. */
  prompt: string;
  /** Width in pixels: an even integer from 16 to 1920. */
  width: number;
  /** Height in pixels: an even integer from 16 to 1920. */
  height: number;
  /** Duration in seconds, more than 0 and at most 60; the video has `round(seconds × fps)` frames (at least one). */
  seconds: number;
  /** Frames per second, an integer from 1 to 60. Default 30. */
  fps?: number;
}

/** Where `renderMockVideoToFiles` writes; existing files are replaced. */
export interface MockVideoFilePaths {
  videoPath: string;
  thumbnailPath: string;
  spritesheetPath: string;
}

export interface MockVideoRenderOptions {
  /** Aborting stops the work at the next frame and rejects with the signal's reason. */
  signal?: AbortSignal;
}

/** How the spritesheet is cut into tiles. */
export interface MockVideoSpritesheetLayout {
  /** One tile per interval; tile `i` shows the frame at `(i + 0.5) × intervalSeconds`. */
  intervalSeconds: number;
  tileCount: number;
  /** Tiles fill rows left to right, top to bottom; cells past `tileCount` are black. */
  columns: number;
  rows: number;
  /** Each tile is the frame scaled to fit a 160×160 box, keeping its aspect ratio. */
  tileWidth: number;
  tileHeight: number;
  /** Size of the whole image: `columns × tileWidth` by `rows × tileHeight`. */
  width: number;
  height: number;
}

/** Everything about a rendered video except its bytes. */
export interface MockVideoDescription {
  width: number;
  height: number;
  fps: number;
  frameCount: number;
  /** `frameCount / fps`: the duration in the container, within half a frame of the request. */
  durationSeconds: number;
  /** RFC 6381 codec string of the track, e.g. `avc1.42c028` (Constrained Baseline). */
  codec: string;
  contentTypes: { video: 'video/mp4'; thumbnail: 'image/png'; spritesheet: 'image/png' };
  /** The thumbnail is the frame at this time (the middle spritesheet tile's), at the full video size. */
  thumbnailTimeSeconds: number;
  spritesheetLayout: MockVideoSpritesheetLayout;
}

/** A rendered video held in memory. */
export interface MockVideo extends MockVideoDescription {
  /** The whole MP4 file, `moov` before `mdat` (under 1 MB for 1920×1080 × 20 s). */
  video: Buffer;
  /** PNG, `width × height`. */
  thumbnail: Buffer;
  /** PNG, laid out as `spritesheetLayout` says. */
  spritesheet: Buffer;
}

/** A rendered video written to files. */
export interface MockVideoFiles extends MockVideoDescription {
  byteLengths: { video: number; thumbnail: number; spritesheet: number };
}

/** Limits of `MockVideoRequest`, for callers that validate earlier. */
export const MOCK_VIDEO_LIMITS = {
  minSide: 16,
  maxSide: 1920,
  maxSeconds: 60,
  maxFps: 60,
  defaultFps: 30,
} as const;

const TILE_BOX = 160;
const SPRITESHEET_MAX_COLUMNS = 5;
/** Longest stretch of work between two yields to the event loop. */
const YIELD_INTERVAL_MS = 8;

/** Renders the video, thumbnail and spritesheet into memory. */
export async function renderMockVideo(request: MockVideoRequest, options: MockVideoRenderOptions = {}): Promise<MockVideo> {
  const { description, video, thumbnail, spritesheet } = await renderAll(request, options.signal);
  return { ...description, video, thumbnail, spritesheet };
}

/** Renders and writes the three files; resolves once all are written. */
export async function renderMockVideoToFiles(
  request: MockVideoRequest & MockVideoFilePaths,
  options: MockVideoRenderOptions = {},
): Promise<MockVideoFiles> {
  const { description, video, thumbnail, spritesheet } = await renderAll(request, options.signal);
  await Promise.all([
    writeFile(request.videoPath, video),
    writeFile(request.thumbnailPath, thumbnail),
    writeFile(request.spritesheetPath, spritesheet),
  ]);
  return {
    ...description,
    byteLengths: { video: video.length, thumbnail: thumbnail.length, spritesheet: spritesheet.length },
  };
}

interface NormalisedRequest {
  prompt: string;
  width: number;
  height: number;
  fps: number;
  frameCount: number;
}

/** Checks a request against `MOCK_VIDEO_LIMITS`; throws a `RangeError` naming the bad field. */
export function normaliseMockVideoRequest(request: MockVideoRequest): NormalisedRequest {
  const { minSide, maxSide, maxSeconds, maxFps, defaultFps } = MOCK_VIDEO_LIMITS;
  const { prompt, width, height, seconds } = request;
  const fps = request.fps ?? defaultFps;
  if (typeof prompt !== 'string') throw new RangeError('prompt must be a string');
  for (const [name, value] of [
    ['width', width],
    ['height', height],
  ] as const) {
    if (!Number.isInteger(value) || value % 2 !== 0 || value < minSide || value > maxSide) {
      throw new RangeError(`${name} must be an even integer from ${minSide} to ${maxSide}, got ${value}`);
    }
  }
  if (!Number.isInteger(fps) || fps < 1 || fps > maxFps) {
    throw new RangeError(`fps must be an integer from 1 to ${maxFps}, got ${fps}`);
  }
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0 || seconds > maxSeconds) {
    throw new RangeError(`seconds must be more than 0 and at most ${maxSeconds}, got ${seconds}`);
  }
  return { prompt, width, height, fps, frameCount: Math.max(1, Math.round(seconds * fps)) };
}

async function renderAll(
  request: MockVideoRequest,
  signal: AbortSignal | undefined,
): Promise<{ description: MockVideoDescription; video: Buffer; thumbnail: Buffer; spritesheet: Buffer }> {
  signal?.throwIfAborted();
  const { prompt, width, height, fps, frameCount } = normaliseMockVideoRequest(request);
  const scene = new MockVideoScene({ prompt, width, height, fps, frameCount });
  // An IDR picture every second: seeking lands on a whole second, and the palette changes there anyway.
  const encoder = new H264BlockEncoder({ width, height, fps, gopLength: fps });

  const samples: Uint8Array[] = [];
  const syncSamples: number[] = [];
  let previous = scene.createPicture();
  let current = scene.createPicture();
  const pacer = new EventLoopPacer(signal);
  for (let frame = 0; frame < frameCount; frame++) {
    scene.renderFrame(frame, current);
    if (frame % fps === 0) {
      syncSamples.push(frame);
      samples.push(encoder.encodeIdr(current));
    } else {
      samples.push(encoder.encodePredicted(current, previous));
    }
    [previous, current] = [current, previous];
    await pacer.pause();
  }
  // One timescale unit per millisecond of a frame keeps every sample duration an integer.
  const video = writeMp4({
    width,
    height,
    timescale: fps * 1000,
    sampleDuration: 1000,
    samples,
    syncSamples,
    parameterSets: encoder.parameterSets,
  });
  await pacer.pause();

  const durationSeconds = frameCount / fps;
  const layout = planSpritesheet(width, height, durationSeconds);
  const picture = scene.createPicture();
  // The middle tile of the spritesheet: mid-second, so the sweeping bar is in the picture.
  const thumbnailFrame = frameOfTile(Math.floor((layout.tileCount - 1) / 2), layout, fps, frameCount);
  scene.renderFrame(thumbnailFrame, picture);
  const thumbnail = await encodeRgbPng(
    width,
    height,
    blockPictureToRgb(picture, scene.macroblockColumns, width, height, width, height),
  );
  await pacer.pause();

  const sheet = new Uint8Array(layout.width * layout.height * 3);
  for (let tile = 0; tile < layout.tileCount; tile++) {
    scene.renderFrame(frameOfTile(tile, layout, fps, frameCount), picture);
    const pixels = blockPictureToRgb(picture, scene.macroblockColumns, width, height, layout.tileWidth, layout.tileHeight);
    const left = (tile % layout.columns) * layout.tileWidth;
    const top = Math.floor(tile / layout.columns) * layout.tileHeight;
    const tileRowBytes = layout.tileWidth * 3;
    for (let y = 0; y < layout.tileHeight; y++) {
      sheet.set(pixels.subarray(y * tileRowBytes, (y + 1) * tileRowBytes), ((top + y) * layout.width + left) * 3);
    }
    await pacer.pause();
  }
  const spritesheet = await encodeRgbPng(layout.width, layout.height, sheet);
  signal?.throwIfAborted();

  return {
    description: {
      width,
      height,
      fps,
      frameCount,
      durationSeconds,
      codec: encoder.parameterSets.codec,
      contentTypes: { video: 'video/mp4', thumbnail: 'image/png', spritesheet: 'image/png' },
      thumbnailTimeSeconds: thumbnailFrame / fps,
      spritesheetLayout: layout,
    },
    video,
    thumbnail,
    spritesheet,
  };
}

/** The frame a spritesheet tile shows: the middle of its interval, or the last frame. */
function frameOfTile(tile: number, layout: MockVideoSpritesheetLayout, fps: number, frameCount: number): number {
  return Math.min(frameCount - 1, Math.floor((tile + 0.5) * layout.intervalSeconds * fps));
}

/** One tile per second, each fitting a 160×160 box, at most five to a row. */
export function planSpritesheet(width: number, height: number, durationSeconds: number): MockVideoSpritesheetLayout {
  const intervalSeconds = 1;
  const tileCount = Math.max(1, Math.ceil(durationSeconds / intervalSeconds - 1e-9));
  const landscape = width >= height;
  const tileWidth = landscape ? TILE_BOX : Math.max(1, Math.round((TILE_BOX * width) / height));
  const tileHeight = landscape ? Math.max(1, Math.round((TILE_BOX * height) / width)) : TILE_BOX;
  const columns = Math.min(tileCount, SPRITESHEET_MAX_COLUMNS);
  const rows = Math.ceil(tileCount / columns);
  return {
    intervalSeconds,
    tileCount,
    columns,
    rows,
    tileWidth,
    tileHeight,
    width: columns * tileWidth,
    height: rows * tileHeight,
  };
}

/**
 * Lets other work on the event loop run once the current stretch of
 * rendering has taken `YIELD_INTERVAL_MS`, and checks for an abort then.
 */
class EventLoopPacer {
  private lastYield = performance.now();

  constructor(private readonly signal: AbortSignal | undefined) {}

  async pause(): Promise<void> {
    if (performance.now() - this.lastYield < YIELD_INTERVAL_MS) return;
    await new Promise((resolve) => setImmediate(resolve));
    this.signal?.throwIfAborted();
    this.lastYield = performance.now();
  }
}
