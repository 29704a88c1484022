import { z } from 'zod';
import { AUDIO_FILE_MAX_BYTES, SPEECH_RESPONSE_FORMATS, transcriptionRequestSchema, translationRequestSchema } from '../../server/providers/openai/openai-audio.wire.js';
// The content type of each format (GAPS.md "Audio"), as the mock produces it.
import { SPEECH_CONTENT_TYPES } from '../../server/providers/mock/media/mock-speech.js';
import { transcriptAnswerDoc } from '../answer-docs.js';
import { checkedByProcedure, formFileIds, type CompatRoute, type RouteInput } from '../route.js';
import type { MultipartSpec } from '../read-multipart.js';

/**
 * The upload of both audio-to-text routes: one `file` of at most 25 MiB
 * (the reader stops storing past it and answers 413), and a few text fields.
 */
const AUDIO_UPLOAD: MultipartSpec = { files: { file: { maxFiles: 1, maxBytes: AUDIO_FILE_MAX_BYTES } }, maxFields: 32, maxFieldBytes: 64 * 1024 };

/**
 * The form as the procedure's input: its text fields as sent (a repeated
 * field is an array), and the id of the uploaded file part as `file` — never
 * a text field of that name, so that a client cannot name another upload.
 */
function audioFormInput(input: RouteInput): Record<string, unknown> {
  const { file: _textField, ...fields } = input.form.fields;
  const [file] = formFileIds(input.form, 'file');
  return { ...fields, ...(file !== undefined ? { file } : {}) };
}

/** The form as a client sends it: the upload field is a file, not the upload id the procedure sees. */
function audioForm(schema: z.ZodObject): z.ZodType {
  return schema.extend({ file: z.file().meta({ description: 'The audio: non-empty, at most 25 MiB; flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav or webm, judged by its bytes.' }) });
}

const transcriptDocs = {
  answer: transcriptAnswerDoc,
  answers: { 'application/json': {}, 'text/plain': { schema: { type: 'string', description: 'text, srt or vtt by response_format' } } },
};

/** `/v1/audio/*`. */
export const AUDIO_ROUTES: CompatRoute[] = [
  {
    method: 'POST',
    path: '/v1/audio/speech',
    family: 'openai',
    body: 'json',
    auth: 'key',
    summary: 'Synthesise speech (audio bytes, streamed as produced; billed per input character)',
    procedure: 'audio.speech',
    docs: { answers: Object.fromEntries(SPEECH_RESPONSE_FORMATS.map((format) => [SPEECH_CONTENT_TYPES[format], { schema: { type: 'string', format: 'binary' } }])) },
    invoke: (caller, input) => caller.audio.speech(checkedByProcedure(input.body)),
  },
  {
    method: 'POST',
    path: '/v1/audio/transcriptions',
    family: 'openai',
    body: 'multipart',
    multipart: AUDIO_UPLOAD,
    auth: 'key',
    summary: 'Transcribe audio (multipart; billed per second of audio)',
    procedure: 'audio.transcriptions',
    docs: { form: audioForm(transcriptionRequestSchema), ...transcriptDocs },
    invoke: (caller, input) => caller.audio.transcriptions(checkedByProcedure(audioFormInput(input))),
  },
  {
    method: 'POST',
    path: '/v1/audio/translations',
    family: 'openai',
    body: 'multipart',
    multipart: AUDIO_UPLOAD,
    auth: 'key',
    summary: 'Translate audio into English (multipart; billed per second of audio)',
    procedure: 'audio.translations',
    docs: { form: audioForm(translationRequestSchema), ...transcriptDocs },
    invoke: (caller, input) => caller.audio.translations(checkedByProcedure(audioFormInput(input))),
  },
];
