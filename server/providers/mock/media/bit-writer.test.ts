import { describe, expect, it } from 'vitest';
import { BitWriter, toNalUnit } from './bit-writer.js';

function bitsOf(write: (writer: BitWriter) => void): string {
  const writer = new BitWriter();
  write(writer);
  writer.writeTrailingBits();
  const bits = [...writer.toBytes()].map((byte) => byte.toString(2).padStart(8, '0')).join('');
  // Drop the stop bit and the alignment zeros after it.
  return bits.slice(0, bits.lastIndexOf('1'));
}

describe('BitWriter', () => {
  it('writes unsigned Exp-Golomb codes as in H.264 Table 9-2', () => {
    expect(bitsOf((writer) => writer.writeUnsignedExpGolomb(0))).toBe('1');
    expect(bitsOf((writer) => writer.writeUnsignedExpGolomb(1))).toBe('010');
    expect(bitsOf((writer) => writer.writeUnsignedExpGolomb(2))).toBe('011');
    expect(bitsOf((writer) => writer.writeUnsignedExpGolomb(7))).toBe('0001000');
    expect(bitsOf((writer) => writer.writeUnsignedExpGolomb(8159))).toBe('0'.repeat(12) + (8160).toString(2));
  });

  it('maps signed Exp-Golomb values as in Table 9-3', () => {
    expect(bitsOf((writer) => writer.writeSignedExpGolomb(0))).toBe('1');
    expect(bitsOf((writer) => writer.writeSignedExpGolomb(1))).toBe('010');
    expect(bitsOf((writer) => writer.writeSignedExpGolomb(-1))).toBe('011');
    expect(bitsOf((writer) => writer.writeSignedExpGolomb(-6))).toBe('0001101');
  });

  it('writes fixed-width fields of up to 32 bits', () => {
    const writer = new BitWriter();
    writer.writeBits(0b101, 3);
    writer.writeBits(0xdeadbeef, 32);
    writer.writeBits(0b10110, 5);
    expect([...writer.toBytes()]).toEqual([0xbb, 0xd5, 0xb7, 0xdd, 0xf6]);
  });

  it('refuses to hand out a partial byte', () => {
    const writer = new BitWriter();
    writer.writeBits(1, 3);
    expect(() => writer.toBytes()).toThrow(/aligned/);
  });
});

describe('toNalUnit', () => {
  it('prefixes the header and escapes would-be start codes', () => {
    const rbsp = Uint8Array.of(0, 0, 1, 0, 0, 0, 0, 0, 4, 0, 0);
    expect([...toNalUnit(3, 5, rbsp)]).toEqual([0x65, 0, 0, 3, 1, 0, 0, 3, 0, 0, 3, 0, 4, 0, 0]);
  });
});
