/**
 * One Intra 16×16 macroblock of the mock's H.264 stream, with a DC-only residual coded in
 * CAVLC: the prediction modes, the few `coeff_token` codes it needs and the level coding
 * (`h264-block-encoder.ts` writes the parameter sets and slices around it).
 */
import type { BitWriter } from './bit-writer.js';

/**
 * A block picture: `macroblockColumns × macroblockRows` macroblocks in raster
 * order, three bytes (Y, Cb, Cr) each, in video range (Y 16–235, Cb/Cr 16–240).
 */
export type BlockPicture = Uint8Array;

/** Intra 16×16 luma prediction modes (Table 8-4). */
const LUMA_VERTICAL = 0;
const LUMA_HORIZONTAL = 1;
const LUMA_DC = 2;
/** Intra chroma prediction modes (Table 8-5). */
const CHROMA_DC = 0;
const CHROMA_HORIZONTAL = 1;
const CHROMA_VERTICAL = 2;

/**
 * `coeff_token` codes (Table 9-5) for the only cases this encoder emits:
 * no coefficient, one coefficient of magnitude 1 (a trailing one), or one
 * larger coefficient. Each entry is [code, bit length].
 */
interface CoefficientTokenCodes {
  none: readonly [number, number];
  oneTrailingOne: readonly [number, number];
  oneLevel: readonly [number, number];
}
/** Luma DC blocks: the neighbouring blocks never carry AC coefficients here, so nC is always 0. */
const LUMA_TOKENS_NC0: CoefficientTokenCodes = { none: [0b1, 1], oneTrailingOne: [0b01, 2], oneLevel: [0b000101, 6] };
/** Chroma DC blocks of 4:2:0 use nC = -1. */
const CHROMA_DC_TOKENS: CoefficientTokenCodes = { none: [0b01, 2], oneTrailingOne: [0b1, 1], oneLevel: [0b000111, 6] };

/**
 * Codes the macroblock at (`x`, `y`) as Intra 16×16 with a DC-only residual.
 * Its left and upper neighbours are flat and already reconstructed exactly
 * (they equal their targets in `picture`), so horizontal and vertical
 * prediction give a flat prediction equal to that neighbour's colour.
 * Chroma DC prediction is only used without neighbours: with two different
 * neighbours it predicts each 4×4 chroma block differently.
 */
export function writeIntraMacroblock(
  writer: BitWriter,
  picture: BlockPicture,
  x: number,
  y: number,
  columns: number,
  mbTypeOffset: number,
): void {
  const index = (y * columns + x) * 3;
  const left = x > 0 ? index - 3 : -1;
  const top = y > 0 ? index - columns * 3 : -1;
  const targetY = picture[index];
  const targetCb = picture[index + 1];
  const targetCr = picture[index + 2];

  // Hot path (every macroblock of every IDR picture): no closures or arrays here.
  let lumaMode = LUMA_DC;
  let predictedY = 128;
  if (left >= 0 && top >= 0) predictedY = (picture[left] + picture[top] + 1) >> 1;
  else if (left >= 0) predictedY = picture[left];
  else if (top >= 0) predictedY = picture[top];
  if (left >= 0 && Math.abs(targetY - picture[left]) < Math.abs(targetY - predictedY)) {
    lumaMode = LUMA_HORIZONTAL;
    predictedY = picture[left];
  }
  if (top >= 0 && Math.abs(targetY - picture[top]) < Math.abs(targetY - predictedY)) {
    lumaMode = LUMA_VERTICAL;
    predictedY = picture[top];
  }

  // Without neighbours DC (128) is the only mode; otherwise a directional mode is always taken.
  let chromaMode = CHROMA_DC;
  let chromaSource = -1;
  if (left >= 0) {
    chromaMode = CHROMA_HORIZONTAL;
    chromaSource = left;
  }
  if (
    top >= 0 &&
    (chromaSource < 0 ||
      Math.abs(targetCb - picture[top + 1]) + Math.abs(targetCr - picture[top + 2]) <
        Math.abs(targetCb - picture[left + 1]) + Math.abs(targetCr - picture[left + 2]))
  ) {
    chromaMode = CHROMA_VERTICAL;
    chromaSource = top;
  }
  const predictedCb = chromaSource >= 0 ? picture[chromaSource + 1] : 128;
  const predictedCr = chromaSource >= 0 ? picture[chromaSource + 2] : 128;

  const lumaLevel = targetY - predictedY;
  const cbLevel = targetCb - predictedCb;
  const crLevel = targetCr - predictedCr;
  const codedBlockPatternChroma = cbLevel !== 0 || crLevel !== 0 ? 1 : 0;

  // I_16x16_<mode>_<cbp chroma>_0 (Table 7-11); CodedBlockPatternLuma is always 0.
  writer.writeUnsignedExpGolomb(mbTypeOffset + 1 + lumaMode + 4 * codedBlockPatternChroma);
  writer.writeUnsignedExpGolomb(chromaMode);
  writer.writeSignedExpGolomb(0); // mb_qp_delta
  writeSingleDcCoefficientBlock(writer, lumaLevel, LUMA_TOKENS_NC0);
  if (codedBlockPatternChroma !== 0) {
    writeSingleDcCoefficientBlock(writer, cbLevel, CHROMA_DC_TOKENS);
    writeSingleDcCoefficientBlock(writer, crLevel, CHROMA_DC_TOKENS);
  }
}

/**
 * `residual_block_cavlc()` for a DC block whose only nonzero coefficient, if
 * any, is the first one. After the inverse Hadamard transform that level
 * reaches every 4×4 block alike, and at the chosen QPs it adds exactly
 * `level` to every sample.
 */
function writeSingleDcCoefficientBlock(writer: BitWriter, level: number, tokens: CoefficientTokenCodes): void {
  if (level === 0) {
    writer.writeBits(tokens.none[0], tokens.none[1]);
    return;
  }
  if (level === 1 || level === -1) {
    writer.writeBits(tokens.oneTrailingOne[0], tokens.oneTrailingOne[1]);
    writer.writeFlag(level < 0); // trailing_ones_sign_flag
  } else {
    writer.writeBits(tokens.oneLevel[0], tokens.oneLevel[1]);
    writeFirstLevel(writer, level);
  }
  // total_zeros = 0 with one coefficient is "1" in Tables 9-7 and 9-9a alike; no run_before follows.
  writer.writeBits(1, 1);
}

/**
 * The first non-trailing-one level with suffixLength 0 (9.2.2.1). The decoder
 * adds 2 to its levelCode because it cannot have magnitude 1, so we subtract it.
 */
function writeFirstLevel(writer: BitWriter, level: number): void {
  const levelCode = (level > 0 ? 2 * level - 2 : -2 * level - 1) - 2;
  if (levelCode < 14) {
    writer.writeBits(1, levelCode + 1); // level_prefix = levelCode
  } else if (levelCode < 30) {
    writer.writeBits(1, 15); // level_prefix = 14 with a 4-bit suffix
    writer.writeBits(levelCode - 14, 4);
  } else {
    writer.writeBits(1, 16); // level_prefix = 15 with a 12-bit suffix
    writer.writeBits(levelCode - 30, 12);
  }
}
