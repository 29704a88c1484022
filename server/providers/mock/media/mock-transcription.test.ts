import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runFfmpeg } from '../../../media/media-test-tools.js';
import type { Transcript } from '../../../media/subtitles.js';
import { synthesizeSpeech, type SpeechFormat } from './mock-speech.js';
import { transcribeMock } from './mock-transcription.js';

const workDirectory = mkdtempSync(join(tmpdir(), 'mock-transcription-test-'));
afterAll(() => rmSync(workDirectory, { recursive: true, force: true }));

/** Text that stresses the round trip: non-Latin scripts, emoji, quotes, backslashes, newlines, three sentences. */
const TRICKY_TEXT = 'Grüße aus Köln — “quoted” \\ backslash. 日本語のテキストです。\nEmoji 🎧 at the end? Yes!';

async function writeSpeech(format: SpeechFormat, text: string, name: string, speed = 1): Promise<string> {
  const speech = synthesizeSpeech({ text, voice: 'coral', format, speed, model: 'tts-1' });
  const parts: Uint8Array[] = [];
  for await (const chunk of speech.chunks) parts.push(chunk);
  const path = join(workDirectory, `${name}.${format}`);
  writeFileSync(path, Buffer.concat(parts));
  return path;
}

function expectWellFormedSegments(transcript: Transcript): void {
  let previousEnd = 0;
  transcript.segments.forEach((segment, index) => {
    expect(segment.id).toBe(index);
    expect(segment.start).toBe(previousEnd);
    expect(segment.end).toBeGreaterThan(segment.start);
    expect(segment.seek).toBe(Math.floor(segment.start / 30) * 3000);
    expect(segment.text.startsWith(' ')).toBe(true);
    expect(segment.tokens.length).toBeGreaterThanOrEqual(3);
    expect(segment.avg_logprob).toBeLessThan(0);
    expect(segment.compression_ratio).toBeGreaterThan(0);
    expect(segment.no_speech_prob).toBeGreaterThanOrEqual(0);
    expect(segment.no_speech_prob).toBeLessThan(1);
    previousEnd = segment.end;
  });
  expect(previousEnd).toBeCloseTo(transcript.duration, 3);
}

describe('transcribeMock on the mock speech', () => {
  it.each(['mp3', 'opus', 'aac', 'flac', 'wav'] as const)('recovers the exact input text from %s', async (format) => {
    const path = await writeSpeech(format, TRICKY_TEXT, `tricky-${format}`);
    const transcript = await transcribeMock({ filePath: path, task: 'transcribe' });
    expect(transcript.text).toBe(TRICKY_TEXT);
    expect(transcript.task).toBe('transcribe');
    expect(transcript.language).toBe('english');
    // Sentence boundaries: ". ", "。", "? " and the end.
    expect(transcript.segments.map((segment) => segment.text)).toEqual([
      ' Grüße aus Köln — “quoted” \\ backslash.',
      ' 日本語のテキストです。',
      ' Emoji 🎧 at the end?',
      ' Yes!',
    ]);
    expectWellFormedSegments(transcript);
  });

  it('recovers an input of 4096 characters outside the Basic Multilingual Plane', async () => {
    const text = '\u{1F3A7}'.repeat(4096);
    const path = await writeSpeech('opus', text, 'longest', 4);
    expect((await transcribeMock({ filePath: path, task: 'transcribe' })).text).toBe(text);
  });

  it('shares the real duration out by sentence length', async () => {
    const text = 'Short one. This second sentence is much, much longer than the first.';
    const path = await writeSpeech('wav', text, 'proportional', 0.5);
    const transcript = await transcribeMock({ filePath: path, task: 'transcribe', temperature: 0.4 });
    // 68 characters at 7 a second.
    expect(transcript.duration).toBeCloseTo(68 / 7, 2);
    const [first, second] = transcript.segments;
    expect(first!.end / transcript.duration).toBeCloseTo(11 / 68, 2);
    expect(second!.end - second!.start).toBeGreaterThan(4 * (first!.end - first!.start));
    expect(transcript.segments.every((segment) => segment.temperature === 0.4)).toBe(true);
  });

  it('cuts a very long sentence into segments of at most 300 characters at word boundaries', async () => {
    const text = `${'word '.repeat(150)}end.`;
    const transcript = await transcribeMock({ filePath: await writeSpeech('flac', text, 'long-sentence', 4), task: 'transcribe' });
    expect(transcript.text).toBe(text);
    expect(transcript.segments.length).toBe(3);
    for (const segment of transcript.segments) expect(segment.text.trim().length).toBeLessThanOrEqual(300);
    expectWellFormedSegments(transcript);
  });

  it('names the requested language as verbose_json does, and translates to English', async () => {
    const path = await writeSpeech('mp3', 'Guten Tag.', 'german');
    expect((await transcribeMock({ filePath: path, task: 'transcribe', language: 'de' })).language).toBe('german');
    const translated = await transcribeMock({ filePath: path, task: 'translate', language: 'de' });
    expect(translated).toMatchObject({ task: 'translate', language: 'english', text: 'Guten Tag.' });
  });
});

describe('transcribeMock on other audio', () => {
  beforeAll(() => {
    runFfmpeg(['-f', 'lavfi', '-i', 'sine=f=300:d=12', join(workDirectory, 'tone.ogg')]);
    runFfmpeg(['-f', 'lavfi', '-i', 'sine=f=500:d=12', join(workDirectory, 'other-tone.ogg')]);
  }, 30_000);

  it('makes up a deterministic transcript that fits the duration', async () => {
    const first = await transcribeMock({ filePath: join(workDirectory, 'tone.ogg'), task: 'transcribe' });
    const again = await transcribeMock({ filePath: join(workDirectory, 'tone.ogg'), task: 'transcribe' });
    expect(again).toEqual(first);
    expect(first.duration).toBeCloseTo(12, 1);
    // About 2.5 words a second.
    expect(first.text.split(' ').length).toBe(30);
    expect(first.text).toMatch(/^[A-Z][a-z ]+\./);
    expectWellFormedSegments(first);
    const other = await transcribeMock({ filePath: join(workDirectory, 'other-tone.ogg'), task: 'transcribe' });
    expect(other.text).not.toBe(first.text);
  });

  it('estimates the duration from the size when the file cannot be read as audio', async () => {
    const path = join(workDirectory, 'noise.bin');
    writeFileSync(path, Buffer.alloc(48_000, 7));
    const transcript = await transcribeMock({ filePath: path, task: 'translate' });
    // 48 kB at 128 kbit/s.
    expect(transcript.duration).toBe(3);
    expect(transcript.language).toBe('english');
    expect(transcript.text.length).toBeGreaterThan(0);
  });
});
