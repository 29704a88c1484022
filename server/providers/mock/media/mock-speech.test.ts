import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { decodeWithFfmpeg, probeMedia, requireTool } from '../../../media/media-test-tools.js';
import { SPEECH_CONTENT_TYPES, SPEECH_FORMATS, synthesizeSpeech, type SpeechFormat, type SpeechRequest } from './mock-speech.js';
import { planSpeech, renderSpeechSamples } from './speech-signal.js';

const workDirectory = mkdtempSync(join(tmpdir(), 'mock-speech-test-'));
afterAll(() => rmSync(workDirectory, { recursive: true, force: true }));

/** ffprobe's codec and sample rate for each format (Opus always decodes at 48 kHz). */
const EXPECTED_STREAMS: Record<SpeechFormat, { codec: string; sampleRate: string }> = {
  mp3: { codec: 'mp3', sampleRate: '24000' },
  opus: { codec: 'opus', sampleRate: '48000' },
  aac: { codec: 'aac', sampleRate: '24000' },
  flac: { codec: 'flac', sampleRate: '24000' },
  wav: { codec: 'pcm_s16le', sampleRate: '24000' },
  pcm: { codec: 'pcm_s16le', sampleRate: '24000' },
};

/** Raw PCM has no header: ffmpeg must be told what it is. */
const inputOptions = (format: SpeechFormat) => (format === 'pcm' ? ['-f', 's16le', '-ar', '24000', '-ac', '1'] : []);

async function collect(chunks: AsyncIterable<Uint8Array>): Promise<{ bytes: Buffer; count: number }> {
  const parts: Uint8Array[] = [];
  for await (const chunk of chunks) parts.push(chunk);
  return { bytes: Buffer.concat(parts), count: parts.length };
}

async function synthesizeToFile(request: SpeechRequest, name: string) {
  const speech = synthesizeSpeech(request);
  const { bytes, count } = await collect(speech.chunks);
  const path = join(workDirectory, `${name}.${request.format}`);
  writeFileSync(path, bytes);
  return { path, bytes, chunkCount: count, speech };
}

function probedDuration(path: string, format: SpeechFormat): number {
  return Number(probeMedia(path, inputOptions(format)).format.duration);
}

/** Decoded audio as 24 kHz mono 16-bit samples. */
function decodeToSamples(path: string, format: SpeechFormat): Int16Array {
  const raw = execFileSync(requireTool('ffmpeg'), ['-v', 'error', ...inputOptions(format), '-i', path, '-ar', '24000', '-ac', '1', '-f', 's16le', '-'], { maxBuffer: 64 << 20 });
  return new Int16Array(raw.buffer, raw.byteOffset, raw.byteLength / 2);
}

function correlation(left: Int16Array, right: Int16Array): number {
  let product = 0;
  let leftEnergy = 0;
  let rightEnergy = 0;
  for (let index = 0; index < Math.min(left.length, right.length); index++) {
    product += left[index]! * right[index]!;
    leftEnergy += left[index]! ** 2;
    rightEnergy += right[index]! ** 2;
  }
  return product / Math.sqrt(leftEnergy * rightEnergy);
}

const SENTENCE = 'The quick brown fox jumps over the lazy dog. ';
const MEDIUM = SENTENCE.repeat(3);
const LONG = SENTENCE.repeat(6);

describe.each(SPEECH_FORMATS)('synthesizeSpeech as %s', (format) => {
  const base = { voice: 'alloy', format, model: 'tts-1' } as const;

  it('labels the content type of the format', () => {
    expect(synthesizeSpeech({ ...base, text: 'Hi.', speed: 1 }).contentType).toBe(SPEECH_CONTENT_TYPES[format]);
  });

  it('decodes cleanly with the expected codec, and its duration follows the input length and the speed', async () => {
    const medium = await synthesizeToFile({ ...base, text: MEDIUM, speed: 1 }, `${format}-medium`);
    const long = await synthesizeToFile({ ...base, text: LONG, speed: 1 }, `${format}-long`);
    const fast = await synthesizeToFile({ ...base, text: LONG, speed: 2 }, `${format}-fast`);
    for (const { path } of [medium, long, fast]) {
      const probe = probeMedia(path, inputOptions(format));
      expect(probe.streams).toHaveLength(1);
      expect(probe.streams[0]).toMatchObject({ codec_name: EXPECTED_STREAMS[format].codec, sample_rate: EXPECTED_STREAMS[format].sampleRate, channels: 1 });
      expect(decodeWithFfmpeg(path, inputOptions(format))).toEqual({ status: 0, errors: '' });
    }
    // 14 characters a second at speed 1: 135 characters are 9.6 s, 270 are 19.3 s.
    expect(medium.speech.durationSeconds).toBeCloseTo(MEDIUM.length / 14, 3);
    expect(long.speech.durationSeconds).toBeCloseTo(LONG.length / 14, 3);
    expect(fast.speech.durationSeconds).toBeCloseTo(LONG.length / 28, 3);
    const [mediumSeconds, longSeconds, fastSeconds] = [medium, long, fast].map(({ path }) => probedDuration(path, format));
    expect(longSeconds).toBeGreaterThan(mediumSeconds! * 1.8);
    expect(fastSeconds).toBeLessThan(longSeconds! * 0.6);
    // What the container says matches what was planned, codec framing aside (ADTS is estimated from its bit rate).
    const tolerance = format === 'aac' ? 0.25 : 0.08;
    expect(Math.abs(longSeconds! - long.speech.durationSeconds)).toBeLessThan(tolerance);
  });

  it('streams a long input in several chunks and is deterministic', async () => {
    const request = { ...base, text: LONG, speed: 1 };
    const first = await collect(synthesizeSpeech(request).chunks);
    const second = await collect(synthesizeSpeech(request).chunks);
    // 19 s of audio in blocks of 2.56 s, plus a header chunk where the format has one.
    expect(first.count).toBeGreaterThanOrEqual(8);
    expect(first.bytes.equals(second.bytes)).toBe(true);
  });
});

describe('synthesizeSpeech audio', () => {
  it('is at least half a second long, even for one character', async () => {
    const speech = synthesizeSpeech({ text: 'a', voice: 'nova', format: 'pcm', speed: 4, model: 'tts-1' });
    expect(speech.durationSeconds).toBe(0.5);
    expect((await collect(speech.chunks)).bytes.length).toBe(24_000);
  });

  it('writes PCM as 16-bit little-endian samples at 24 kHz', async () => {
    const speech = synthesizeSpeech({ text: 'Hello world.', voice: 'alloy', format: 'pcm', speed: 1, model: 'tts-1' });
    const { bytes } = await collect(speech.chunks);
    expect(bytes.length).toBe(Math.round(speech.durationSeconds * 24_000) * 2);
    const plan = planSpeech('Hello world.', 'alloy', 1);
    const expected = new Int16Array(plan.totalSamples);
    renderSpeechSamples(plan, 0, expected);
    expect(bytes.equals(Buffer.from(expected.buffer))).toBe(true);
  });

  it('is lossless in FLAC and WAV', async () => {
    const request = { text: MEDIUM, voice: 'echo', speed: 1.3, model: 'tts-1' };
    const pcm = await synthesizeToFile({ ...request, format: 'pcm' }, 'lossless');
    for (const format of ['flac', 'wav'] as const) {
      const { path } = await synthesizeToFile({ ...request, format }, `lossless-${format}`);
      expect(Buffer.from(decodeToSamples(path, format).buffer).equals(pcm.bytes)).toBe(true);
    }
  });

  it('sounds the same through Opus and MP3 as in PCM, aligned in time', async () => {
    const request = { text: MEDIUM, voice: 'fable', speed: 1, model: 'tts-1' };
    const original = decodeToSamples((await synthesizeToFile({ ...request, format: 'pcm' }, 'reference')).path, 'pcm');
    const opus = decodeToSamples((await synthesizeToFile({ ...request, format: 'opus' }, 'reference')).path, 'opus');
    // The Ogg pre-skip and end trimming give back exactly the clip.
    expect(opus.length).toBe(original.length);
    expect(correlation(original, opus)).toBeGreaterThan(0.9);
    const mp3 = decodeToSamples((await synthesizeToFile({ ...request, format: 'mp3' }, 'reference')).path, 'mp3');
    // An MP3 without a LAME header keeps the encoder delay: search for it over the first 3 s.
    const head = original.subarray(0, 72_000);
    const best = Math.max(...Array.from({ length: 350 }, (_, step) => correlation(head, mp3.subarray(step * 4))));
    expect(best).toBeGreaterThan(0.8);
  });

  it('is audible in AAC: noise during words, silence in pauses', async () => {
    const { path } = await synthesizeToFile({ text: 'Word.            Word.', voice: 'alloy', format: 'aac', speed: 1, model: 'tts-1' }, 'pauses');
    const samples = decodeToSamples(path, 'aac');
    const rms = (from: number, to: number) => Math.sqrt(samples.subarray(from, to).reduce((total, value) => total + value * value, 0) / (to - from));
    // "Word" sounds for 0.29 s; the 12 spaces after "Word." are 0.93 s of silence.
    expect(rms(1000, 6000)).toBeGreaterThan(1000);
    expect(rms(14_000, 24_000)).toBe(0);
  });

  it('gives each voice its own pitch', async () => {
    const crossings = async (voice: string) => {
      const { bytes } = await collect(synthesizeSpeech({ text: 'Aaaaaaaaaaaaaa', voice, format: 'pcm', speed: 1, model: 'tts-1' }).chunks);
      const samples = new Int16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
      let count = 0;
      for (let index = 1; index < samples.length; index++) if (samples[index - 1]! < 0 && samples[index]! >= 0) count++;
      return count;
    };
    const [onyx, shimmer] = [await crossings('onyx'), await crossings('shimmer')];
    expect(shimmer).toBeGreaterThan(onyx * 2);
  });

  it('embeds the request in the metadata ffprobe sees', async () => {
    const { path } = await synthesizeToFile({ text: 'Tagged text.', voice: 'sage', format: 'flac', speed: 1.5, model: 'tts-1-hd' }, 'tags');
    const tags = JSON.parse(execFileSync(requireTool('ffprobe'), ['-v', 'error', '-show_entries', 'format_tags', '-of', 'json', path], { encoding: 'utf8' })).format.tags;
    expect(JSON.parse(tags.UMG_MOCK_SPEECH)).toMatchObject({ text: 'Tagged text.', voice: 'sage', speed: 1.5, model: 'tts-1-hd' });
  });

  it('refuses input over 4096 characters, speeds out of range and unknown formats, before streaming', () => {
    const base = { voice: 'alloy', format: 'mp3', speed: 1, model: 'tts-1' } as const;
    expect(() => synthesizeSpeech({ ...base, text: 'x'.repeat(4097) })).toThrow(RangeError);
    expect(synthesizeSpeech({ ...base, text: '\u{1F600}'.repeat(4096) }).durationSeconds).toBeCloseTo(4096 / 14, 3);
    expect(() => synthesizeSpeech({ ...base, text: 'hi', speed: 0.2 })).toThrow(RangeError);
    expect(() => synthesizeSpeech({ ...base, text: 'hi', speed: 4.5 })).toThrow(RangeError);
    expect(() => synthesizeSpeech({ ...base, text: 'hi', format: 'ogg' as SpeechFormat })).toThrow(RangeError);
  });

  it('stops encoding when the consumer stops reading', async () => {
    const speech = synthesizeSpeech({ text: LONG.repeat(10), voice: 'alloy', format: 'opus', speed: 0.25, model: 'tts-1' });
    const iterator = speech.chunks[Symbol.asyncIterator]();
    await iterator.next();
    await iterator.next();
    // Returning early runs the encoder's cleanup (the libopus state is freed) and ends the stream.
    await iterator.return?.();
    expect((await iterator.next()).done).toBe(true);
  });
});

