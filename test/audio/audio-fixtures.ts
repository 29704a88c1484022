/**
 * Audio files for the audio suites, made in memory or by ffmpeg (a test
 * tool: the gateway never runs it).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { runFfmpeg } from '../../server/media/media-test-tools.js';

/** Mono 16-bit PCM WAV header for `dataBytes` of samples at `sampleRate`. */
export function wavHeader(dataBytes: number, sampleRate = 16_000): Buffer {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'latin1');
  header.write('fmt ', 12, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/** `seconds` of a tone as a WAV file (16 kHz mono), different for each `frequency`. */
export function toneWav(seconds: number, frequency = 440, sampleRate = 16_000): Buffer {
  const samples = Math.round(seconds * sampleRate);
  const data = Buffer.alloc(samples * 2);
  for (let index = 0; index < samples; index++) data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * frequency * index) / sampleRate)), index * 2);
  return Buffer.concat([wavHeader(data.length, sampleRate), data]);
}

/** One second of a tone in a format ffmpeg writes from the file name (extra options before the output). */
export function toneFile(directory: string, name: string, options: string[] = []): Buffer {
  const file = path.join(directory, name);
  runFfmpeg(['-f', 'lavfi', '-i', 'sine=d=1', ...options, file]);
  return readFileSync(file);
}
