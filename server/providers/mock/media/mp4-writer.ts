/**
 * Writes an ISO BMFF (MP4) file holding one H.264 video track, laid out for
 * progressive playback ("faststart"): `ftyp`, then `moov` with the complete
 * sample tables, then one `mdat`. All samples are known up front, so no
 * placeholder or second pass over the media data is needed.
 *
 * Times in the header are 0 (1904-01-01) so the same samples always give the
 * same bytes.
 *
 * @see ISO/IEC 14496-12 (boxes) and ISO/IEC 14496-15 §5.3 (`avcC`).
 */
import type { H264ParameterSets } from './h264-block-encoder.js';

/** The track to write. */
export interface Mp4VideoTrack {
  width: number;
  height: number;
  /** Units per second of all durations in the file. */
  timescale: number;
  /** Duration of every sample, in `timescale` units. */
  sampleDuration: number;
  /** Coded pictures in decoding order, each one NAL unit without start code. */
  samples: readonly Uint8Array[];
  /** Indices (0-based) of the samples that are random access points. */
  syncSamples: readonly number[];
  parameterSets: H264ParameterSets;
}

const IDENTITY_MATRIX = [0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000];
const LENGTH_PREFIX_BYTES = 4;

/** Writes the whole file into one buffer. */
export function writeMp4(track: Mp4VideoTrack): Buffer {
  const mediaSize = track.samples.reduce((sum, sample) => sum + LENGTH_PREFIX_BYTES + sample.length, 0);
  const fileType = writeFileTypeBox();
  // The chunk offset depends on the size of moov, which does not depend on the offset.
  const moovSize = writeMovieBox(track, 0).length;
  const mediaDataHeader = 8;
  const movie = writeMovieBox(track, fileType.length + moovSize + mediaDataHeader);

  const out = Buffer.allocUnsafe(fileType.length + movie.length + mediaDataHeader + mediaSize);
  let offset = 0;
  out.set(fileType, offset);
  offset += fileType.length;
  out.set(movie, offset);
  offset += movie.length;
  out.writeUInt32BE(mediaDataHeader + mediaSize, offset);
  out.write('mdat', offset + 4, 'latin1');
  offset += mediaDataHeader;
  for (const sample of track.samples) {
    out.writeUInt32BE(sample.length, offset);
    out.set(sample, offset + LENGTH_PREFIX_BYTES);
    offset += LENGTH_PREFIX_BYTES + sample.length;
  }
  return out;
}

/** Accumulates big-endian fields of one box payload. */
class BoxPayload {
  private readonly parts: Uint8Array[] = [];
  private length = 0;

  u8(value: number): this {
    return this.bytes(Uint8Array.of(value));
  }

  u16(value: number): this {
    const part = Buffer.allocUnsafe(2);
    part.writeUInt16BE(value);
    return this.bytes(part);
  }

  i16(value: number): this {
    const part = Buffer.allocUnsafe(2);
    part.writeInt16BE(value);
    return this.bytes(part);
  }

  u32(value: number): this {
    const part = Buffer.allocUnsafe(4);
    part.writeUInt32BE(value);
    return this.bytes(part);
  }

  zeros(count: number): this {
    return this.bytes(new Uint8Array(count));
  }

  text(value: string): this {
    return this.bytes(Buffer.from(value, 'latin1'));
  }

  bytes(part: Uint8Array): this {
    this.parts.push(part);
    this.length += part.length;
    return this;
  }

  /** Version and flags of a full box. */
  fullBoxHeader(version: number, flags: number): this {
    return this.u32(((version << 24) | flags) >>> 0);
  }

  toBytes(): Uint8Array {
    return Buffer.concat(this.parts, this.length);
  }
}

function box(type: string, ...children: (Uint8Array | BoxPayload)[]): Uint8Array {
  const payload = new BoxPayload();
  for (const child of children) payload.bytes(child instanceof BoxPayload ? child.toBytes() : child);
  const body = payload.toBytes();
  const out = Buffer.allocUnsafe(8 + body.length);
  out.writeUInt32BE(out.length, 0);
  out.write(type, 4, 'latin1');
  out.set(body, 8);
  return out;
}

function writeFileTypeBox(): Uint8Array {
  const payload = new BoxPayload().text('isom').u32(0x200);
  for (const brand of ['isom', 'iso2', 'avc1', 'mp41']) payload.text(brand);
  return box('ftyp', payload);
}

function writeMovieBox(track: Mp4VideoTrack, mediaOffset: number): Uint8Array {
  const duration = track.samples.length * track.sampleDuration;
  const movieHeader = new BoxPayload()
    .fullBoxHeader(0, 0)
    .u32(0) // creation_time
    .u32(0) // modification_time
    .u32(track.timescale)
    .u32(duration)
    .u32(0x00010000) // rate 1.0
    .u16(0x0100) // volume 1.0
    .zeros(10);
  for (const value of IDENTITY_MATRIX) movieHeader.u32(value);
  movieHeader.zeros(24).u32(2); // pre_defined, next_track_ID
  return box('moov', box('mvhd', movieHeader), writeTrackBox(track, duration, mediaOffset));
}

function writeTrackBox(track: Mp4VideoTrack, duration: number, mediaOffset: number): Uint8Array {
  // Flags 3: track enabled and used in the presentation.
  const trackHeader = new BoxPayload()
    .fullBoxHeader(0, 3)
    .u32(0)
    .u32(0)
    .u32(1) // track_ID
    .u32(0)
    .u32(duration)
    .zeros(8)
    .u16(0) // layer
    .u16(0) // alternate_group
    .u16(0) // volume: not audio
    .u16(0);
  for (const value of IDENTITY_MATRIX) trackHeader.u32(value);
  trackHeader.u32(track.width * 0x10000).u32(track.height * 0x10000);

  const mediaHeader = new BoxPayload()
    .fullBoxHeader(0, 0)
    .u32(0)
    .u32(0)
    .u32(track.timescale)
    .u32(duration)
    .u16(packLanguage('und'))
    .u16(0);
  const handler = new BoxPayload().fullBoxHeader(0, 0).u32(0).text('vide').zeros(12).text('VideoHandler\0');
  const videoMediaHeader = new BoxPayload().fullBoxHeader(0, 1).u16(0).zeros(6);
  const dataReference = box(
    'dref',
    new BoxPayload().fullBoxHeader(0, 0).u32(1).bytes(box('url ', new BoxPayload().fullBoxHeader(0, 1))),
  );
  return box(
    'trak',
    box('tkhd', trackHeader),
    box(
      'mdia',
      box('mdhd', mediaHeader),
      box('hdlr', handler),
      box(
        'minf',
        box('vmhd', videoMediaHeader),
        box('dinf', dataReference),
        writeSampleTableBox(track, mediaOffset),
      ),
    ),
  );
}

function writeSampleTableBox(track: Mp4VideoTrack, mediaOffset: number): Uint8Array {
  const sampleCount = track.samples.length;
  const timeToSample = new BoxPayload().fullBoxHeader(0, 0).u32(1).u32(sampleCount).u32(track.sampleDuration);
  const syncSamples = new BoxPayload().fullBoxHeader(0, 0).u32(track.syncSamples.length);
  for (const index of track.syncSamples) syncSamples.u32(index + 1);
  // All samples sit in one chunk: the file has a single track, so nothing needs interleaving.
  const sampleToChunk = new BoxPayload().fullBoxHeader(0, 0).u32(1).u32(1).u32(sampleCount).u32(1);
  const sampleSizes = new BoxPayload().fullBoxHeader(0, 0).u32(0).u32(sampleCount);
  for (const sample of track.samples) sampleSizes.u32(LENGTH_PREFIX_BYTES + sample.length);
  const chunkOffsets = new BoxPayload().fullBoxHeader(0, 0).u32(1).u32(mediaOffset);
  return box(
    'stbl',
    box('stsd', new BoxPayload().fullBoxHeader(0, 0).u32(1).bytes(writeAvcSampleEntry(track))),
    box('stts', timeToSample),
    box('stss', syncSamples),
    box('stsc', sampleToChunk),
    box('stsz', sampleSizes),
    box('stco', chunkOffsets),
  );
}

function writeAvcSampleEntry(track: Mp4VideoTrack): Uint8Array {
  const { sps, pps, profileIdc, profileCompatibility, levelIdc } = track.parameterSets;
  const decoderConfiguration = new BoxPayload()
    .u8(1) // configurationVersion
    .u8(profileIdc)
    .u8(profileCompatibility)
    .u8(levelIdc)
    .u8(0xfc | (LENGTH_PREFIX_BYTES - 1))
    .u8(0xe0 | 1) // one SPS
    .u16(sps.length)
    .bytes(sps)
    .u8(1) // one PPS
    .u16(pps.length)
    .bytes(pps);
  const compressorName = new Uint8Array(32);
  // Colour information repeats the VUI: BT.709 primaries, transfer and matrix, video range.
  const colour = new BoxPayload().text('nclx').u16(1).u16(1).u16(1).u8(0);
  const pixelAspect = new BoxPayload().u32(1).u32(1);
  const entry = new BoxPayload()
    .zeros(6)
    .u16(1) // data_reference_index
    .zeros(16)
    .u16(track.width)
    .u16(track.height)
    .u32(0x00480000) // 72 dpi
    .u32(0x00480000)
    .u32(0)
    .u16(1) // frame_count
    .bytes(compressorName)
    .u16(0x0018) // depth
    .i16(-1)
    .bytes(box('avcC', decoderConfiguration))
    .bytes(box('colr', colour))
    .bytes(box('pasp', pixelAspect));
  return box('avc1', entry);
}

/** ISO 639-2/T code packed as three 5-bit letters. */
function packLanguage(code: string): number {
  let packed = 0;
  for (const char of code) packed = (packed << 5) | (char.charCodeAt(0) - 0x60);
  return packed;
}
