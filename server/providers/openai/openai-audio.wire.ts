/**
 * OpenAI's audio endpoints on the wire: the public request schemas of
 * `POST /v1/audio/speech`, `/transcriptions` and `/translations` (strict
 * where SPEC.md sets a bound, each violation a 400 naming the field; lenient
 * elsewhere, so newer fields still reach an OpenAI-format provider), and the
 * provider's `verbose_json` answer, read leniently.
 *
 * @see https://platform.openai.com/docs/api-reference/audio
 */
import { z } from 'zod';
import { TRANSCRIPT_FORMATS } from '../../media/subtitles.js';
import { toTranscriptLanguageName } from '../../media/transcript-languages.js';
import { uploadIdSchema } from '../../uploads/upload-store.js';

/** SPEC.md's voices: the contract. OpenAI's newer voices (ash, coral, …) are refused. */
export const SPEECH_VOICES = ['alloy', 'echo', 'fable', 'onyx', 'nova', 'shimmer'] as const;

/** OpenAI's speech `response_format`s (the content type of each is in mock-speech.ts / GAPS.md "Audio"). */
export const SPEECH_RESPONSE_FORMATS = ['mp3', 'opus', 'aac', 'flac', 'wav', 'pcm'] as const;

/** Most characters (Unicode code points) of a speech input (SPEC "Limits"). */
export const SPEECH_MAX_INPUT_CHARACTERS = 4096;

export const SPEECH_SPEED_RANGE = { min: 0.25, max: 4 } as const;

/** Largest transcription or translation upload: 25 MiB (SPEC "Limits"). */
export const AUDIO_FILE_MAX_BYTES = 25 * 1024 * 1024;

/** Languages a translation accepts as input (SPEC "POST /audio/translations"); the output is English. */
export const TRANSLATION_INPUT_LANGUAGES = [
  'af', 'ar', 'zh', 'cs', 'da', 'nl', 'fi', 'fr', 'de', 'el', 'he', 'hi', 'hu', 'id', 'it', 'ja',
  'ko', 'lv', 'lt', 'ms', 'no', 'pl', 'pt', 'ro', 'ru', 'es', 'sv', 'th', 'tr', 'uk', 'vi',
] as const;

/** The number of characters of a text as a reader counts them: code points, not UTF-16 units. */
export function countCharacters(text: string): number {
  let count = 0;
  for (const _character of text) count++;
  return count;
}

/** `POST /v1/audio/speech` (JSON). */
export const speechRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z
    .string()
    .min(1)
    .refine((text) => countCharacters(text) <= SPEECH_MAX_INPUT_CHARACTERS, `at most ${SPEECH_MAX_INPUT_CHARACTERS} characters`)
    .meta({ description: `The text to speak: at most ${SPEECH_MAX_INPUT_CHARACTERS} characters (code points).` }),
  voice: z.enum(SPEECH_VOICES),
  response_format: z.enum(SPEECH_RESPONSE_FORMATS).nullish(),
  speed: z.number().min(SPEECH_SPEED_RANGE.min).max(SPEECH_SPEED_RANGE.max).nullish(),
  /** The answer is always the audio file itself: SSE audio events are not offered. */
  stream_format: z.enum(['audio']).nullish(),
});
export type SpeechRequest = z.infer<typeof speechRequestSchema>;

/** A multipart text field as a number: forms carry text, internal callers may pass numbers. */
function formNumber(schema: z.ZodNumber) {
  return z.preprocess((value) => (typeof value === 'string' && value.trim() !== '' ? Number(value) : value), schema);
}

/** A multipart `true`/`false` field. */
const formBoolean = z.preprocess((value) => (value === 'true' ? true : value === 'false' ? false : value), z.boolean());

/** Fields both audio-to-text operations share. */
const audioToTextFields = {
  /** The uploaded file, by the id the upload store gave it. */
  file: uploadIdSchema,
  model: z.string().min(1),
  prompt: z.string().nullish(),
  response_format: z.enum(TRANSCRIPT_FORMATS).nullish(),
  temperature: formNumber(z.number().min(0).max(1)).nullish(),
  /** Answers are whole documents: a streamed transcription is not offered. */
  stream: formBoolean.refine((value) => value === false, 'streamed transcriptions are not supported').nullish(),
};

/** `POST /v1/audio/transcriptions` (multipart). */
export const transcriptionRequestSchema = z.looseObject({
  ...audioToTextFields,
  language: z
    .string()
    .refine((code) => toTranscriptLanguageName(code) !== undefined, 'an ISO-639-1 language code Whisper knows (e.g. "en", "de")')
    .transform((code) => code.trim().toLowerCase())
    .meta({ description: 'ISO-639-1 code of the spoken language (e.g. "en", "de").' })
    .nullish(),
});
export type TranscriptionRequest = z.infer<typeof transcriptionRequestSchema>;

/** `POST /v1/audio/translations` (multipart): no `language`, the answer is English. */
export const translationRequestSchema = z.looseObject(audioToTextFields);
export type TranslationRequest = z.infer<typeof translationRequestSchema>;

/** A segment of a provider's `verbose_json`, the fields we read (lenient). */
const verboseSegmentSchema = z.looseObject({
  id: z.number().nullish(),
  seek: z.number().nullish(),
  start: z.number(),
  end: z.number(),
  text: z.string(),
  tokens: z.array(z.number()).nullish(),
  temperature: z.number().nullish(),
  avg_logprob: z.number().nullish(),
  compression_ratio: z.number().nullish(),
  no_speech_prob: z.number().nullish(),
});

/** A provider's `verbose_json` answer (SPEC "Transcription output"), lenient. */
export const verboseTranscriptionSchema = z.looseObject({
  task: z.string().nullish(),
  language: z.string().nullish(),
  duration: z.number().nullish(),
  text: z.string(),
  segments: z.array(verboseSegmentSchema).nullish(),
});
export type VerboseTranscription = z.infer<typeof verboseTranscriptionSchema>;

/** `json` answer of both operations. */
export interface TranscriptionText {
  text: string;
}
