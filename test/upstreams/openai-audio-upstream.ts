/**
 * OpenAI's audio endpoints for the upstream test server
 * (`startOpenAIUpstream({ routes: OPENAI_AUDIO_ROUTES })`):
 *
 * - `POST /v1/audio/speech`: validates `model`, `input`, `voice`; answers
 *   {@link upstreamSpeechBytes} with OpenAI's content type of the format
 *   (`audio/opus` for opus, as OpenAI labels it).
 * - `POST /v1/audio/transcriptions` and `/translations`: reads the multipart
 *   body, answers by `response_format` (json, text, verbose_json) a transcript
 *   naming the file and its size; `duration` comes from a WAV header, else
 *   one second per 16,000 bytes.
 */
import { isRecord, type RecordedRequest, type UpstreamAnswer, type UpstreamRouteHandler } from './upstream-server.js';
import { toOpenAIErrorBody } from './openai-upstream.js';

/** One part of a multipart body. */
export interface RecordedPart {
  name: string;
  filename?: string;
  contentType?: string;
  bytes: Buffer;
}

/**
 * Splits a recorded `multipart/form-data` body into its parts (enough for a
 * test server: RFC 7578 bodies as HTTP clients write them).
 */
export function parseRecordedMultipart(request: Pick<RecordedRequest, 'headers' | 'rawBytes'>): RecordedPart[] {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(request.headers['content-type'] ?? '');
  if (!boundary) throw new Error('not a multipart body');
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`, 'latin1');
  const body = request.rawBytes;
  const parts: RecordedPart[] = [];
  let start = body.indexOf(delimiter);
  while (start !== -1) {
    const afterDelimiter = start + delimiter.length;
    if (body.subarray(afterDelimiter, afterDelimiter + 2).toString('latin1') === '--') break;
    const headerEnd = body.indexOf('\r\n\r\n', afterDelimiter);
    const next = body.indexOf(Buffer.concat([Buffer.from('\r\n', 'latin1'), delimiter]), headerEnd);
    if (headerEnd === -1 || next === -1) throw new Error('truncated multipart body');
    const headers = body.subarray(afterDelimiter + 2, headerEnd).toString('utf8');
    const disposition = /content-disposition:[^\r\n]*/i.exec(headers)?.[0] ?? '';
    const name = /\bname="([^"]*)"/.exec(disposition)?.[1] ?? '';
    const filename = /\bfilename="([^"]*)"/.exec(disposition)?.[1];
    const contentType = /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1]?.trim();
    parts.push({ name, ...(filename !== undefined ? { filename } : {}), ...(contentType ? { contentType } : {}), bytes: body.subarray(headerEnd + 4, next) });
    start = next + 2;
  }
  return parts;
}

/** OpenAI's labels of its speech formats. */
export const UPSTREAM_SPEECH_CONTENT_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

/** The upstream's deterministic "audio" for an input: 2 KiB per character, a pattern from the text and format. */
export function upstreamSpeechBytes(input: string, format: string): Buffer {
  const seed = Buffer.from(`${format}:${input}`, 'utf8');
  const bytes = Buffer.alloc(Math.max(1, [...input].length) * 2048);
  for (let index = 0; index < bytes.length; index++) bytes[index] = (seed[index % seed.length]! + index) & 0xff;
  return bytes;
}

function error(status: number, message: string, param: string | null = null): UpstreamAnswer {
  return { kind: 'json', status, body: toOpenAIErrorBody(status, { message, param }) };
}

const answerSpeech: UpstreamRouteHandler = (request) => {
  const body = request.body;
  if (!isRecord(body) || typeof body.model !== 'string') return error(400, 'you must provide a model parameter', 'model');
  if (typeof body.input !== 'string' || body.input.length === 0) return error(400, "Missing required parameter: 'input'.", 'input');
  if (typeof body.voice !== 'string') return error(400, "Missing required parameter: 'voice'.", 'voice');
  const format = typeof body.response_format === 'string' ? body.response_format : 'mp3';
  const contentType = UPSTREAM_SPEECH_CONTENT_TYPES[format];
  if (!contentType) return error(400, `Invalid response_format '${format}'.`, 'response_format');
  return { kind: 'bytes', contentType, body: upstreamSpeechBytes(body.input, format) };
};

/** Seconds of a PCM WAV (its data size over its byte rate), or undefined. */
function wavSeconds(bytes: Buffer): number | undefined {
  if (bytes.length < 44 || bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WAVE') return undefined;
  let byteRate: number | undefined;
  for (let offset = 12; offset + 8 <= bytes.length; ) {
    const id = bytes.toString('latin1', offset, offset + 4);
    const size = bytes.readUInt32LE(offset + 4);
    if (id === 'fmt ') byteRate = bytes.readUInt32LE(offset + 16);
    if (id === 'data' && byteRate) return Math.min(size, bytes.length - offset - 8) / byteRate;
    offset += 8 + size + (size % 2);
  }
  return undefined;
}

function answerAudioToText(task: 'transcribe' | 'translate'): UpstreamRouteHandler {
  return (request) => {
    let parts: RecordedPart[];
    try {
      parts = parseRecordedMultipart(request);
    } catch (caught) {
      return error(400, (caught as Error).message);
    }
    const field = (name: string) => parts.find((part) => part.name === name && part.filename === undefined)?.bytes.toString('utf8');
    const file = parts.find((part) => part.name === 'file' && part.filename !== undefined);
    if (!field('model')) return error(400, 'you must provide a model parameter', 'model');
    if (!file) return error(400, "Missing required parameter: 'file'.", 'file');
    const duration = Math.round((wavSeconds(file.bytes) ?? file.bytes.length / 16_000) * 1000) / 1000;
    const first = `Upstream ${task} of ${file.filename}.`;
    const second = `It had ${file.bytes.length} bytes.`;
    const text = `${first} ${second}`;
    const segment = (id: number, start: number, end: number, words: string) => ({
      id,
      seek: 0,
      start,
      end,
      text: ` ${words}`,
      tokens: [50364, 1000 + id, 50364 + Math.round(end / 0.02)],
      temperature: Number(field('temperature') ?? 0),
      avg_logprob: -0.2,
      compression_ratio: 1.1,
      no_speech_prob: 0.01,
    });
    const format = field('response_format') ?? 'json';
    if (format === 'text') return { kind: 'bytes', contentType: 'text/plain; charset=utf-8', body: Buffer.from(`${text}\n`) };
    if (format !== 'verbose_json') return { kind: 'json', status: 200, body: { text } };
    return {
      kind: 'json',
      status: 200,
      body: {
        task,
        language: task === 'translate' ? 'english' : field('language') === 'de' ? 'german' : 'english',
        duration,
        text,
        segments: [segment(0, 0, duration / 2, first), segment(1, duration / 2, duration, second)],
      },
    };
  };
}

/** The routes to add to an OpenAI upstream test server. */
export const OPENAI_AUDIO_ROUTES: Record<string, UpstreamRouteHandler> = {
  'POST /v1/audio/speech': answerSpeech,
  'POST /v1/audio/transcriptions': answerAudioToText('transcribe'),
  'POST /v1/audio/translations': answerAudioToText('translate'),
};
