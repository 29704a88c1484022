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
import { writeIntraMacroblock, type BlockPicture } from './h264-intra-macroblock.js';

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

/** In a P slice, intra `mb_type` values follow the five inter ones (Table 7-13). */
const P_SLICE_INTRA_MB_TYPE_OFFSET = 5;

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
