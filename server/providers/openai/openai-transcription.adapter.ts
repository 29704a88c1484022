/**
 * `POST /audio/transcriptions` and `/audio/translations` on an
 * OpenAI-format provider. The upload goes on as multipart, streamed from
 * disk byte for byte, with the client's fields (model swapped). The provider
 * is always asked for `verbose_json`: it carries the duration billing needs
 * and the segments every other `response_format` is rendered from, so the
 * client's format is produced by the gateway whatever the provider.
 *
 * @see https://platform.openai.com/docs/api-reference/audio/createTranscription
 */
import { UpstreamError } from '../../errors.js';
import type { Transcript, TranscriptSegment } from '../../media/subtitles.js';
import { toTranscriptLanguageName } from '../../media/transcript-languages.js';
import type { TranscriptionAdapter, TranscriptionJob } from '../types.js';
import { verboseTranscriptionSchema, type VerboseTranscription } from './openai-audio.wire.js';
import { toMultipartBody } from './multipart-body.js';
import { buildOpenAIHeaders } from './openai.adapter.js';
import { parseOpenAIError } from './openai-errors.js';
import { joinOpenAIUrl } from './openai-speech.adapter.js';

/** Form values as text; absent ones left out, a repeated field kept as several values. */
export function toFormFields(fields: Record<string, unknown>): Record<string, string | string[]> {
  const form: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined || value === null) continue;
    if (Array.isArray(value)) form[name] = value.map((item) => (typeof item === 'string' ? item : JSON.stringify(item)));
    else form[name] = typeof value === 'string' ? value : typeof value === 'object' ? JSON.stringify(value) : String(value);
  }
  return form;
}

/**
 * A provider's `verbose_json` as a transcript. A provider that gives no
 * segments gets one spanning the whole text, so srt and vtt can still be
 * rendered; segment fields it leaves out are filled with neutral values.
 */
export function fromVerboseTranscription(verbose: VerboseTranscription, task: TranscriptionJob['task'], language: string | undefined): Transcript {
  const duration = verbose.duration ?? Math.max(0, ...(verbose.segments ?? []).map((segment) => segment.end));
  const segments: TranscriptSegment[] = (verbose.segments ?? [{ start: 0, end: duration, text: verbose.text }]).map((segment, index) => ({
    id: segment.id ?? index,
    seek: segment.seek ?? 0,
    start: segment.start,
    end: segment.end,
    text: segment.text,
    tokens: segment.tokens ?? [],
    temperature: segment.temperature ?? 0,
    avg_logprob: segment.avg_logprob ?? 0,
    compression_ratio: segment.compression_ratio ?? 0,
    no_speech_prob: segment.no_speech_prob ?? 0,
  }));
  return {
    task,
    language: verbose.language ?? (task === 'translate' ? 'english' : (language ?? 'english')),
    duration,
    text: verbose.text,
    segments,
  };
}

export const openAITranscriptionAdapter: TranscriptionAdapter = {
  async transcribe(transport, connection, job) {
    const multipart = toMultipartBody({ ...toFormFields(job.fields), response_format: 'verbose_json' }, { field: 'file', ...job.file });
    const response = await transport.send(
      {
        method: 'POST',
        url: joinOpenAIUrl(connection.baseUrl, job.task === 'transcribe' ? '/audio/transcriptions' : '/audio/translations'),
        headers: { ...buildOpenAIHeaders(connection), 'content-type': multipart.contentType, 'content-length': String(multipart.contentLength) },
        body: multipart.body,
      },
      parseOpenAIError,
    );
    const { value, text } = await transport.readJson(response);
    const verbose = verboseTranscriptionSchema.safeParse(value);
    if (!verbose.success) throw new UpstreamError('the provider answered without a transcript', { status: 502, provider: connection.id, retryable: false });
    const language = typeof job.fields.language === 'string' ? toTranscriptLanguageName(job.fields.language) : undefined;
    return {
      transcript: fromVerboseTranscription(verbose.data, job.task, language),
      verboseJson: text,
      ...(verbose.data.duration != null ? { seconds: verbose.data.duration } : {}),
    };
  },
};
