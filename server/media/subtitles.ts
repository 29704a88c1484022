/**
 * The `response_format`s of OpenAI's transcription and translation
 * endpoints, rendered from one transcript.
 *
 * Layouts follow what OpenAI's Whisper service sends: SRT cues numbered from
 * 1 with `HH:MM:SS,mmm` times, WebVTT after a `WEBVTT` line with
 * `HH:MM:SS.mmm` times, every cue followed by a blank line, cue text trimmed
 * and with `-->` written `->` so that it cannot end the timing line; `text`
 * is the transcript and a newline.
 *
 * @see https://platform.openai.com/docs/api-reference/audio/createTranscription
 */

/** One segment of a `verbose_json` transcript (OpenAI's field names). */
export interface TranscriptSegment {
  id: number;
  /** Start of the 30-second window the segment was decoded in, in 10 ms frames. */
  seek: number;
  /** Seconds. */
  start: number;
  end: number;
  text: string;
  tokens: number[];
  temperature: number;
  avg_logprob: number;
  compression_ratio: number;
  no_speech_prob: number;
}

/** A transcript as the mock (or a provider's `verbose_json`) gives it. */
export interface Transcript {
  task: 'transcribe' | 'translate';
  /** Language name in lower case, as OpenAI's `verbose_json` gives it (`english`). */
  language: string;
  /** Seconds of audio. */
  duration: number;
  text: string;
  segments: TranscriptSegment[];
}

export const TRANSCRIPT_FORMATS = ['json', 'text', 'srt', 'verbose_json', 'vtt'] as const;
export type TranscriptFormat = (typeof TRANSCRIPT_FORMATS)[number];

/** A rendered transcript: the body and the content type to send it with. */
export interface RenderedTranscript {
  contentType: string;
  body: string;
}

const JSON_CONTENT_TYPE = 'application/json';
const TEXT_CONTENT_TYPE = 'text/plain; charset=utf-8';

/** `seconds` as `HH:MM:SS` plus the millisecond separator and milliseconds. */
function formatTimestamp(seconds: number, separator: ',' | '.'): string {
  const totalMilliseconds = Math.max(0, Math.round(seconds * 1000));
  const hours = Math.floor(totalMilliseconds / 3_600_000);
  const minutes = Math.floor(totalMilliseconds / 60_000) % 60;
  const wholeSeconds = Math.floor(totalMilliseconds / 1000) % 60;
  const milliseconds = totalMilliseconds % 1000;
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  return `${pad(hours)}:${pad(minutes)}:${pad(wholeSeconds)}${separator}${pad(milliseconds, 3)}`;
}

function cueText(segment: TranscriptSegment): string {
  return segment.text.trim().replaceAll('-->', '->');
}

/** Renders `transcript` as OpenAI answers for `format`. */
export function renderTranscript(format: TranscriptFormat, transcript: Transcript): RenderedTranscript {
  switch (format) {
    case 'json':
      return { contentType: JSON_CONTENT_TYPE, body: JSON.stringify({ text: transcript.text }) };
    case 'verbose_json':
      return {
        contentType: JSON_CONTENT_TYPE,
        body: JSON.stringify({
          task: transcript.task,
          language: transcript.language,
          duration: transcript.duration,
          text: transcript.text,
          segments: transcript.segments,
        }),
      };
    case 'text':
      return { contentType: TEXT_CONTENT_TYPE, body: `${transcript.text}\n` };
    case 'srt':
      return {
        contentType: TEXT_CONTENT_TYPE,
        body: transcript.segments
          .map((segment, index) => `${index + 1}\n${formatTimestamp(segment.start, ',')} --> ${formatTimestamp(segment.end, ',')}\n${cueText(segment)}\n\n`)
          .join(''),
      };
    case 'vtt':
      return {
        contentType: TEXT_CONTENT_TYPE,
        body: `WEBVTT\n\n${transcript.segments
          .map((segment) => `${formatTimestamp(segment.start, '.')} --> ${formatTimestamp(segment.end, '.')}\n${cueText(segment)}\n\n`)
          .join('')}`,
      };
    default: {
      const unknown: never = format;
      throw new RangeError(`Unknown transcript format ${JSON.stringify(unknown)}.`);
    }
  }
}
