/**
 * The offline mock provider's transcription and translation
 * (`POST /v1/audio/transcriptions`, `/v1/audio/translations`).
 *
 * Audio made by the mock speech carries its request in its metadata (see
 * speech-metadata.ts): it transcribes back to exactly its input text. Any
 * other audio gets a deterministic English transcript chosen from a hash of
 * its bytes, as long as its playing time suggests. Either way the segments
 * follow sentences, with times shared out by length over the real duration.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { deflateSync } from 'node:zlib';
import { parseFile } from 'music-metadata';
import { probeAudioDuration } from '../../../media/audio-format.js';
import type { Transcript, TranscriptSegment } from '../../../media/subtitles.js';
import { toTranscriptLanguageName } from '../../../media/transcript-languages.js';
import { fromMockSpeechTag, type MockSpeechMetadata } from './speech-metadata.js';

/** What the route hands over: the uploaded file (already on disk) and the form fields. */
export interface MockTranscriptionRequest {
  filePath: string;
  task: 'transcribe' | 'translate';
  /** ISO-639-1 code of the spoken language (transcription only). */
  language?: string;
  /** Style hint; the mock does not use it. */
  prompt?: string;
  /** 0 to 1; echoed in the segments. */
  temperature?: number;
}

/** Bytes per second assumed when a file's duration cannot be read: 128 kbit/s. */
const FALLBACK_BYTES_PER_SECOND = 16_000;
/** Words per second of the made-up transcripts (a calm speaker). */
const MADE_UP_WORDS_PER_SECOND = 2.5;
const MADE_UP_MAX_WORDS = 5000;
/** Longest segment text before a sentence is cut at a word boundary (Whisper decodes 30 s windows). */
const MAX_SEGMENT_CHARACTERS = 300;
/** Whisper's first timestamp token (`<|0.00|>`) and its 20 ms step. */
const TIMESTAMP_TOKEN_BASE = 50364;
/** GPT-2 vocabulary size: text tokens are below it. */
const TEXT_TOKEN_RANGE = 50257;

/**
 * Transcribes (or translates) the file at `filePath`. A translation is
 * always English, as OpenAI's; a transcription is in `language` when given,
 * else English. Throws only on I/O errors reading the file.
 */
export async function transcribeMock(request: MockTranscriptionRequest): Promise<Transcript> {
  const [metadata, probedDuration, size] = await Promise.all([
    readMockSpeechMetadata(request.filePath),
    probeAudioDuration(request.filePath),
    stat(request.filePath).then((stats) => stats.size),
  ]);
  const duration = roundMilliseconds(probedDuration ?? Math.max(0.1, size / FALLBACK_BYTES_PER_SECOND));
  const text = metadata ? metadata.text : makeUpTranscript(await hashFile(request.filePath), duration);
  const language = request.task === 'translate' ? 'english' : (request.language && toTranscriptLanguageName(request.language)) || 'english';
  return { task: request.task, language, duration, text, segments: buildSegments(text, duration, request.temperature ?? 0, Boolean(metadata)) };
}

/** The mock speech request embedded in the file, whichever tag format carries it. */
async function readMockSpeechMetadata(filePath: string): Promise<MockSpeechMetadata | undefined> {
  try {
    const { native } = await parseFile(filePath, { duration: false, skipCovers: true });
    for (const tags of Object.values(native)) {
      for (const tag of tags) {
        const value = typeof tag.value === 'string' ? tag.value : undefined;
        const found = value === undefined ? undefined : fromMockSpeechTag(value);
        if (found) return found;
      }
    }
  } catch {
    // Not a file music-metadata can read: no metadata, a made-up transcript.
  }
  return undefined;
}

async function hashFile(filePath: string): Promise<Buffer> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(filePath)) hash.update(chunk as Buffer);
  return hash.digest();
}

const MADE_UP_WORDS = [
  'the', 'weather', 'today', 'is', 'calm', 'and', 'bright', 'we', 'will', 'meet', 'at', 'the', 'station', 'after', 'lunch',
  'please', 'remember', 'to', 'bring', 'your', 'notes', 'project', 'update', 'looks', 'good', 'so', 'far', 'thank', 'you',
  'for', 'listening', 'next', 'week', 'our', 'team', 'plans', 'a', 'short', 'review', 'of', 'the', 'results', 'everyone',
  'agreed', 'that', 'it', 'went', 'well', 'let', 'us', 'start', 'with', 'a', 'quick', 'summary', 'music', 'plays', 'softly',
];

/** A deterministic English transcript of about `duration` seconds, picked by the file's hash. */
function makeUpTranscript(digest: Buffer, duration: number): string {
  let state = digest.readUInt32BE(0) || 1;
  const next = () => {
    // xorshift32 seeded by the file: same bytes, same words.
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
  const wordCount = Math.min(MADE_UP_MAX_WORDS, Math.max(1, Math.round(duration * MADE_UP_WORDS_PER_SECOND)));
  const sentences: string[] = [];
  for (let written = 0; written < wordCount; ) {
    const length = Math.min(wordCount - written, 5 + Math.floor(next() * 10));
    const words = Array.from({ length }, () => MADE_UP_WORDS[Math.floor(next() * MADE_UP_WORDS.length)]!);
    const sentence = words.join(' ');
    sentences.push(`${sentence[0]!.toUpperCase()}${sentence.slice(1)}.`);
    written += length;
  }
  return sentences.join(' ');
}

/** Sentences of `text` (with their trailing spaces), long ones cut at word boundaries. */
function splitSentences(text: string): string[] {
  const sentences = text.match(/[^.!?\u3002\uff01\uff1f\u2026]+(?:[.!?\u3002\uff01\uff1f\u2026]+|$)\s*/gu) ?? [];
  const pieces: string[] = [];
  for (const sentence of sentences) {
    let rest = sentence;
    while (rest.length > MAX_SEGMENT_CHARACTERS) {
      const cut = rest.lastIndexOf(' ', MAX_SEGMENT_CHARACTERS);
      const at = cut > 0 ? cut + 1 : MAX_SEGMENT_CHARACTERS;
      pieces.push(rest.slice(0, at));
      rest = rest.slice(at);
    }
    if (rest.length > 0) pieces.push(rest);
  }
  return pieces;
}

function fnv1a(value: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < value.length; index++) hash = Math.imul(hash ^ value.charCodeAt(index), 0x01000193);
  return hash >>> 0;
}

const roundMilliseconds = (seconds: number) => Math.round(seconds * 1000) / 1000;

/**
 * Whisper-style segments: one per sentence, timed in proportion to its
 * length across `duration`. Scores are deterministic and plausible: a
 * confident decode for the mock's own speech, a less certain one otherwise.
 */
function buildSegments(text: string, duration: number, temperature: number, fromMockSpeech: boolean): TranscriptSegment[] {
  const pieces = splitSentences(text).filter((piece) => piece.trim().length > 0);
  const totalCharacters = pieces.reduce((total, piece) => total + piece.length, 0);
  let before = 0;
  return pieces.map((piece, id) => {
    const start = roundMilliseconds((duration * before) / totalCharacters);
    before += piece.length;
    const end = roundMilliseconds((duration * before) / totalCharacters);
    const sentence = piece.trim();
    const hash = fnv1a(sentence);
    const windowStart = Math.floor(start / 30) * 30;
    const timestampToken = (seconds: number) => TIMESTAMP_TOKEN_BASE + Math.min(1500, Math.round((seconds - windowStart) / 0.02));
    const textBytes = Buffer.from(sentence, 'utf8');
    return {
      id,
      seek: windowStart * 100,
      start,
      end,
      // Whisper's segment texts start with the space that preceded them.
      text: ` ${sentence}`,
      tokens: [timestampToken(start), ...sentence.split(/\s+/u).map((word) => fnv1a(word) % TEXT_TOKEN_RANGE), timestampToken(end)],
      temperature,
      avg_logprob: -Number(((fromMockSpeech ? 0.08 : 0.25) + (hash % 200) / 1000).toFixed(4)),
      compression_ratio: Number((textBytes.length / deflateSync(textBytes).length).toFixed(4)),
      no_speech_prob: Number((((hash >>> 8) % 100) / (fromMockSpeech ? 10_000 : 1000)).toFixed(4)),
    };
  });
}
