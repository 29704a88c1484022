/**
 * Deterministic pictures for the offline mock provider's image generation
 * and image edit operations.
 *
 * A picture is a "scene" drawn from a hash of the prompt and the image index:
 * horizontal colour bands behind circles, rings, rectangles and slanted
 * stripes, all in a 16-colour palette derived from the prompt alone (so the
 * n images of one request share a colour scheme but differ in layout). Shapes
 * are placed in fractions of the picture, so every size shows the same scene.
 * Pictures are drawn one row at a time into an indexed PNG, which keeps a
 * 4096×4096 image at a few MiB of memory and a fraction of a second.
 */
import { createHash } from 'node:crypto';
import { decodePng, encodePngRows, type PngRowSource, type RgbaImage } from '../../../media/png.js';

/** Largest side the mock draws (SPEC's largest size is 4096x4096). */
export const MOCK_IMAGE_MAX_SIDE = 4096;

/** What to draw: the prompt and the position of the image in the request's `n`. */
export interface MockImageRequest {
  prompt: string;
  /** 0-based position of the image among the `n` asked for. */
  index: number;
  width: number;
  height: number;
}

/** An image edit: the uploaded PNGs (the first is the one edited), an optional mask, and the output size. */
export interface MockImageEditRequest extends MockImageRequest {
  images: Uint8Array[];
  /** PNG whose fully transparent pixels mark where to edit. */
  mask?: Uint8Array;
}

/**
 * One step of a streamed image: `partial` pictures (coarser, fewer shapes)
 * come first with their 0-based `partialImageIndex`, then the `final` one,
 * which is byte-identical to the non-streamed result.
 */
export type MockImageFrame =
  | { kind: 'partial'; partialImageIndex: number; png: Buffer }
  | { kind: 'final'; png: Buffer };

type ShapeKind = 'circle' | 'ring' | 'rectangle' | 'stripe';

interface SceneShape {
  kind: ShapeKind;
  /** Centre, as fractions of the width and height. */
  centerX: number;
  centerY: number;
  /** Size as a fraction of the shorter side. */
  size: number;
  /** Second dimension (rectangle height, ring thickness, stripe slope) as a factor. */
  aspect: number;
  color: number;
}

interface Scene {
  palette: Uint8Array;
  /** Lower edges of the background bands (fractions of the height, ascending, last is 1). */
  bandEdges: number[];
  bandColors: number[];
  shapes: SceneShape[];
}

const PALETTE_SIZE = 16;

/** A small seeded generator (mulberry32): the scene must be the same on every run and machine. */
function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

function seedFrom(...parts: (string | number)[]): number {
  return createHash('sha256').update(['mock-image', ...parts].join('\u0000')).digest().readUInt32BE(0);
}

function hslToRgb(hue: number, saturation: number, lightness: number): [number, number, number] {
  const chroma = (1 - Math.abs(2 * lightness - 1)) * saturation;
  const sector = (((hue % 360) + 360) % 360) / 60;
  const second = chroma * (1 - Math.abs((sector % 2) - 1));
  const [red, green, blue] =
    sector < 1 ? [chroma, second, 0] : sector < 2 ? [second, chroma, 0] : sector < 3 ? [0, chroma, second]
      : sector < 4 ? [0, second, chroma] : sector < 5 ? [second, 0, chroma] : [chroma, 0, second];
  const offset = lightness - chroma / 2;
  return [red, green, blue].map((channel) => Math.round((channel + offset) * 255)) as [number, number, number];
}

function buildScene(prompt: string, index: number): Scene {
  const paletteRandom = createRandom(seedFrom('palette', prompt));
  const baseHue = paletteRandom() * 360;
  const palette = new Uint8Array(PALETTE_SIZE * 3);
  for (let color = 0; color < PALETTE_SIZE; color++) {
    // Hues spread by the golden angle so neighbouring palette entries contrast.
    const rgb = hslToRgb(baseHue + color * 137.5, 0.45 + paletteRandom() * 0.45, 0.25 + paletteRandom() * 0.5);
    palette.set(rgb, color * 3);
  }
  const random = createRandom(seedFrom('layout', prompt, index));
  const pick = () => Math.floor(random() * PALETTE_SIZE);
  const bandCount = 3 + Math.floor(random() * 5);
  const bandEdges: number[] = [];
  for (let band = 1; band < bandCount; band++) bandEdges.push(random());
  bandEdges.sort((left, right) => left - right).push(1);
  const bandColors = bandEdges.map(pick);
  const kinds: ShapeKind[] = ['circle', 'ring', 'rectangle', 'stripe'];
  const shapes: SceneShape[] = [];
  const shapeCount = 4 + Math.floor(random() * 5);
  for (let shape = 0; shape < shapeCount; shape++) {
    shapes.push({
      kind: kinds[Math.floor(random() * kinds.length)]!,
      centerX: 0.1 + random() * 0.8,
      centerY: 0.1 + random() * 0.8,
      size: 0.08 + random() * 0.27,
      aspect: 0.3 + random() * 0.9,
      color: pick(),
    });
  }
  return { palette, bandEdges, bandColors, shapes };
}

function fillSpan(row: Uint8Array, start: number, end: number, color: number): void {
  const from = Math.max(0, Math.round(start));
  const to = Math.min(row.length, Math.round(end));
  if (to > from) row.fill(color, from, to);
}

/** Draws row `y` of the scene (palette indices) with only its first `shapeCount` shapes. */
function drawSceneRow(scene: Scene, shapeCount: number, width: number, height: number, y: number, row: Uint8Array): void {
  const centerY = y + 0.5;
  const fraction = centerY / height;
  let band = 0;
  while (scene.bandEdges[band]! < fraction) band++;
  row.fill(scene.bandColors[band]!);
  const shortSide = Math.min(width, height);
  for (const shape of scene.shapes.slice(0, shapeCount)) {
    const shapeX = shape.centerX * width;
    const offsetY = centerY - shape.centerY * height;
    const radius = shape.size * shortSide;
    switch (shape.kind) {
      case 'circle':
      case 'ring': {
        if (Math.abs(offsetY) >= radius) break;
        const half = Math.sqrt(radius * radius - offsetY * offsetY);
        fillSpan(row, shapeX - half, shapeX + half, shape.color);
        const inner = shape.kind === 'ring' ? radius * (1 - shape.aspect * 0.5) : 0;
        if (inner > Math.abs(offsetY)) {
          // The hole of a ring shows the band colour again.
          const innerHalf = Math.sqrt(inner * inner - offsetY * offsetY);
          fillSpan(row, shapeX - innerHalf, shapeX + innerHalf, scene.bandColors[band]!);
        }
        break;
      }
      case 'rectangle':
        if (Math.abs(offsetY) < radius * shape.aspect) fillSpan(row, shapeX - radius, shapeX + radius, shape.color);
        break;
      case 'stripe': {
        // A slanted bar across the whole picture; its slope comes from `aspect`.
        const start = shapeX + offsetY * (shape.aspect - 0.75) * 2;
        fillSpan(row, start - radius * 0.25, start + radius * 0.25, shape.color);
        break;
      }
    }
  }
}

function assertSize(width: number, height: number): void {
  for (const side of [width, height]) {
    if (!Number.isInteger(side) || side < 1 || side > MOCK_IMAGE_MAX_SIDE) {
      throw new RangeError(`Mock image sides must be integers from 1 to ${MOCK_IMAGE_MAX_SIDE}, got ${width}x${height}.`);
    }
  }
}

/**
 * Makes a row source coarser: every `block`×`block` square takes the colour
 * of its centre pixel. Used for the partial images of a stream. The sources
 * here draw any row on its own, so rows are sampled out of order.
 */
function pixelate(source: PngRowSource, block: number): PngRowSource {
  if (block <= 1) return source;
  const bytesPerPixel = source.format === 'rgba' ? 4 : 1;
  const fine = new Uint8Array(source.width * bytesPerPixel);
  let fineRow = -1;
  return {
    ...source,
    fillRow(y, row) {
      const sampleRow = Math.min(source.height - 1, Math.floor(y / block) * block + (block >> 1));
      if (sampleRow !== fineRow) {
        source.fillRow(sampleRow, fine);
        fineRow = sampleRow;
      }
      for (let start = 0; start < source.width; start += block) {
        const sample = Math.min(source.width - 1, start + (block >> 1)) * bytesPerPixel;
        const end = Math.min(source.width, start + block);
        if (bytesPerPixel === 1) {
          row.fill(fine[sample]!, start, end);
        } else {
          for (let x = start; x < end; x++) row.set(fine.subarray(sample, sample + 4), x * 4);
        }
      }
    },
  };
}

function sceneRowSource(scene: Scene, shapeCount: number, width: number, height: number): PngRowSource {
  return {
    width,
    height,
    format: 'indexed',
    palette: scene.palette,
    fillRow: (y, row) => drawSceneRow(scene, shapeCount, width, height, y, row),
  };
}

/** OpenAI accepts 0 to 3 partial images per streamed image. */
export const MOCK_MAX_PARTIAL_IMAGES = 3;

function assertPartialCount(partialImages: number): void {
  if (!Number.isInteger(partialImages) || partialImages < 0 || partialImages > MOCK_MAX_PARTIAL_IMAGES) {
    throw new RangeError(`partialImages must be an integer from 0 to ${MOCK_MAX_PARTIAL_IMAGES}, got ${partialImages}.`);
  }
}

/** Pixel block of partial image `partialIndex`: 8 blocks across the short side first, 4× finer each step. */
function partialBlockSize(width: number, height: number, partialIndex: number): number {
  return Math.max(2, Math.floor(Math.min(width, height) / (8 << (2 * partialIndex))));
}

/**
 * Draws the deterministic mock picture for a prompt: an 8-bit indexed PNG of
 * exactly `width`×`height`. The same request always gives the same bytes.
 */
export function drawMockImage(request: MockImageRequest): Buffer {
  assertSize(request.width, request.height);
  const scene = buildScene(request.prompt, request.index);
  return encodePngRows(sceneRowSource(scene, scene.shapes.length, request.width, request.height), { compressionLevel: 1 });
}

/**
 * The mock picture as a stream: `partialImages` coarser pictures (pixelated,
 * with shapes appearing one after another), then the final picture, equal to
 * {@link drawMockImage}'s. Each PNG is encoded only when the consumer asks
 * for it.
 */
export function* drawMockImageProgressive(request: MockImageRequest & { partialImages: number }): Generator<MockImageFrame> {
  assertSize(request.width, request.height);
  const scene = buildScene(request.prompt, request.index);
  assertPartialCount(request.partialImages);
  const partialCount = request.partialImages;
  for (let partialIndex = 0; partialIndex < partialCount; partialIndex++) {
    const shapeCount = Math.ceil((scene.shapes.length * (partialIndex + 1)) / (partialCount + 1));
    const block = partialBlockSize(request.width, request.height, partialIndex);
    const source = pixelate(sceneRowSource(scene, shapeCount, request.width, request.height), block);
    yield { kind: 'partial', partialImageIndex: partialIndex, png: encodePngRows(source, { compressionLevel: 1 }) };
  }
  yield { kind: 'final', png: drawMockImage(request) };
}

/** Nearest-neighbour lookup table: output column → source column. */
function scaleTable(outputSize: number, sourceSize: number): Int32Array {
  const table = new Int32Array(outputSize);
  for (let position = 0; position < outputSize; position++) table[position] = Math.floor(((position + 0.5) * sourceSize) / outputSize);
  return table;
}

interface Thumbnail {
  image: RgbaImage;
  left: number;
  top: number;
}

/**
 * The further images of an edit, shrunk into a strip along the bottom-left
 * corner. Each is decoded, shrunk and dropped in turn, so sixteen 4096² inputs
 * never sit in memory together.
 */
function buildThumbnails(images: Uint8Array[], width: number, height: number): Thumbnail[] {
  const side = Math.floor(Math.min(width, height) / 8);
  const gap = Math.max(1, Math.floor(side / 8));
  const thumbnails: Thumbnail[] = [];
  if (side < 4) return thumbnails;
  for (const [position, bytes] of images.entries()) {
    const left = gap + position * (side + gap);
    if (left + side > width) break;
    const decoded = decodePng(bytes);
    const columns = scaleTable(side, decoded.width);
    const rows = scaleTable(side, decoded.height);
    const rgba = new Uint8Array(side * side * 4);
    for (let y = 0; y < side; y++) {
      for (let x = 0; x < side; x++) {
        const from = (rows[y]! * decoded.width + columns[x]!) * 4;
        rgba.set(decoded.rgba.subarray(from, from + 4), (y * side + x) * 4);
      }
    }
    thumbnails.push({ image: { width: side, height: side, rgba }, left, top: height - side - gap });
  }
  return thumbnails;
}

function editRowSource(request: MockImageEditRequest): PngRowSource {
  const { width, height } = request;
  const [first, ...others] = request.images;
  if (!first) throw new RangeError('An image edit needs at least one image.');
  const base = decodePng(first);
  const mask = request.mask ? decodePng(request.mask) : undefined;
  const scene = buildScene(request.prompt, request.index);
  const sceneRow = new Uint8Array(width);
  const baseColumns = scaleTable(width, base.width);
  const baseRows = scaleTable(height, base.height);
  const maskColumns = mask ? scaleTable(width, mask.width) : undefined;
  const maskRows = mask ? scaleTable(height, mask.height) : undefined;
  const thumbnails = buildThumbnails(others, width, height);
  return {
    width,
    height,
    format: 'rgba',
    fillRow(y, row) {
      drawSceneRow(scene, scene.shapes.length, width, height, y, sceneRow);
      const baseOffset = baseRows[y]! * base.width;
      // Without a mask the edited area is a centred ellipse half the picture's size.
      const offsetY = (y + 0.5 - height / 2) / (height / 4);
      const ellipseHalf = Math.abs(offsetY) < 1 ? (width / 4) * Math.sqrt(1 - offsetY * offsetY) : -1;
      for (let x = 0; x < width; x++) {
        const editable = mask
          ? mask.rgba[(maskRows![y]! * mask.width + maskColumns![x]!) * 4 + 3] === 0
          : Math.abs(x + 0.5 - width / 2) < ellipseHalf;
        const target = x * 4;
        if (editable) {
          const color = sceneRow[x]! * 3;
          row[target] = scene.palette[color]!;
          row[target + 1] = scene.palette[color + 1]!;
          row[target + 2] = scene.palette[color + 2]!;
          row[target + 3] = 255;
        } else {
          const from = (baseOffset + baseColumns[x]!) * 4;
          row[target] = base.rgba[from]!;
          row[target + 1] = base.rgba[from + 1]!;
          row[target + 2] = base.rgba[from + 2]!;
          row[target + 3] = base.rgba[from + 3]!;
        }
      }
      for (const thumbnail of thumbnails) {
        const line = y - thumbnail.top;
        if (line < 0 || line >= thumbnail.image.height) continue;
        const rowBytes = thumbnail.image.width * 4;
        row.set(thumbnail.image.rgba.subarray(line * rowBytes, (line + 1) * rowBytes), thumbnail.left * 4);
      }
    },
  };
}

/**
 * The deterministic mock edit: the first image scaled (nearest neighbour) to
 * `width`×`height`, with the mask's fully transparent pixels (or, without a
 * mask, a centred ellipse) repainted with the prompt's mock scene, and any
 * further images as thumbnails along the bottom. An RGBA PNG of exactly the
 * requested size. Throws `MediaFormatError` for an input that is not a
 * decodable PNG.
 */
export function editMockImage(request: MockImageEditRequest): Buffer {
  assertSize(request.width, request.height);
  return encodePngRows(editRowSource(request), { compressionLevel: 1 });
}

/**
 * {@link editMockImage} as a stream: `partialImages` pixelated versions of
 * the edit, then the final edit. The inputs are decoded once for all of them.
 */
export function* editMockImageProgressive(request: MockImageEditRequest & { partialImages: number }): Generator<MockImageFrame> {
  assertSize(request.width, request.height);
  assertPartialCount(request.partialImages);
  const source = editRowSource(request);
  for (let partialIndex = 0; partialIndex < request.partialImages; partialIndex++) {
    const block = partialBlockSize(request.width, request.height, partialIndex);
    yield { kind: 'partial', partialImageIndex: partialIndex, png: encodePngRows(pixelate(source, block), { compressionLevel: 1 }) };
  }
  yield { kind: 'final', png: encodePngRows(source, { compressionLevel: 1 }) };
}
