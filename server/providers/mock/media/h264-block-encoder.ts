/**
 * A minimal H.264 (ITU-T H.264 | ISO/IEC 14496-10) encoder for "block
 * pictures": pictures in which every 16×16 macroblock is one flat YCbCr
 * colour. That is all the mock provider draws, and it lets the encoder stay
 * tiny and exact:
 *
 * - Constrained Baseline profile, CAVLC, one slice per picture, 4:2:0, no
 *   deblocking (so block edges stay sharp and reconstruction stays exact).
 * - IDR pictures code every macroblock as Intra 16×16 predicted from its left
 *   or upper neighbour (or DC), with a DC-only residual. At QP 28 (chroma QP
 *   22 through `chroma_qp_index_offset` -6) one coefficient level adds exactly
 *   one code value to every sample, so the decoder reconstructs the requested
 *   colour exactly and later predictions can be computed from the targets.
 * - P pictures skip unchanged macroblocks (`P_Skip`, motion vector 0, which
 *   copies the previous picture) and code changed ones as intra macroblocks.
 *
 * The output is one NAL unit per picture, without start code or length
 * prefix; parameter sets come separately for the container.
 */
import { BitWriter, toNalUnit } from './bit-writer.js';

/** Geometry and rate of a stream. */
export interface H264StreamConfig {
  /** Visible width in pixels, even. */
  width: number;
  /** Visible height in pixels, even. */
  height: number;
  /** Frames per second, an integer. */
  fps: number;
  /** Frames from one IDR picture to the next. */
  gopLength: number;
}

/** What a container needs to describe the stream. */
export interface H264ParameterSets {
  /** Sequence parameter set NAL unit (header byte included). */
  sps: Uint8Array;
  /** Picture parameter set NAL unit. */
  pps: Uint8Array;
  profileIdc: number;
  /** The constraint-flag byte that follows `profile_idc` in the SPS. */
  profileCompatibility: number;
  levelIdc: number;
  /** RFC 6381 codec string, e.g. `avc1.42c028`. */
  codec: string;
}

/**
 * A block picture: `macroblockColumns × macroblockRows` macroblocks in raster
 * order, three bytes (Y, Cb, Cr) each, in video range (Y 16–235, Cb/Cr 16–240).
 */
export type BlockPicture = Uint8Array;

const NAL_SLICE = 1;
const NAL_IDR_SLICE = 5;
const NAL_SPS = 7;
const NAL_PPS = 8;

const PROFILE_BASELINE = 66;
/** constraint_set0_flag and constraint_set1_flag: Constrained Baseline. */
const CONSTRAINED_BASELINE_FLAGS = 0xc0;

const SLICE_QP = 28;
const CHROMA_QP_INDEX_OFFSET = -6;

/** `slice_type` values 5..9 promise that every slice of the picture has that type. */
const SLICE_TYPE_P_ALL = 5;
const SLICE_TYPE_I_ALL = 7;

/** Intra 16×16 luma prediction modes (Table 8-4). */
const LUMA_VERTICAL = 0;
const LUMA_HORIZONTAL = 1;
const LUMA_DC = 2;
/** Intra chroma prediction modes (Table 8-5). */
const CHROMA_DC = 0;
const CHROMA_HORIZONTAL = 1;
const CHROMA_VERTICAL = 2;

/** In a P slice, intra `mb_type` values follow the five inter ones (Table 7-13). */
const P_SLICE_INTRA_MB_TYPE_OFFSET = 5;

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
 * Levels of Table A-1: [level_idc, MaxFS (macroblocks per frame),
 * MaxMBPS (macroblocks per second)].
 */
const LEVELS: readonly (readonly [number, number, number])[] = [
  [10, 99, 1485],
  [11, 396, 3000],
  [12, 396, 6000],
  [13, 396, 11880],
  [20, 396, 11880],
  [21, 792, 19800],
  [22, 1620, 20250],
  [30, 1620, 40500],
  [31, 3600, 108000],
  [32, 5120, 216000],
  [40, 8192, 245760],
  [42, 8704, 522240],
  [50, 22080, 589824],
  [51, 36864, 983040],
  [52, 36864, 2073600],
];

/** The lowest level whose limits (Table A-1 and the per-side limit of A.3.1) admit the stream. */
export function selectLevelIdc(macroblockColumns: number, macroblockRows: number, fps: number): number {
  const frameSize = macroblockColumns * macroblockRows;
  for (const [levelIdc, maxFrameSize, maxMacroblocksPerSecond] of LEVELS) {
    const maxSide = Math.sqrt(maxFrameSize * 8);
    if (
      frameSize <= maxFrameSize &&
      macroblockColumns <= maxSide &&
      macroblockRows <= maxSide &&
      frameSize * fps <= maxMacroblocksPerSecond
    ) {
      return levelIdc;
    }
  }
  throw new RangeError(`no H.264 level admits ${macroblockColumns}x${macroblockRows} macroblocks at ${fps} fps`);
}

export class H264BlockEncoder {
  readonly macroblockColumns: number;
  readonly macroblockRows: number;
  readonly parameterSets: H264ParameterSets;
  private readonly log2MaxFrameNum: number;
  private frameNum = 0;
  private idrPicId = 0;

  constructor(private readonly config: H264StreamConfig) {
    const { width, height, fps, gopLength } = config;
    if (width % 2 !== 0 || height % 2 !== 0 || width < 2 || height < 2) {
      throw new RangeError(`H.264 4:2:0 needs an even size, got ${width}x${height}`);
    }
    if (!Number.isInteger(fps) || fps < 1) throw new RangeError(`fps must be a positive integer, got ${fps}`);
    this.macroblockColumns = Math.ceil(width / 16);
    this.macroblockRows = Math.ceil(height / 16);
    // frame_num counts pictures since the last IDR; it must not wrap inside a GOP.
    this.log2MaxFrameNum = Math.min(16, Math.max(4, Math.ceil(Math.log2(gopLength + 1))));
    const levelIdc = selectLevelIdc(this.macroblockColumns, this.macroblockRows, fps);
    const hex = (value: number) => value.toString(16).padStart(2, '0');
    this.parameterSets = {
      sps: this.writeSequenceParameterSet(levelIdc),
      pps: writePictureParameterSet(),
      profileIdc: PROFILE_BASELINE,
      profileCompatibility: CONSTRAINED_BASELINE_FLAGS,
      levelIdc,
      codec: `avc1.${hex(PROFILE_BASELINE)}${hex(CONSTRAINED_BASELINE_FLAGS)}${hex(levelIdc)}`,
    };
  }

  /** Codes `picture` as an IDR picture (a random access point). */
  encodeIdr(picture: BlockPicture): Uint8Array {
    this.checkPictureSize(picture);
    this.frameNum = 0;
    const writer = new BitWriter();
    this.writeSliceHeader(writer, true);
    const columns = this.macroblockColumns;
    for (let y = 0; y < this.macroblockRows; y++) {
      for (let x = 0; x < columns; x++) writeIntraMacroblock(writer, picture, x, y, columns, 0);
    }
    writer.writeTrailingBits();
    // Consecutive IDR pictures must differ in idr_pic_id (7.4.3).
    this.idrPicId = (this.idrPicId + 1) % 65536;
    this.frameNum = 1;
    return toNalUnit(3, NAL_IDR_SLICE, writer.toBytes());
  }

  /**
   * Codes `picture` as a P picture referring to `previous`, the picture coded
   * just before it: macroblocks of the same colour are skipped.
   */
  encodePredicted(picture: BlockPicture, previous: BlockPicture): Uint8Array {
    this.checkPictureSize(picture);
    this.checkPictureSize(previous);
    const writer = new BitWriter();
    this.writeSliceHeader(writer, false);
    const columns = this.macroblockColumns;
    let skipRun = 0;
    for (let y = 0; y < this.macroblockRows; y++) {
      for (let x = 0; x < columns; x++) {
        const index = (y * columns + x) * 3;
        if (
          picture[index] === previous[index] &&
          picture[index + 1] === previous[index + 1] &&
          picture[index + 2] === previous[index + 2]
        ) {
          skipRun++;
          continue;
        }
        writer.writeUnsignedExpGolomb(skipRun);
        skipRun = 0;
        writeIntraMacroblock(writer, picture, x, y, columns, P_SLICE_INTRA_MB_TYPE_OFFSET);
      }
    }
    if (skipRun > 0) writer.writeUnsignedExpGolomb(skipRun);
    writer.writeTrailingBits();
    this.frameNum = (this.frameNum + 1) % (1 << this.log2MaxFrameNum);
    return toNalUnit(2, NAL_SLICE, writer.toBytes());
  }

  private checkPictureSize(picture: BlockPicture): void {
    const expected = this.macroblockColumns * this.macroblockRows * 3;
    if (picture.length !== expected) {
      throw new RangeError(`block picture has ${picture.length} bytes, expected ${expected}`);
    }
  }

  private writeSequenceParameterSet(levelIdc: number): Uint8Array {
    const { width, height, fps } = this.config;
    const writer = new BitWriter();
    writer.writeBits(PROFILE_BASELINE, 8);
    writer.writeBits(CONSTRAINED_BASELINE_FLAGS, 8);
    writer.writeBits(levelIdc, 8);
    writer.writeUnsignedExpGolomb(0); // seq_parameter_set_id
    writer.writeUnsignedExpGolomb(this.log2MaxFrameNum - 4);
    // Picture order type 2: output order is decoding order, no POC fields in slices.
    writer.writeUnsignedExpGolomb(2);
    writer.writeUnsignedExpGolomb(1); // max_num_ref_frames
    writer.writeFlag(false); // gaps_in_frame_num_value_allowed_flag
    writer.writeUnsignedExpGolomb(this.macroblockColumns - 1);
    writer.writeUnsignedExpGolomb(this.macroblockRows - 1);
    writer.writeFlag(true); // frame_mbs_only_flag
    writer.writeFlag(true); // direct_8x8_inference_flag
    const cropRight = (this.macroblockColumns * 16 - width) / 2;
    const cropBottom = (this.macroblockRows * 16 - height) / 2;
    const cropping = cropRight > 0 || cropBottom > 0;
    writer.writeFlag(cropping);
    if (cropping) {
      // Offsets count pairs of luma samples in 4:2:0 frames (CropUnitX = CropUnitY = 2).
      writer.writeUnsignedExpGolomb(0);
      writer.writeUnsignedExpGolomb(cropRight);
      writer.writeUnsignedExpGolomb(0);
      writer.writeUnsignedExpGolomb(cropBottom);
    }
    writer.writeFlag(true); // vui_parameters_present_flag
    writeVideoUsabilityInformation(writer, fps);
    writer.writeTrailingBits();
    return toNalUnit(3, NAL_SPS, writer.toBytes());
  }

  private writeSliceHeader(writer: BitWriter, idr: boolean): void {
    writer.writeUnsignedExpGolomb(0); // first_mb_in_slice
    writer.writeUnsignedExpGolomb(idr ? SLICE_TYPE_I_ALL : SLICE_TYPE_P_ALL);
    writer.writeUnsignedExpGolomb(0); // pic_parameter_set_id
    writer.writeBits(idr ? 0 : this.frameNum, this.log2MaxFrameNum);
    if (idr) writer.writeUnsignedExpGolomb(this.idrPicId);
    if (!idr) {
      writer.writeFlag(false); // num_ref_idx_active_override_flag
      writer.writeFlag(false); // ref_pic_list_modification_flag_l0
    }
    // dec_ref_pic_marking(): every picture is a reference, managed by the sliding window.
    if (idr) {
      writer.writeFlag(false); // no_output_of_prior_pics_flag
      writer.writeFlag(false); // long_term_reference_flag
    } else {
      writer.writeFlag(false); // adaptive_ref_pic_marking_mode_flag
    }
    writer.writeSignedExpGolomb(0); // slice_qp_delta
    writer.writeUnsignedExpGolomb(1); // disable_deblocking_filter_idc: off
  }
}

function writePictureParameterSet(): Uint8Array {
  const writer = new BitWriter();
  writer.writeUnsignedExpGolomb(0); // pic_parameter_set_id
  writer.writeUnsignedExpGolomb(0); // seq_parameter_set_id
  writer.writeFlag(false); // entropy_coding_mode_flag: CAVLC
  writer.writeFlag(false); // bottom_field_pic_order_in_frame_present_flag
  writer.writeUnsignedExpGolomb(0); // num_slice_groups_minus1
  writer.writeUnsignedExpGolomb(0); // num_ref_idx_l0_default_active_minus1
  writer.writeUnsignedExpGolomb(0); // num_ref_idx_l1_default_active_minus1
  writer.writeFlag(false); // weighted_pred_flag
  writer.writeBits(0, 2); // weighted_bipred_idc
  writer.writeSignedExpGolomb(SLICE_QP - 26); // pic_init_qp_minus26
  writer.writeSignedExpGolomb(0); // pic_init_qs_minus26
  writer.writeSignedExpGolomb(CHROMA_QP_INDEX_OFFSET);
  writer.writeFlag(true); // deblocking_filter_control_present_flag
  writer.writeFlag(false); // constrained_intra_pred_flag
  writer.writeFlag(false); // redundant_pic_cnt_present_flag
  writer.writeTrailingBits();
  return toNalUnit(3, NAL_PPS, writer.toBytes());
}

/**
 * VUI (Annex E): BT.709 colour in video range, the frame rate, and
 * `max_num_reorder_frames` 0 so that decoders output each frame at once.
 */
function writeVideoUsabilityInformation(writer: BitWriter, fps: number): void {
  writer.writeFlag(false); // aspect_ratio_info_present_flag (square pixels by default)
  writer.writeFlag(false); // overscan_info_present_flag
  writer.writeFlag(true); // video_signal_type_present_flag
  writer.writeBits(5, 3); // video_format: unspecified
  writer.writeFlag(false); // video_full_range_flag
  writer.writeFlag(true); // colour_description_present_flag
  writer.writeBits(1, 8); // colour_primaries: BT.709
  writer.writeBits(1, 8); // transfer_characteristics: BT.709
  writer.writeBits(1, 8); // matrix_coefficients: BT.709
  writer.writeFlag(false); // chroma_loc_info_present_flag
  writer.writeFlag(true); // timing_info_present_flag
  writer.writeBits(1, 32); // num_units_in_tick
  writer.writeBits(2 * fps, 32); // time_scale: two ticks per frame
  writer.writeFlag(true); // fixed_frame_rate_flag
  writer.writeFlag(false); // nal_hrd_parameters_present_flag
  writer.writeFlag(false); // vcl_hrd_parameters_present_flag
  writer.writeFlag(false); // pic_struct_present_flag
  writer.writeFlag(true); // bitstream_restriction_flag
  writer.writeFlag(true); // motion_vectors_over_pic_boundaries_flag
  writer.writeUnsignedExpGolomb(0); // max_bytes_per_pic_denom
  writer.writeUnsignedExpGolomb(0); // max_bits_per_mb_denom
  writer.writeUnsignedExpGolomb(10); // log2_max_mv_length_horizontal
  writer.writeUnsignedExpGolomb(10); // log2_max_mv_length_vertical
  writer.writeUnsignedExpGolomb(0); // max_num_reorder_frames
  writer.writeUnsignedExpGolomb(1); // max_dec_frame_buffering
}

/**
 * Codes the macroblock at (`x`, `y`) as Intra 16×16 with a DC-only residual.
 * Its left and upper neighbours are flat and already reconstructed exactly
 * (they equal their targets in `picture`), so horizontal and vertical
 * prediction give a flat prediction equal to that neighbour's colour.
 * Chroma DC prediction is only used without neighbours: with two different
 * neighbours it predicts each 4×4 chroma block differently.
 */
function writeIntraMacroblock(
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
