import { describe, expect, it } from 'vitest';
import { OggPageWriter } from './ogg-writer.js';

interface ParsedPage {
  flags: number;
  granule: bigint;
  sequence: number;
  lacing: number[];
  body: Buffer;
  crcMatches: boolean;
}

/** Bitwise Ogg CRC (polynomial 0x04c11db7, unreflected), independent of the writer's table. */
function oggCrc(bytes: Buffer): number {
  let crc = 0;
  for (const byte of bytes) {
    crc ^= byte << 24;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x80000000 ? ((crc << 1) ^ 0x04c11db7) >>> 0 : (crc << 1) >>> 0;
  }
  return crc >>> 0;
}

function parsePages(stream: Buffer): ParsedPage[] {
  const pages: ParsedPage[] = [];
  for (let offset = 0; offset < stream.length; ) {
    expect(stream.toString('latin1', offset, offset + 4)).toBe('OggS');
    const segmentCount = stream[offset + 26]!;
    const lacing = [...stream.subarray(offset + 27, offset + 27 + segmentCount)];
    const bodyLength = lacing.reduce((total, value) => total + value, 0);
    const page = Buffer.from(stream.subarray(offset, offset + 27 + segmentCount + bodyLength));
    const storedCrc = page.readUInt32LE(22);
    page.writeUInt32LE(0, 22);
    pages.push({
      flags: page[5]!,
      granule: page.readBigInt64LE(6),
      sequence: page.readUInt32LE(18),
      lacing,
      body: page.subarray(27 + segmentCount),
      crcMatches: oggCrc(page) === storedCrc,
    });
    offset += page.length;
  }
  return pages;
}

describe('OggPageWriter', () => {
  it('splits a packet over pages of at most 255 segments and marks the continuation', () => {
    const writer = new OggPageWriter(1234);
    const big = Buffer.alloc(70_000, 9);
    const pages = parsePages(
      Buffer.concat([
        ...writer.writePacket(Buffer.from('head'), 0, { flush: true }),
        ...writer.writePacket(big, 960),
        ...writer.writePacket(Buffer.from('tail'), 1920, { endOfStream: true }),
      ]),
    );
    expect(pages.map((page) => page.crcMatches)).toEqual([true, true, true]);
    expect(pages.map((page) => page.sequence)).toEqual([0, 1, 2]);
    // Beginning of stream, then a full page that ends no packet (granule -1), then the continued page ending the stream.
    expect(pages.map((page) => page.flags)).toEqual([0x02, 0x00, 0x05]);
    expect(pages.map((page) => page.granule)).toEqual([0n, -1n, 1920n]);
    expect(pages[1]!.lacing).toEqual(Array(255).fill(255));
    // 70000 = 274 × 255 + 130: 19 more full segments and a 130-byte one, then "tail".
    expect(pages[2]!.lacing).toEqual([...Array(19).fill(255), 130, 4]);
    expect(Buffer.concat([pages[1]!.body, pages[2]!.body.subarray(0, -4)]).equals(big)).toBe(true);
  });

  it('ends a packet whose length is a multiple of 255 with a zero-length segment', () => {
    const writer = new OggPageWriter(1);
    const [page] = parsePages(Buffer.concat(writer.writePacket(Buffer.alloc(510), 5, { flush: true })));
    expect(page!.lacing).toEqual([255, 255, 0]);
    expect(page!.granule).toBe(5n);
  });
});
