/**
 * Ogg pages (RFC 3533) for one logical stream: packets in, pages out.
 *
 * @see https://www.rfc-editor.org/rfc/rfc3533
 */

const OGG_CRC_TABLE = (() => {
  // CRC-32 with polynomial 0x04c11db7, not reflected, initial value 0 (RFC 3533 section 6).
  const table = new Uint32Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte << 24;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
    table[byte] = crc >>> 0;
  }
  return table;
})();

function oggCrc(bytes: Uint8Array): number {
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) ^ OGG_CRC_TABLE[((crc >>> 24) ^ byte) & 0xff]!) >>> 0;
  return crc;
}

const HEADER_TYPE_CONTINUED = 0x01;
const HEADER_TYPE_BEGIN = 0x02;
const HEADER_TYPE_END = 0x04;
const MAX_SEGMENTS = 255;

/**
 * Collects packets into pages. `writePacket` returns the pages completed by
 * that packet (a page closes when it reaches 255 segments, or when the caller
 * asks for a flush); `end` closes the stream.
 */
export class OggPageWriter {
  private sequence = 0;
  private segments: number[] = [];
  private data: Uint8Array[] = [];
  /** Granule position of the last packet that ended on the page being built, or -1. */
  private pageGranule = -1;
  /** Whether the page being built starts with the rest of a packet begun on the previous page. */
  private continued = false;
  private started = false;

  constructor(private readonly serial: number) {}

  /** Adds a packet ending at `granulePosition`; with `flush`, the page is closed after it. */
  writePacket(packet: Uint8Array, granulePosition: number, options: { flush?: boolean; endOfStream?: boolean } = {}): Buffer[] {
    const pages: Buffer[] = [];
    let offset = 0;
    // A packet is laced as 255-byte segments and a final shorter one (0 when the length is a multiple of 255).
    for (;;) {
      const size = Math.min(255, packet.length - offset);
      this.segments.push(size);
      this.data.push(packet.subarray(offset, offset + size));
      offset += size;
      const packetEnds = size < 255;
      if (packetEnds) this.pageGranule = granulePosition;
      if (this.segments.length === MAX_SEGMENTS) {
        pages.push(this.closePage(false));
        this.continued = !packetEnds;
      }
      if (packetEnds) break;
    }
    if ((options.flush || options.endOfStream) && (this.segments.length > 0 || options.endOfStream)) {
      pages.push(this.closePage(Boolean(options.endOfStream)));
      this.continued = false;
    }
    return pages;
  }

  private closePage(endOfStream: boolean): Buffer {
    const bodyLength = this.data.reduce((total, part) => total + part.length, 0);
    const page = Buffer.alloc(27 + this.segments.length + bodyLength);
    page.write('OggS', 0, 'latin1');
    page[4] = 0; // version
    page[5] = (this.continued ? HEADER_TYPE_CONTINUED : 0) | (this.started ? 0 : HEADER_TYPE_BEGIN) | (endOfStream ? HEADER_TYPE_END : 0);
    if (this.pageGranule < 0) {
      page.writeInt32LE(-1, 6);
      page.writeInt32LE(-1, 10);
    } else {
      page.writeUInt32LE(this.pageGranule >>> 0, 6);
      page.writeUInt32LE(Math.floor(this.pageGranule / 2 ** 32), 10);
    }
    page.writeUInt32LE(this.serial >>> 0, 14);
    page.writeUInt32LE(this.sequence++, 18);
    page[26] = this.segments.length;
    page.set(this.segments, 27);
    let offset = 27 + this.segments.length;
    for (const part of this.data) {
      page.set(part, offset);
      offset += part.length;
    }
    page.writeUInt32LE(oggCrc(page), 22);
    this.started = true;
    this.segments = [];
    this.data = [];
    this.pageGranule = -1;
    return page;
  }
}
