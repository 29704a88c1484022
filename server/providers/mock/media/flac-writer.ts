/**
 * A small FLAC encoder for 16-bit mono: constant subframes for silence and
 * fixed-predictor subframes (orders 0–4) with partitioned Rice residuals
 * otherwise. That is the subset of FLAC every decoder implements, and it
 * compresses the mock speech (tones and silence) well, with no native or
 * emscripten library.
 *
 * @see https://www.rfc-editor.org/rfc/rfc9639 (FLAC format)
 */
import { BitWriter } from './bit-writer.js';

/** Samples per FLAC block: the common choice of the reference encoder. */
export const FLAC_BLOCK_SIZE = 4096;

const SAMPLE_RATE_CODES: Record<number, number> = { 8000: 4, 16000: 5, 22050: 6, 24000: 7, 32000: 8, 44100: 9, 48000: 10, 96000: 11 };

function crcTable(polynomial: number, width: 8 | 16): Uint16Array {
  const table = new Uint16Array(256);
  const top = 1 << (width - 1);
  const mask = (1 << width) - 1;
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << (width - 8);
    for (let bit = 0; bit < 8; bit++) crc = crc & top ? ((crc << 1) ^ polynomial) & mask : (crc << 1) & mask;
    table[byte] = crc;
  }
  return table;
}

const CRC8_TABLE = crcTable(0x07, 8);
const CRC16_TABLE = crcTable(0x8005, 16);

function crc8(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = CRC8_TABLE[crc ^ byte]!;
  return crc;
}

function crc16(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[(crc >>> 8) ^ byte]!;
  return crc;
}

function metadataBlock(type: number, last: boolean, body: Uint8Array): Buffer {
  const header = Buffer.from([(last ? 0x80 : 0) | type, (body.length >>> 16) & 0xff, (body.length >>> 8) & 0xff, body.length & 0xff]);
  return Buffer.concat([header, body]);
}

/**
 * `fLaC`, STREAMINFO and a VORBIS_COMMENT block. The total sample count is
 * known before encoding (the mock plans the whole clip first); the MD5 of
 * the audio is left zero, which the format defines as "not computed", since
 * the header goes out before the audio is made.
 */
export function buildFlacHeader(options: { sampleRate: number; totalSamples: number; vorbisComment: Uint8Array }): Buffer {
  const { sampleRate, totalSamples } = options;
  const blockSize = Math.min(FLAC_BLOCK_SIZE, Math.max(16, totalSamples));
  const info = new BitWriter(34);
  info.writeBits(blockSize, 16);
  info.writeBits(blockSize, 16);
  info.writeBits(0, 24); // minimum frame size: unknown
  info.writeBits(0, 24); // maximum frame size: unknown
  info.writeBits(sampleRate, 20);
  info.writeBits(0, 3); // channels − 1
  info.writeBits(15, 5); // bits per sample − 1
  info.writeBits(Math.floor(totalSamples / 2 ** 32), 4);
  info.writeBits(totalSamples >>> 0, 32);
  for (let index = 0; index < 4; index++) info.writeBits(0, 32); // MD5
  return Buffer.concat([
    Buffer.from('fLaC', 'latin1'),
    metadataBlock(0, false, info.toBytes()),
    metadataBlock(4, true, options.vorbisComment),
  ]);
}

/** Residual of fixed predictor `order` for sample `index` (index ≥ order). */
function fixedResidual(samples: Int16Array, index: number, order: number): number {
  switch (order) {
    case 0:
      return samples[index]!;
    case 1:
      return samples[index]! - samples[index - 1]!;
    case 2:
      return samples[index]! - 2 * samples[index - 1]! + samples[index - 2]!;
    case 3:
      return samples[index]! - 3 * samples[index - 1]! + 3 * samples[index - 2]! - samples[index - 3]!;
    default:
      return samples[index]! - 4 * samples[index - 1]! + 6 * samples[index - 2]! - 4 * samples[index - 3]! + samples[index - 4]!;
  }
}

/** Bits to Rice-code `values[from, to)` with parameter `parameter`. */
function riceBits(values: Uint32Array, from: number, to: number, parameter: number): number {
  let bits = (to - from) * (parameter + 1);
  for (let index = from; index < to; index++) bits += values[index]! >>> parameter;
  return bits;
}

/** The best Rice parameter (0–14) for a partition, searched around the one its mean suggests. */
function bestRiceParameter(values: Uint32Array, from: number, to: number): { parameter: number; bits: number } {
  let sum = 0;
  for (let index = from; index < to; index++) sum += values[index]!;
  const mean = sum / Math.max(1, to - from);
  const guess = mean < 1 ? 0 : Math.min(14, Math.floor(Math.log2(mean)));
  let best = { parameter: guess, bits: riceBits(values, from, to, guess) };
  for (const parameter of [guess - 1, guess + 1]) {
    if (parameter < 0 || parameter > 14) continue;
    const bits = riceBits(values, from, to, parameter);
    if (bits < best.bits) best = { parameter, bits };
  }
  return best;
}

/** Encodes blocks of 16-bit mono samples into FLAC frames, numbering them from 0. */
export class FlacFrameEncoder {
  private frameNumber = 0;
  private readonly sampleRateCode: number;

  constructor(sampleRate: number) {
    const code = SAMPLE_RATE_CODES[sampleRate];
    if (code === undefined) throw new RangeError(`No FLAC frame code for ${sampleRate} Hz.`);
    this.sampleRateCode = code;
  }

  /** One frame of `samples.length` samples (the stream's block size; only the last may be shorter). */
  encodeFrame(samples: Int16Array): Buffer {
    const blockSize = samples.length;
    const writer = new BitWriter(blockSize * 2 + 64);
    writer.writeBits(0b11111111111110, 14); // frame sync
    writer.writeBits(0, 1); // reserved
    writer.writeBits(0, 1); // fixed block size: frames are numbered, not sample-addressed
    const sizeCode = blockSize === FLAC_BLOCK_SIZE ? 0b1100 : 0b0111;
    writer.writeBits(sizeCode, 4);
    writer.writeBits(this.sampleRateCode, 4);
    writer.writeBits(0, 4); // one channel
    writer.writeBits(0b100, 3); // 16 bits per sample
    writer.writeBits(0, 1); // reserved
    writeUtf8Number(writer, this.frameNumber++);
    if (sizeCode === 0b0111) writer.writeBits(blockSize - 1, 16);
    const header = writer.toBytes();
    writer.writeBits(crc8(header), 8);
    writeSubframe(writer, samples);
    writer.alignToByte();
    const body = writer.toBytes();
    const frame = Buffer.allocUnsafe(body.length + 2);
    frame.set(body);
    frame.writeUInt16BE(crc16(body), body.length);
    return frame;
  }
}

/** Frame numbers are coded like UTF-8 code points (up to 36 bits). */
function writeUtf8Number(writer: BitWriter, value: number): void {
  if (value < 0x80) {
    writer.writeBits(value, 8);
    return;
  }
  let continuationBytes = value < 0x800 ? 1 : value < 0x10000 ? 2 : value < 0x200000 ? 3 : value < 0x4000000 ? 4 : 5;
  const leadMarker = (0xff00 >> (continuationBytes + 1)) & 0xff;
  writer.writeBits(leadMarker | Math.floor(value / 2 ** (6 * continuationBytes)), 8);
  while (continuationBytes-- > 0) writer.writeBits(0x80 | (Math.floor(value / 2 ** (6 * continuationBytes)) & 0x3f), 8);
}

function writeSubframe(writer: BitWriter, samples: Int16Array): void {
  const first = samples[0]!;
  if (samples.every((sample) => sample === first)) {
    writer.writeBits(0, 8); // zero pad, CONSTANT, no wasted bits
    writer.writeBits(first & 0xffff, 16);
    return;
  }
  const blockSize = samples.length;
  // The order whose residuals are smallest overall (as libFLAC's fixed-order estimate).
  let bestOrder = 0;
  let bestSum = Infinity;
  for (let order = 0; order <= Math.min(4, blockSize - 1); order++) {
    let sum = 0;
    for (let index = order; index < blockSize; index++) sum += Math.abs(fixedResidual(samples, index, order));
    if (sum < bestSum) {
      bestSum = sum;
      bestOrder = order;
    }
  }
  const order = bestOrder;
  // Zigzag-folded residuals, indexed by sample (the first `order` are warm-up samples, unused).
  const folded = new Uint32Array(blockSize);
  for (let index = order; index < blockSize; index++) {
    const residual = fixedResidual(samples, index, order);
    folded[index] = residual >= 0 ? residual * 2 : -residual * 2 - 1;
  }
  // Try partition orders 0–4 (each partition holds blockSize / 2^p samples, the first minus the warm-up).
  let best = { partitionOrder: 0, parameters: [0], bits: Infinity };
  for (let partitionOrder = 0; partitionOrder <= 4; partitionOrder++) {
    const partitions = 1 << partitionOrder;
    if (blockSize % partitions !== 0 || blockSize / partitions <= order) break;
    const size = blockSize / partitions;
    const parameters: number[] = [];
    let bits = 0;
    for (let partition = 0; partition < partitions; partition++) {
      const choice = bestRiceParameter(folded, partition === 0 ? order : partition * size, (partition + 1) * size);
      parameters.push(choice.parameter);
      bits += choice.bits + 4;
    }
    if (bits < best.bits) best = { partitionOrder, parameters, bits };
  }
  writer.writeBits(((0b001000 | order) << 1) & 0xff, 8); // zero pad, FIXED of `order`, no wasted bits
  for (let index = 0; index < order; index++) writer.writeBits(samples[index]! & 0xffff, 16);
  writer.writeBits(0, 2); // residual coding: Rice with 4-bit parameters
  writer.writeBits(best.partitionOrder, 4);
  const size = blockSize >> best.partitionOrder;
  best.parameters.forEach((parameter, partition) => {
    writer.writeBits(parameter, 4);
    const mask = (1 << parameter) - 1;
    for (let index = partition === 0 ? order : partition * size; index < (partition + 1) * size; index++) {
      const value = folded[index]!;
      writer.writeUnary(value >>> parameter);
      if (parameter > 0) writer.writeBits(value & mask, parameter);
    }
  });
}
