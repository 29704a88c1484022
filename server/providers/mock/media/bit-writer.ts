/**
 * A most-significant-bit-first bit writer, as FLAC frames and AAC raw data
 * blocks are laid out.
 */
export class BitWriter {
  private buffer: Uint8Array;
  private length = 0;
  /** Bits not yet flushed to `buffer`, right-aligned; at most 7 between calls. */
  private pending = 0;
  private pendingBits = 0;

  constructor(initialBytes = 1024) {
    this.buffer = new Uint8Array(initialBytes);
  }

  /** Bits written so far. */
  get bitLength(): number {
    return this.length * 8 + this.pendingBits;
  }

  /** Writes the low `count` bits of `value` (0 ≤ count ≤ 32), most significant first. */
  writeBits(value: number, count: number): void {
    if (count > 24) {
      this.writeBits(Math.floor(value / 65536) & ((1 << (count - 16)) - 1), count - 16);
      this.writeBits(value & 0xffff, 16);
      return;
    }
    if (count === 0) return;
    this.pending = (this.pending << count) | (value & ((1 << count) - 1));
    this.pendingBits += count;
    while (this.pendingBits >= 8) {
      this.pendingBits -= 8;
      this.pushByte((this.pending >>> this.pendingBits) & 0xff);
    }
    this.pending &= (1 << this.pendingBits) - 1;
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
    if (this.pendingBits > 0) this.writeBits(0, 8 - this.pendingBits);
  }

  /** The bytes written (call after {@link alignToByte}); a copy. */
  toBytes(): Uint8Array {
    if (this.pendingBits !== 0) throw new Error('BitWriter: not byte-aligned');
    return this.buffer.slice(0, this.length);
  }

  private pushByte(byte: number): void {
    if (this.length === this.buffer.length) {
      const grown = new Uint8Array(this.buffer.length * 2);
      grown.set(this.buffer);
      this.buffer = grown;
    }
    this.buffer[this.length++] = byte;
  }
}
