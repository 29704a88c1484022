/**
 * What the mock speech embeds in its files so that the mock transcription can
 * recover the input exactly: one tag holding a small JSON document. The JSON
 * is kept to ASCII (other characters as `\uXXXX` escapes), so it survives
 * containers whose text encoding is loosely specified (RIFF INFO).
 */

/** Name of the tag (ID3v2 `TXXX` description, Vorbis comment field, RIFF INFO carries it in `ICMT`). */
export const MOCK_SPEECH_TAG = 'UMG_MOCK_SPEECH';

/** Marks the JSON as ours, so that an unrelated comment is never mistaken for it. */
const PAYLOAD_MARKER = 'umg-mock-speech/1';

/** The request a mock speech file was made from. */
export interface MockSpeechMetadata {
  text: string;
  voice: string;
  speed: number;
  model: string;
}

/** The ASCII JSON payload for {@link MockSpeechMetadata}. */
export function toMockSpeechTag(metadata: MockSpeechMetadata): string {
  const json = JSON.stringify({ mock: PAYLOAD_MARKER, text: metadata.text, voice: metadata.voice, speed: metadata.speed, model: metadata.model });
  return json.replace(/[\u007f-\uffff]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Reads a payload written by {@link toMockSpeechTag}; undefined for anything else. */
export function fromMockSpeechTag(value: string): MockSpeechMetadata | undefined {
  // Some containers (RIFF INFO) end their strings with NUL bytes.
  let end = value.length;
  while (end > 0 && value.charCodeAt(end - 1) === 0) end--;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.slice(0, end));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const record = parsed as Record<string, unknown>;
  if (record.mock !== PAYLOAD_MARKER || typeof record.text !== 'string') return undefined;
  return {
    text: record.text,
    voice: typeof record.voice === 'string' ? record.voice : '',
    speed: typeof record.speed === 'number' ? record.speed : 1,
    model: typeof record.model === 'string' ? record.model : '',
  };
}
