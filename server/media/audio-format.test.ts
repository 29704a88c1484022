import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUDIO_DETECTION_HEAD_BYTES, detectAudioFormat, probeAudioDuration, type AudioUploadFormat } from './audio-format.js';
import { runFfmpeg } from './media-test-tools.js';

const workDirectory = mkdtempSync(join(tmpdir(), 'audio-format-test-'));
afterAll(() => rmSync(workDirectory, { recursive: true, force: true }));

/** One second of a 440 Hz tone in each accepted format, made the way a user's tools would. */
const SAMPLES: { file: string; format: AudioUploadFormat; ffmpeg: string[] }[] = [
  { file: 'tone.flac', format: 'flac', ffmpeg: [] },
  { file: 'tone.mp3', format: 'mp3', ffmpeg: [] },
  { file: 'tone.mp4', format: 'mp4', ffmpeg: [] },
  { file: 'tone.mpeg', format: 'mpeg', ffmpeg: [] },
  // `mpga` is MPEG audio: an MP3 under another name, or MPEG-1 layer II.
  { file: 'tone.mpga', format: 'mp3', ffmpeg: ['-f', 'mp3'] },
  { file: 'tone-layer2.mpga', format: 'mpga', ffmpeg: ['-f', 'mp2'] },
  { file: 'tone.m4a', format: 'm4a', ffmpeg: [] },
  { file: 'tone.ogg', format: 'ogg', ffmpeg: [] },
  { file: 'tone-opus.ogg', format: 'ogg', ffmpeg: ['-c:a', 'libopus'] },
  { file: 'tone.wav', format: 'wav', ffmpeg: [] },
  { file: 'tone.webm', format: 'webm', ffmpeg: [] },
];

const head = (file: string) => readFileSync(join(workDirectory, file)).subarray(0, AUDIO_DETECTION_HEAD_BYTES);

beforeAll(() => {
  for (const sample of SAMPLES) runFfmpeg(['-f', 'lavfi', '-i', 'sine=d=1', ...sample.ffmpeg, join(workDirectory, sample.file)]);
  // Video containers with a sound track count as their format.
  runFfmpeg(['-f', 'lavfi', '-i', 'testsrc=d=1:s=64x64', '-f', 'lavfi', '-i', 'sine=d=1', '-shortest', join(workDirectory, 'video.mp4')]);
  runFfmpeg(['-f', 'lavfi', '-i', 'testsrc=d=1:s=64x64', '-f', 'lavfi', '-i', 'sine=d=1', '-shortest', join(workDirectory, 'video.mpeg')]);
  // Formats SPEC does not accept.
  runFfmpeg(['-f', 'lavfi', '-i', 'sine=d=1', join(workDirectory, 'tone.aac')]);
  runFfmpeg(['-f', 'lavfi', '-i', 'sine=d=1', join(workDirectory, 'tone.mkv')]);
  writeFileSync(join(workDirectory, 'notes.mp3'), 'This is a text file that someone renamed to .mp3\n'.repeat(20));
}, 60_000);

describe('detectAudioFormat', () => {
  it.each(SAMPLES)('detects $file as $format', async ({ file, format }) => {
    expect(await detectAudioFormat(head(file))).toBe(format);
  });

  it('counts video containers with sound', async () => {
    expect(await detectAudioFormat(head('video.mp4'))).toBe('mp4');
    expect(await detectAudioFormat(head('video.mpeg'))).toBe('mpeg');
  });

  it('rejects a text file named .mp3', async () => {
    expect(await detectAudioFormat(head('notes.mp3'))).toBeUndefined();
  });

  it('rejects audio in formats SPEC does not list', async () => {
    expect(await detectAudioFormat(head('tone.aac'))).toBeUndefined();
    expect(await detectAudioFormat(head('tone.mkv'))).toBeUndefined();
  });

  it('rejects empty and tiny inputs', async () => {
    expect(await detectAudioFormat(new Uint8Array(0))).toBeUndefined();
    expect(await detectAudioFormat(Uint8Array.from([0xff]))).toBeUndefined();
  });

  it('works from a head much shorter than the file', async () => {
    expect(await detectAudioFormat(head('tone.wav').subarray(0, 4100))).toBe('wav');
  });
});

describe('probeAudioDuration', () => {
  it.each(SAMPLES)('reads about one second from $file', async ({ file }) => {
    const duration = await probeAudioDuration(join(workDirectory, file));
    // Codec framing adds up to a frame or two (MP3 1152 samples, AAC priming).
    expect(duration).toBeGreaterThan(0.95);
    expect(duration).toBeLessThan(1.1);
  });

  it('reads MPEG program streams from their timestamps', async () => {
    expect(await probeAudioDuration(join(workDirectory, 'video.mpeg'))).toBeCloseTo(1, 1);
  });

  it('counts ADTS frames when the headers carry no length', async () => {
    expect(await probeAudioDuration(join(workDirectory, 'tone.aac'))).toBeCloseTo(1, 1);
  });

  it('answers undefined for a file that is not audio', async () => {
    expect(await probeAudioDuration(join(workDirectory, 'notes.mp3'))).toBeUndefined();
  });

  it('answers undefined for a WebM recorded live, which has no length in its header', async () => {
    const live = join(workDirectory, 'live.webm');
    // Written to a pipe, the muxer cannot go back to fill in the duration: as MediaRecorder files.
    runFfmpeg(['-f', 'lavfi', '-i', 'sine=d=1', '-c:a', 'libopus', '-f', 'webm', '-live', '1', live]);
    expect(await probeAudioDuration(live)).toBeUndefined();
  });
});
