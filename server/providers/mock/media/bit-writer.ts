/**
 * A most-significant-bit-first bit writer, as H.264 raw byte sequence
 * payloads (RBSP), FLAC frames and AAC raw data blocks are laid out: plain
 * bits, unary (Rice quotients), the Exp-Golomb codes of ITU-T H.264 §9.1,
 * and the emulation prevention of §7.4.1 that turns an RBSP into the
 * payload of a NAL unit.
 */

/** Bytes added each time the buffer runs out; doubled as it grows. */
const INITIAL_CAPACITY = 4096;

export class BitWriter {
  private bytes: Uint8Array;
  private byteLength = 0;
  /** Bits not yet flushed, left-aligned in the low `pendingBitCount` bits of `pendingBits`. */
  private pendingBits = 0;
  private pendingBitCount = 0;

  constructor(initialBytes = INITIAL_CAPACITY) {
    this.bytes = new Uint8Array(initialBytes);
  }

  /** Bits written so far. */
  get bitLength(): number {
    return this.byteLength * 8 + this.pendingBitCount;
  }

  /** Writes the low `bitCount` bits of `value`, most significant first (`u(n)`, at most 32 bits). */
  writeBits(value: number, bitCount: number): void {
    if (bitCount > 24) {
      this.writeBits(Math.floor(value / 0x10000) & 0xffff, bitCount - 16);
      this.writeBits(value & 0xffff, 16);
      return;
    }
    // 24 new bits plus at most 7 pending ones stay below 2^31, so bit operators are safe.
    this.pendingBits = (this.pendingBits << bitCount) | (value & ((1 << bitCount) - 1));
    this.pendingBitCount += bitCount;
    while (this.pendingBitCount >= 8) {
      this.pendingBitCount -= 8;
      this.pushByte((this.pendingBits >>> this.pendingBitCount) & 0xff);
    }
    this.pendingBits &= (1 << this.pendingBitCount) - 1;
  }

  /** Writes `count` zero bits followed by a one: unary code, as Rice quotients are written. */
  writeUnary(count: number): void {
    let zeros = count;
    while (zeros > 24) {
      this.writeBits(0, 24);
      zeros -= 24;
    }
    this.writeBits(1, zeros + 1);
  }

  /** Pads with zero bits to the next byte boundary. */
  alignToByte(): void {
    if (this.pendingBitCount > 0) this.writeBits(0, 8 - this.pendingBitCount);
  }

  writeFlag(flag: boolean): void {
    this.writeBits(flag ? 1 : 0, 1);
  }

  /** Unsigned Exp-Golomb code `ue(v)`. */
  writeUnsignedExpGolomb(value: number): void {
    const codeNum = value + 1;
    const bitCount = 32 - Math.clz32(codeNum);
    // bitCount - 1 leading zeros, then codeNum in bitCount bits.
    this.writeBits(0, bitCount - 1);
    this.writeBits(codeNum, bitCount);
  }

  /** Signed Exp-Golomb code `se(v)`: 1 → 1, -1 → 2, 2 → 3, ... */
  writeSignedExpGolomb(value: number): void {
    this.writeUnsignedExpGolomb(value > 0 ? 2 * value - 1 : -2 * value);
  }

  /** `rbsp_trailing_bits()`: a stop bit, then zeros up to the next byte boundary. */
  writeTrailingBits(): void {
    this.writeBits(1, 1);
    if (this.pendingBitCount > 0) this.writeBits(0, 8 - this.pendingBitCount);
  }

  /** The bytes written so far; the writer must be byte-aligned. */
  toBytes(): Uint8Array {
    if (this.pendingBitCount !== 0) throw new Error('BitWriter: not byte-aligned');
    return this.bytes.slice(0, this.byteLength);
  }

  private pushByte(byte: number): void {
    if (this.byteLength === this.bytes.length) {
      const grown = new Uint8Array(this.bytes.length * 2);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.bytes[this.byteLength++] = byte;
  }
}

/**
 * Wraps an RBSP in a NAL unit (header byte plus payload), inserting an
 * emulation prevention byte 0x03 wherever two zero bytes would be followed by
 * a byte of 0x00–0x03, so the payload can never imitate a start code.
 */
export function toNalUnit(nalRefIdc: number, nalUnitType: number, rbsp: Uint8Array): Uint8Array {
  const out = new Uint8Array(1 + rbsp.length + Math.ceil(rbsp.length / 2));
  out[0] = (nalRefIdc << 5) | nalUnitType;
  let length = 1;
  let zeroRun = 0;
  for (const byte of rbsp) {
    if (zeroRun >= 2 && byte <= 3) {
      out[length++] = 3;
      zeroRun = 0;
    }
    out[length++] = byte;
    zeroRun = byte === 0 ? zeroRun + 1 : 0;
  }
  return out.slice(0, length);
}
