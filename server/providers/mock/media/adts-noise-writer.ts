/**
 * A minimal AAC-LC stream in ADTS frames, made without an AAC encoder.
 *
 * No AAC encoder exists for Node in the npm registry short of a full ffmpeg
 * build, so the mock writes the bitstream itself and keeps to the one part of
 * AAC-LC that needs no spectral Huffman tables: perceptual noise substitution
 * (PNS, MPEG-4 AAC). Each frame is one long window in which a range of
 * scalefactor bands is marked "noise" with a single energy, so the decoder
 * synthesises band-limited noise at that level; silent frames have no bands
 * at all. The result decodes in any AAC-LC decoder as noise bursts shaped by
 * the words, in a frequency range that depends on the voice.
 *
 * @see ISO/IEC 14496-3:2009 4.4.2 (raw_data_block, individual_channel_stream), 4.6.13 (PNS)
 * @see ISO/IEC 13818-7 6.2 (ADTS header)
 */
import { BitWriter } from './bit-writer.js';

/** Samples per AAC-LC frame. */
export const AAC_FRAME_SAMPLES = 1024;

const SAMPLING_FREQUENCY_INDEX: Record<number, number> = { 48000: 3, 44100: 4, 32000: 5, 24000: 6, 22050: 7, 16000: 8 };

/** Scalefactor band edges for long windows at 22.05 and 24 kHz (ISO/IEC 14496-3 table 4.129). */
const SWB_OFFSETS_LONG_24K = [
  0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 52, 60, 68, 76, 84, 92, 100, 108, 116, 124, 136, 148, 160, 172, 188, 204, 220, 240, 260, 284,
  308, 336, 364, 396, 432, 468, 508, 552, 600, 652, 704, 768, 832, 896, 960, 1024,
];

const ELEMENT_SCE = 0;
const ELEMENT_END = 7;
const ZERO_HCB = 0;
const NOISE_HCB = 13;
/** Scalefactor Huffman code for a difference of 0 (index 60): the single bit `0`. */
const SCALEFACTOR_DIFFERENCE_ZERO = { code: 0, bits: 1 };
/** The first PNS energy of a frame is sent as 9 raw bits, offset by 256, relative to global_gain − 90. */
const NOISE_PCM_OFFSET = 256;
const GLOBAL_GAIN = 100;
/** Noise energy (in 1.5 dB steps) at full level: about -16 dBFS RMS through ffmpeg's decoder. */
const FULL_LEVEL_NOISE_ENERGY = 82;
/** Quietest energy worth sending; below it a frame is silent. */
const NOISE_ENERGY_FLOOR_STEPS = 40;

/** Writes ADTS frames of band-limited noise (or silence) for a mono AAC-LC stream. */
export class AdtsNoiseWriter {
  private readonly samplingIndex: number;
  private readonly firstBand: number;
  private readonly endBand: number;

  /** Noise fills `lowHz` to `highHz` (rounded out to scalefactor bands). */
  constructor(sampleRate: number, lowHz: number, highHz: number) {
    const index = SAMPLING_FREQUENCY_INDEX[sampleRate];
    if (index === undefined || (sampleRate !== 24000 && sampleRate !== 22050)) {
      throw new RangeError(`The ADTS noise writer supports 22.05 and 24 kHz, not ${sampleRate} Hz.`);
    }
    this.samplingIndex = index;
    const binHz = sampleRate / 2 / AAC_FRAME_SAMPLES;
    const bandOf = (hz: number) => {
      const bin = Math.min(AAC_FRAME_SAMPLES - 1, Math.max(0, Math.floor(hz / binHz)));
      let band = 0;
      while (SWB_OFFSETS_LONG_24K[band + 1]! <= bin) band++;
      return band;
    };
    this.firstBand = bandOf(lowHz);
    this.endBand = Math.max(this.firstBand + 1, bandOf(highHz) + 1);
  }

  /** One ADTS frame; `level` from 0 (silence) to 1 sets the noise loudness. */
  writeFrame(level: number): Buffer {
    const steps = level > 0 ? Math.round(4 * Math.log2(level)) : -Infinity;
    const energy = FULL_LEVEL_NOISE_ENERGY + steps;
    const sounding = steps > -NOISE_ENERGY_FLOOR_STEPS;
    const block = new BitWriter(32);
    block.writeBits(ELEMENT_SCE, 3);
    block.writeBits(0, 4); // element_instance_tag
    block.writeBits(GLOBAL_GAIN, 8);
    // ics_info: reserved bit, ONLY_LONG_SEQUENCE, sine window, max_sfb, no prediction.
    block.writeBits(0, 1);
    block.writeBits(0, 2);
    block.writeBits(0, 1);
    block.writeBits(sounding ? this.endBand : 0, 6);
    block.writeBits(0, 1);
    if (sounding) {
      // section_data: zero bands below the voice's range, then noise bands.
      if (this.firstBand > 0) writeSection(block, ZERO_HCB, this.firstBand);
      writeSection(block, NOISE_HCB, this.endBand - this.firstBand);
      // scale_factor_data: the first noise band carries the energy, the others repeat it.
      block.writeBits(energy - (GLOBAL_GAIN - 90) + NOISE_PCM_OFFSET, 9);
      for (let band = this.firstBand + 1; band < this.endBand; band++) {
        block.writeBits(SCALEFACTOR_DIFFERENCE_ZERO.code, SCALEFACTOR_DIFFERENCE_ZERO.bits);
      }
    }
    block.writeBits(0, 1); // pulse_data_present
    block.writeBits(0, 1); // tns_data_present
    block.writeBits(0, 1); // gain_control_data_present
    block.writeBits(ELEMENT_END, 3);
    block.alignToByte();
    const payload = block.toBytes();
    return Buffer.concat([this.header(7 + payload.length), payload]);
  }

  private header(frameLength: number): Buffer {
    const header = new BitWriter(7);
    header.writeBits(0xfff, 12); // syncword
    header.writeBits(0, 1); // MPEG-4
    header.writeBits(0, 2); // layer
    header.writeBits(1, 1); // no CRC
    header.writeBits(1, 2); // profile: AAC LC (object type 2, minus 1)
    header.writeBits(this.samplingIndex, 4);
    header.writeBits(0, 1); // private bit
    header.writeBits(1, 3); // one channel
    header.writeBits(0, 4); // original/copy, home, copyright bits
    header.writeBits(frameLength, 13);
    header.writeBits(0x7ff, 11); // buffer fullness: variable bit rate
    header.writeBits(0, 2); // one raw data block
    return Buffer.from(header.toBytes());
  }
}

/** A section of `length` bands coded with `codebook` (5-bit lengths with escape 31, for long windows). */
function writeSection(writer: BitWriter, codebook: number, length: number): void {
  writer.writeBits(codebook, 4);
  let remaining = length;
  while (remaining >= 31) {
    writer.writeBits(31, 5);
    remaining -= 31;
  }
  writer.writeBits(remaining, 5);
}
