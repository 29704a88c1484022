/**
 * The metadata blocks the mock speech writes: an ID3v2.4 tag (in front of MP3
 * and ADTS AAC) and a Vorbis comment (FLAC's VORBIS_COMMENT block and Ogg
 * Opus's OpusTags).
 *
 * @see https://id3.org/id3v2.4.0-structure
 * @see https://www.xiph.org/vorbis/doc/v-comment.html
 */

function synchsafe(value: number): Buffer {
  // 28-bit integer in four 7-bit bytes, so it never contains a false MPEG sync.
  return Buffer.from([(value >>> 21) & 0x7f, (value >>> 14) & 0x7f, (value >>> 7) & 0x7f, value & 0x7f]);
}

const UTF8_ENCODING = 3;

/** A text frame (`TSSE`, `TIT2`…) or, with `description`, a user-defined `TXXX` frame. */
export interface Id3TextFrame {
  id: string;
  description?: string;
  value: string;
}

/** An ID3v2.4 tag with UTF-8 text frames. */
export function buildId3v2Tag(frames: Id3TextFrame[]): Buffer {
  const encodedFrames = frames.map((frame) => {
    const body = Buffer.concat([
      Buffer.from([UTF8_ENCODING]),
      ...(frame.description === undefined ? [] : [Buffer.from(frame.description, 'utf8'), Buffer.from([0])]),
      Buffer.from(frame.value, 'utf8'),
    ]);
    return Buffer.concat([Buffer.from(frame.id, 'latin1'), synchsafe(body.length), Buffer.from([0, 0]), body]);
  });
  const content = Buffer.concat(encodedFrames);
  return Buffer.concat([Buffer.from('ID3', 'latin1'), Buffer.from([4, 0, 0]), synchsafe(content.length), content]);
}

/** A Vorbis comment: vendor string and `KEY=value` fields, lengths little-endian, no framing bit. */
export function buildVorbisComment(vendor: string, fields: [string, string][]): Buffer {
  const parts: Buffer[] = [];
  const pushString = (value: string) => {
    const bytes = Buffer.from(value, 'utf8');
    const length = Buffer.alloc(4);
    length.writeUInt32LE(bytes.length);
    parts.push(length, bytes);
  };
  pushString(vendor);
  const count = Buffer.alloc(4);
  count.writeUInt32LE(fields.length);
  parts.push(count);
  for (const [key, value] of fields) pushString(`${key}=${value}`);
  return Buffer.concat(parts);
}
