import { AUDIO_FILE_MAX_BYTES } from '../../server/providers/openai/openai-audio.wire.js';
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

/** `/v1/audio/*`. */
export const AUDIO_ROUTES: CompatRoute[] = [
  {
    method: 'POST',
    path: '/v1/audio/speech',
    family: 'openai',
    body: 'json',
    auth: 'key',
    summary: 'Synthesise speech (audio bytes, streamed as produced; billed per input character)',
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
    invoke: (caller, input) => caller.audio.translations(checkedByProcedure(audioFormInput(input))),
  },
];
