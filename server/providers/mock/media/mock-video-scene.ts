/**
 * What the mock video shows, as a function of the prompt and the frame
 * number. Everything is drawn in whole 16×16 macroblocks (see
 * h264-block-encoder.ts), from back to front:
 *
 * - a diagonal two-colour gradient whose hues come from a hash of the prompt
 *   and turn a step every second;
 * - a vertical bar sweeping from left to right once per second;
 * - the number of the current second (1, 2, ...) in a 3×5 block font;
 * - on the top row, sixteen cells coloured by the prompt hash (a "barcode"
 *   that stays the same for the whole video);
 * - on the bottom row, a progress bar over the whole duration.
 *
 * The rows and the digits are left out when the picture is too small for them.
 * Only integer and basic float arithmetic is used, so the same inputs give the
 * same pictures on any machine.
 */
import { createHash } from 'node:crypto';
import type { BlockPicture } from './h264-intra-macroblock.js';

/** What the scene depends on. */
export interface MockVideoSceneInput {
  prompt: string;
  width: number;
  height: number;
  fps: number;
  frameCount: number;
}

/** An sRGB colour, 0–255 per channel. */
type Rgb = readonly [number, number, number];

/** Degrees the palette turns each second, so every second looks different. */
const HUE_STEP_PER_SECOND = 47;
const SIGNATURE_CELLS = 16;
/** Rows needed before the signature and progress rows are drawn. */
const MIN_ROWS_FOR_BANDS = 4;
const DIGIT_COLOUR: Rgb = [245, 245, 245];
const PROGRESS_TRACK_COLOUR: Rgb = [24, 24, 28];

/** 3×5 glyphs of the digits, one string per row, `#` for a set block. */
const DIGIT_GLYPHS: readonly (readonly string[])[] = [
  ['###', '#.#', '#.#', '#.#', '###'],
  ['.#.', '##.', '.#.', '.#.', '###'],
  ['###', '..#', '###', '#..', '###'],
  ['###', '..#', '###', '..#', '###'],
  ['#.#', '#.#', '###', '..#', '..#'],
  ['###', '#..', '###', '..#', '###'],
  ['###', '#..', '###', '#.#', '###'],
  ['###', '..#', '.#.', '.#.', '.#.'],
  ['###', '#.#', '###', '#.#', '###'],
  ['###', '#.#', '###', '..#', '###'],
];

export class MockVideoScene {
  readonly macroblockColumns: number;
  readonly macroblockRows: number;
  private readonly hash: Uint8Array;
  private readonly baseHue: number;
  private readonly secondHue: number;
  /** Per-second background and bar colours, computed on first use. */
  private paletteSecond = -1;
  private gradient: Uint8Array = new Uint8Array(0);
  private barColour: Uint8Array = new Uint8Array(3);
  private readonly signatureColours: Uint8Array[];
  private readonly progressColour: Uint8Array;
  private readonly trackColour = rgbToVideoYcbcr(PROGRESS_TRACK_COLOUR);
  private readonly digitColour = rgbToVideoYcbcr(DIGIT_COLOUR);

  constructor(private readonly input: MockVideoSceneInput) {
    this.macroblockColumns = Math.ceil(input.width / 16);
    this.macroblockRows = Math.ceil(input.height / 16);
    this.hash = createHash('sha256').update(input.prompt, 'utf8').digest();
    this.baseHue = ((this.hash[0] << 8) | this.hash[1]) % 360;
    this.secondHue = this.baseHue + 90 + (this.hash[2] % 180);
    this.signatureColours = [];
    for (let cell = 0; cell < SIGNATURE_CELLS; cell++) {
      const byte = this.hash[3 + cell];
      this.signatureColours.push(rgbToVideoYcbcr(hslToRgb((byte * 360) / 256, 0.7, 0.35 + (byte % 5) * 0.07)));
    }
    this.progressColour = rgbToVideoYcbcr(hslToRgb(this.secondHue, 0.75, 0.62));
  }

  /** A new block picture of the right size, for `renderFrame`. */
  createPicture(): BlockPicture {
    return new Uint8Array(this.macroblockColumns * this.macroblockRows * 3);
  }

  /** Draws frame `frameIndex` (0-based) into `picture`. */
  renderFrame(frameIndex: number, picture: BlockPicture): void {
    const { fps, frameCount } = this.input;
    const columns = this.macroblockColumns;
    const rows = this.macroblockRows;
    const second = Math.floor(frameIndex / fps);
    this.preparePalette(second);
    picture.set(this.gradient);

    const bands = rows >= MIN_ROWS_FOR_BANDS;
    const contentTop = bands ? 1 : 0;
    const contentBottom = bands ? rows - 1 : rows;

    // The bar enters at the left edge at the start of each second and leaves at the right at its end.
    const barWidth = Math.max(1, Math.round(columns / 20));
    const phase = (frameIndex % fps) / fps;
    const barLeft = Math.floor(phase * (columns + barWidth)) - barWidth;
    for (let x = Math.max(0, barLeft); x < Math.min(columns, barLeft + barWidth); x++) {
      for (let y = contentTop; y < contentBottom; y++) setBlock(picture, columns, x, y, this.barColour);
    }

    this.drawNumber(picture, second + 1, contentTop, contentBottom);

    if (bands) {
      for (let x = 0; x < columns; x++) {
        setBlock(picture, columns, x, 0, this.signatureColours[Math.floor((x * SIGNATURE_CELLS) / columns)]);
      }
      const filled = Math.floor((columns * (frameIndex + 1)) / frameCount);
      for (let x = 0; x < columns; x++) {
        setBlock(picture, columns, x, rows - 1, x < filled ? this.progressColour : this.trackColour);
      }
    }
  }

  private preparePalette(second: number): void {
    if (second === this.paletteSecond) return;
    this.paletteSecond = second;
    const shift = second * HUE_STEP_PER_SECOND;
    const from = hslToRgb(this.baseHue + shift, 0.6, 0.28);
    const to = hslToRgb(this.secondHue + shift, 0.65, 0.56);
    this.barColour = rgbToVideoYcbcr(hslToRgb(this.baseHue + shift + 180, 0.9, 0.8));
    const columns = this.macroblockColumns;
    const rows = this.macroblockRows;
    const span = Math.max(1, columns - 1 + rows - 1);
    this.gradient = new Uint8Array(columns * rows * 3);
    for (let y = 0; y < rows; y++) {
      for (let x = 0; x < columns; x++) {
        const t = (x + y) / span;
        const colour = rgbToVideoYcbcr([
          from[0] + (to[0] - from[0]) * t,
          from[1] + (to[1] - from[1]) * t,
          from[2] + (to[2] - from[2]) * t,
        ]);
        setBlock(this.gradient, columns, x, y, colour);
      }
    }
  }

  /** The seconds counter, scaled with the picture; skipped when it does not fit. */
  private drawNumber(picture: BlockPicture, value: number, top: number, bottom: number): void {
    const digits = String(value);
    const scale = Math.max(1, Math.floor(this.macroblockRows / 16));
    const margin = scale;
    const width = digits.length * 4 * scale - scale;
    if (margin + width > this.macroblockColumns || top + margin + 5 * scale > bottom) return;
    for (let d = 0; d < digits.length; d++) {
      const glyph = DIGIT_GLYPHS[digits.charCodeAt(d) - 48];
      const glyphLeft = margin + d * 4 * scale;
      for (let row = 0; row < 5; row++) {
        for (let column = 0; column < 3; column++) {
          if (glyph[row][column] !== '#') continue;
          for (let dy = 0; dy < scale; dy++) {
            for (let dx = 0; dx < scale; dx++) {
              setBlock(
                picture,
                this.macroblockColumns,
                glyphLeft + column * scale + dx,
                top + margin + row * scale + dy,
                this.digitColour,
              );
            }
          }
        }
      }
    }
  }
}

function setBlock(picture: Uint8Array, columns: number, x: number, y: number, colour: Uint8Array): void {
  const index = (y * columns + x) * 3;
  picture[index] = colour[0];
  picture[index + 1] = colour[1];
  picture[index + 2] = colour[2];
}

/** HSL (hue in degrees, any value; saturation and lightness 0–1) to sRGB. */
function hslToRgb(hue: number, saturation: number, lightness: number): Rgb {
  const h = (((hue % 360) + 360) % 360) / 60;
  const chroma = (1 - Math.abs(2 * lightness - 1)) * saturation;
  const second = chroma * (1 - Math.abs((h % 2) - 1));
  const match = lightness - chroma / 2;
  const sector = Math.floor(h);
  const [r, g, b] =
    sector === 0 ? [chroma, second, 0]
    : sector === 1 ? [second, chroma, 0]
    : sector === 2 ? [0, chroma, second]
    : sector === 3 ? [0, second, chroma]
    : sector === 4 ? [second, 0, chroma]
    : [chroma, 0, second];
  return [Math.round((r + match) * 255), Math.round((g + match) * 255), Math.round((b + match) * 255)];
}

/** BT.709 luma weights (ITU-R BT.709-6, item 3.2). */
const KR = 0.2126;
const KB = 0.0722;
const KG = 1 - KR - KB;

/** sRGB 0–255 to BT.709 Y'CbCr in video range (Y 16–235, Cb/Cr 16–240), as the stream signals. */
export function rgbToVideoYcbcr(rgb: Rgb): Uint8Array {
  const [r, g, b] = rgb;
  const luma = KR * r + KG * g + KB * b;
  return Uint8Array.of(
    clampByte(Math.round(16 + (219 * luma) / 255)),
    clampByte(Math.round(128 + (224 * (b - luma)) / (2 * (1 - KB)) / 255)),
    clampByte(Math.round(128 + (224 * (r - luma)) / (2 * (1 - KR)) / 255)),
  );
}

/** The inverse of `rgbToVideoYcbcr`: what a player shows for a decoded colour. */
export function videoYcbcrToRgb(y: number, cb: number, cr: number): Rgb {
  const luma = ((y - 16) * 255) / 219;
  const blueDifference = ((cb - 128) * 255) / 224;
  const redDifference = ((cr - 128) * 255) / 224;
  const r = luma + 2 * (1 - KR) * redDifference;
  const b = luma + 2 * (1 - KB) * blueDifference;
  const g = (luma - KR * r - KB * b) / KG;
  return [clampByte(Math.round(r)), clampByte(Math.round(g)), clampByte(Math.round(b))];
}

function clampByte(value: number): number {
  return value < 0 ? 0 : value > 255 ? 255 : value;
}

/**
 * Scales a block picture to `outputWidth × outputHeight` RGB pixels by
 * nearest neighbour (the picture is blocks, so nothing is lost by not
 * filtering). The source is the visible `sourceWidth × sourceHeight` area.
 */
export function blockPictureToRgb(
  picture: BlockPicture,
  macroblockColumns: number,
  sourceWidth: number,
  sourceHeight: number,
  outputWidth: number,
  outputHeight: number,
): Uint8Array {
  const blockRgb = new Uint8Array(picture.length);
  for (let i = 0; i < picture.length; i += 3) blockRgb.set(videoYcbcrToRgb(picture[i], picture[i + 1], picture[i + 2]), i);
  const sourceColumnOf = new Int32Array(outputWidth);
  for (let x = 0; x < outputWidth; x++) {
    sourceColumnOf[x] = Math.floor(((x + 0.5) * sourceWidth) / outputWidth) >> 4;
  }
  const rowBytes = outputWidth * 3;
  const out = new Uint8Array(rowBytes * outputHeight);
  let previousBlockRow = -1;
  for (let y = 0; y < outputHeight; y++) {
    const blockRow = Math.floor(((y + 0.5) * sourceHeight) / outputHeight) >> 4;
    const rowStart = y * rowBytes;
    if (blockRow === previousBlockRow) {
      out.copyWithin(rowStart, rowStart - rowBytes, rowStart);
      continue;
    }
    previousBlockRow = blockRow;
    for (let x = 0; x < outputWidth; x++) {
      const source = (blockRow * macroblockColumns + sourceColumnOf[x]) * 3;
      out[rowStart + x * 3] = blockRgb[source];
      out[rowStart + x * 3 + 1] = blockRgb[source + 1];
      out[rowStart + x * 3 + 2] = blockRgb[source + 2];
    }
  }
  return out;
}
