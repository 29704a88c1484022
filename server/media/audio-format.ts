/**
 * What an uploaded audio file is, and how long it plays, for
 * `POST /v1/audio/transcriptions` and `/v1/audio/translations`.
 *
 * Detection uses `file-type` (21.x, the last major that runs on Node 20) on
 * the head of the upload, by magic bytes only: the file name and the
 * multipart content type are not trusted. Durations come from
 * `music-metadata` (11.x, likewise), which reads container headers; it does
 * not know MPEG program streams (`mpeg`), whose length we read from the
 * timestamps of their first and last audio packets.
 */
import { open } from 'node:fs/promises';
import { fileTypeFromBuffer } from 'file-type';
import { parseFile } from 'music-metadata';

/** The upload formats SPEC accepts, by the extension OpenAI names them with. */
export const AUDIO_UPLOAD_FORMATS = ['flac', 'mp3', 'mp4', 'mpeg', 'mpga', 'm4a', 'ogg', 'wav', 'webm'] as const;
export type AudioUploadFormat = (typeof AUDIO_UPLOAD_FORMATS)[number];

/**
 * How many leading bytes {@link detectAudioFormat} wants. `file-type` looks
 * at the first 4100 bytes for most formats; more lets it see past a large
 * ID3v2 tag (MP3 with cover art) to the audio behind it.
 */
export const AUDIO_DETECTION_HEAD_BYTES = 64 * 1024;

/** file-type's extension → the accepted format it counts as; anything absent is refused. */
const FORMAT_BY_DETECTED_EXTENSION: Record<string, AudioUploadFormat> = {
  flac: 'flac',
  mp3: 'mp3',
  // MPEG-1/2 audio layers I and II: `mpga` is the registered extension of audio/mpeg.
  mp1: 'mpga',
  mp2: 'mpga',
  // Every Ogg stream (Vorbis, Opus, Speex, FLAC, or an Ogg video with sound) counts as ogg.
  ogg: 'ogg',
  oga: 'ogg',
  opus: 'ogg',
  spx: 'ogg',
  ogv: 'ogg',
  ogx: 'ogg',
  wav: 'wav',
  webm: 'webm',
  // ISO base media: MP4 video with sound counts, as do the audio-only brands.
  mp4: 'mp4',
  m4v: 'mp4',
  m4a: 'm4a',
  m4b: 'm4a',
  f4a: 'm4a',
  // MPEG program stream (video with sound): OpenAI's `mpeg`.
  mpg: 'mpeg',
};

/**
 * The accepted audio format of a file from its first bytes (pass at least
 * {@link AUDIO_DETECTION_HEAD_BYTES}, or the whole file when shorter), or
 * undefined when it is not one of SPEC's formats (a text file named `.mp3`,
 * an image, ADTS AAC, QuickTime, Matroska…). Async because `file-type` is.
 */
export async function detectAudioFormat(head: Uint8Array): Promise<AudioUploadFormat | undefined> {
  if (head.length === 0) return undefined;
  const detected = await fileTypeFromBuffer(head);
  return detected ? FORMAT_BY_DETECTED_EXTENSION[detected.ext] : undefined;
}

/**
 * The playing time of an audio file in seconds, or undefined when it cannot
 * be told cheaply (a live-recorded WebM has no length in its header; so too
 * anything that is not audio). Work is bounded whatever the file: headers
 * through music-metadata, and where they carry no length, the last Ogg page,
 * a walk over ADTS frame headers, or the two ends of an MPEG program stream;
 * music-metadata's own full-file scan is never used (38 s for a 25 MB ADTS
 * file here).
 */
export async function probeAudioDuration(filePath: string): Promise<number | undefined> {
  let container: string | undefined;
  let sampleRate: number | undefined;
  try {
    const { format } = await parseFile(filePath, { duration: false, skipCovers: true });
    if (isPlayingTime(format.duration)) return format.duration;
    container = format.container;
    sampleRate = format.sampleRate;
  } catch {
    // Not a format music-metadata knows (MPEG program streams): tried below.
  }
  const measured = await (async () => {
    if (container?.startsWith('Ogg')) return readOggDuration(filePath, sampleRate);
    if (container?.includes('ADTS')) return readAdtsDuration(filePath);
    if (container === undefined) return readProgramStreamDuration(filePath);
    return undefined;
  })().catch(() => undefined);
  return isPlayingTime(measured) ? measured : undefined;
}

function isPlayingTime(value: number | undefined): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0;
}

const OGG_PAGE_HEADER_BYTES = 27;

/**
 * Ogg: the granule position of the last page over the stream's rate. Opus
 * counts 48 kHz samples including the pre-skip (RFC 7845 4); Vorbis, FLAC
 * and Speex count samples at their own rate (`sampleRate`, from the headers).
 */
async function readOggDuration(filePath: string, sampleRate: number | undefined): Promise<number | undefined> {
  const file = await open(filePath, 'r');
  try {
    const { size } = await file.stat();
    const head = Buffer.alloc(Math.min(size, 4096));
    await file.read(head, 0, head.length, 0);
    const firstBody = OGG_PAGE_HEADER_BYTES + (head[26] ?? 0);
    const isOpus = head.toString('latin1', firstBody, firstBody + 8) === 'OpusHead';
    const rate = isOpus ? 48_000 : sampleRate;
    const preSkip = isOpus && head.length >= firstBody + 12 ? head.readUInt16LE(firstBody + 10) : 0;
    if (!rate) return undefined;
    const tail = Buffer.alloc(Math.min(size, TIMESTAMP_SEARCH_BYTES));
    await file.read(tail, 0, tail.length, size - tail.length);
    // The last page whose granule is set (-1 means no packet ends on that page).
    for (let offset = tail.lastIndexOf('OggS'); offset >= 0; offset = offset > 0 ? tail.lastIndexOf('OggS', offset - 1) : -1) {
      if (offset + OGG_PAGE_HEADER_BYTES > tail.length || tail[offset + 4] !== 0) continue;
      const granule = tail.readBigInt64LE(offset + 6);
      if (granule >= 0n) return (Number(granule) - preSkip) / rate;
    }
    return undefined;
  } finally {
    await file.close();
  }
}

/** Sampling frequencies by ADTS index (ISO/IEC 14496-3 table 1.18). */
const ADTS_SAMPLE_RATES = [96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350];
const ADTS_SCAN_CHUNK_BYTES = 1 << 20;

/** ADTS: count the frames (1024 samples per raw data block) by walking their headers, a chunk of the file at a time. */
async function readAdtsDuration(filePath: string): Promise<number | undefined> {
  const file = await open(filePath, 'r');
  try {
    const { size } = await file.stat();
    const buffer = Buffer.alloc(ADTS_SCAN_CHUNK_BYTES);
    let position = 0;
    // Skip an ID3v2 tag in front (synchsafe size, plus a footer when flagged).
    const id3 = Buffer.alloc(10);
    await file.read(id3, 0, 10, 0);
    if (id3.toString('latin1', 0, 3) === 'ID3') {
      position = 10 + ((id3[6]! & 0x7f) << 21) + ((id3[7]! & 0x7f) << 14) + ((id3[8]! & 0x7f) << 7) + (id3[9]! & 0x7f) + (id3[5]! & 0x10 ? 10 : 0);
    }
    let blocks = 0;
    let sampleRate: number | undefined;
    while (position + 7 <= size) {
      const { bytesRead } = await file.read(buffer, 0, buffer.length, position);
      let offset = 0;
      while (offset + 7 <= bytesRead) {
        if (buffer[offset] !== 0xff || (buffer[offset + 1]! & 0xf6) !== 0xf0) return finish();
        sampleRate ??= ADTS_SAMPLE_RATES[(buffer[offset + 2]! >> 2) & 0x0f];
        const frameLength = ((buffer[offset + 3]! & 0x03) << 11) | (buffer[offset + 4]! << 3) | (buffer[offset + 5]! >> 5);
        if (frameLength < 7) return finish();
        blocks += (buffer[offset + 6]! & 0x03) + 1;
        offset += frameLength;
      }
      position += offset;
    }
    return finish();

    function finish(): number | undefined {
      return sampleRate && blocks > 0 ? (blocks * 1024) / sampleRate : undefined;
    }
  } finally {
    await file.close();
  }
}

/** Bytes read at each end of an Ogg or MPEG program stream to find timestamps. */
const TIMESTAMP_SEARCH_BYTES = 64 * 1024;
const MPEG_CLOCK_HZ = 90_000;

/** A 33-bit timestamp in the 5-byte layout `xxxx TTT1 TTTTTTTT TTTTTTT1 TTTTTTTT TTTTTTT1`. */
function readTimestamp(bytes: Uint8Array, offset: number): number {
  return ((bytes[offset]! >> 1) & 0x07) * 2 ** 30 + bytes[offset + 1]! * 2 ** 22 + (bytes[offset + 2]! >> 1) * 2 ** 15 + bytes[offset + 3]! * 2 ** 7 + (bytes[offset + 4]! >> 1);
}

/**
 * Presentation timestamps (90 kHz) of the audio packets (stream ids C0–DF,
 * and BD, which carries AC-3 in DVD streams) found in `bytes`, for MPEG-1
 * and MPEG-2 packet headers.
 * @see ISO/IEC 11172-1 2.4.3.3 and ISO/IEC 13818-1 2.4.3.6
 */
function findAudioTimestamps(bytes: Uint8Array): number[] {
  const timestamps: number[] = [];
  for (let offset = 0; offset + 14 <= bytes.length; offset++) {
    if (bytes[offset] !== 0 || bytes[offset + 1] !== 0 || bytes[offset + 2] !== 1) continue;
    const streamId = bytes[offset + 3]!;
    if (!((streamId >= 0xc0 && streamId <= 0xdf) || streamId === 0xbd)) continue;
    let position = offset + 6;
    if ((bytes[position]! & 0xc0) === 0x80) {
      // MPEG-2: flags, PTS_DTS_flags, header length, then the PTS when flagged.
      if ((bytes[position + 1]! & 0x80) !== 0 && position + 8 <= bytes.length) timestamps.push(readTimestamp(bytes, position + 3));
      continue;
    }
    // MPEG-1: stuffing bytes, an optional buffer-size field, then '0010' (PTS) or '0011' (PTS and DTS).
    while (bytes[position] === 0xff && position < offset + 22) position++;
    if ((bytes[position]! & 0xc0) === 0x40) position += 2;
    if (position + 5 <= bytes.length && (bytes[position]! & 0xe0) === 0x20) timestamps.push(readTimestamp(bytes, position));
  }
  return timestamps;
}

/** Playing time of an MPEG program stream: from the first audio timestamp to the last, reading only the two ends of the file. */
async function readProgramStreamDuration(filePath: string): Promise<number | undefined> {
  const file = await open(filePath, 'r');
  try {
    const { size } = await file.stat();
    const head = new Uint8Array(Math.min(size, TIMESTAMP_SEARCH_BYTES));
    await file.read(head, 0, head.length, 0);
    // Pack start code: an MPEG program stream.
    if (!(head[0] === 0 && head[1] === 0 && head[2] === 1 && head[3] === 0xba)) return undefined;
    const tail = new Uint8Array(Math.min(size, TIMESTAMP_SEARCH_BYTES));
    await file.read(tail, 0, tail.length, size - tail.length);
    const starts = findAudioTimestamps(head);
    const ends = findAudioTimestamps(tail);
    if (starts.length === 0 || ends.length === 0) return undefined;
    const duration = (Math.max(...ends) - Math.min(...starts)) / MPEG_CLOCK_HZ;
    return duration > 0 ? duration : undefined;
  } finally {
    await file.close();
  }
}
