/**
 * `POST /v1/audio/transcriptions` and `/v1/audio/translations`: an uploaded
 * audio file (on disk, never whole in memory) to text in the client's
 * `response_format`, billed per second of audio.
 */
import { jsonAnswer, type JsonAnswer, type TextAnswer } from '../answers.js';
import type { Endpoint } from '../catalog/catalog.schema.js';
import { GatewayError } from '../errors.js';
import type { OperationContext } from '../operations/routing.js';
import { runOperation } from '../operations/run-operation.js';
import { detectAudioFormat, probeAudioDuration } from '../media/audio-format.js';
import { renderTranscript, type Transcript, type TranscriptFormat } from '../media/subtitles.js';
import {
  AUDIO_FILE_MAX_BYTES,
  type TranscriptionRequest,
  type TranscriptionText,
  type TranslationRequest,
} from '../providers/openai/openai-audio.wire.js';
import type { TranscriptionJob } from '../providers/types.js';

/**
 * The fewest bytes a second of accepted audio takes, for the hold when a
 * file's playing time cannot be read from its headers (a live-recorded WebM):
 * 8 kbit/s, below the speech bit rates of Opus, AAC and MP3 in practice, so
 * `size / 1000` seconds bounds the real duration.
 */
export const MIN_AUDIO_BYTES_PER_SECOND = 1000;

/** What both operations answer: JSON (`json`, `verbose_json`) or text (`text`, `srt`, `vtt`). */
export type TranscriptionAnswer = JsonAnswer<TranscriptionText | Transcript> | TextAnswer;

export function transcribeAudio(context: OperationContext, body: TranscriptionRequest): Promise<TranscriptionAnswer> {
  return runAudioToText(context, 'transcribe', '/v1/audio/transcriptions', body);
}

export function translateAudio(context: OperationContext, body: TranslationRequest): Promise<TranscriptionAnswer> {
  return runAudioToText(context, 'translate', '/v1/audio/translations', body);
}

/**
 * Checks the upload (non-empty, at most 25 MiB, an accepted format by its
 * bytes), holds the price of its probed duration (or of the bound from its
 * size), runs the provider, charges the seconds the provider counted (else
 * the probed ones) and renders the client's format.
 */
function runAudioToText(
  context: OperationContext,
  task: TranscriptionJob['task'],
  endpoint: Endpoint,
  body: TranscriptionRequest | TranslationRequest,
): Promise<TranscriptionAnswer> {
  const { services } = context;
  return runOperation(context, {
    endpoint,
    operation: 'transcription',
    model: body.model,
    plan: async () => {
      const upload = services.uploads.get(body.file, 'file');
      if (upload.size === 0) throw new GatewayError('INVALID_REQUEST', "Invalid value for 'file': the file is empty.", { param: 'file' });
      if (upload.size > AUDIO_FILE_MAX_BYTES) {
        throw new GatewayError('PAYLOAD_TOO_LARGE', `The file in 'file' is larger than ${AUDIO_FILE_MAX_BYTES} bytes.`, { param: 'file' });
      }
      if (!(await detectAudioFormat(upload.head))) {
        throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', "The file in 'file' is not audio of an accepted format (flac, mp3, mp4, mpeg, mpga, m4a, ogg, wav, webm).", {
          param: 'file',
        });
      }
      const probedSeconds = await probeAudioDuration(upload.path);
      const boundSeconds = probedSeconds ?? upload.size / MIN_AUDIO_BYTES_PER_SECOND;
      const { file: _file, ...fields } = body;
      return {
        hold: { inputTokens: 0, outputTokens: 0, seconds: boundSeconds },
        stream: false,
        call: async ({ deployment, adapter, transport }) => {
          const result = await adapter.transcribe(transport, deployment.provider, {
            task,
            file: { path: upload.path, filename: upload.filename, contentType: upload.contentType, size: upload.size },
            fields: { ...fields, model: deployment.upstreamModel },
          });
          const seconds = result.seconds ?? probedSeconds ?? boundSeconds;
          return {
            answer: toTranscriptionAnswer(body.response_format ?? 'json', result.transcript, result.verboseJson, deployment.provider.id),
            usage: { inputTokens: 0, outputTokens: 0, seconds },
          };
        },
      };
    },
  });
}

/** The client's format: JSON as typed values (a provider's own `verbose_json` passed on as it came), the text formats rendered. */
function toTranscriptionAnswer(format: TranscriptFormat, transcript: Transcript, verboseJson: string | undefined, provider: string): TranscriptionAnswer {
  const meta = { headers: {}, provider };
  switch (format) {
    case 'json':
      return jsonAnswer<TranscriptionText>({ text: transcript.text }, meta);
    case 'verbose_json': {
      // SPEC's `verbose_json` fields, in OpenAI's order.
      const verbose: Transcript = {
        task: transcript.task,
        language: transcript.language,
        duration: transcript.duration,
        text: transcript.text,
        segments: transcript.segments,
      };
      return { kind: 'json', body: verbose, ...(verboseJson !== undefined ? { raw: verboseJson } : {}), meta };
    }
    default: {
      const rendered = renderTranscript(format, transcript);
      return { kind: 'text', contentType: rendered.contentType, body: rendered.body, meta };
    }
  }
}
