/**
 * `POST /v1/audio/transcriptions` and `/translations` on the mock, through
 * the official `openai` SDK (`toFile`): every response_format, the mock
 * speech round trip, formats judged by their bytes, every bound with its
 * error, and billing per second of audio.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireTool } from '../../server/media/media-test-tools.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer, toAnswer } from '../support/http.js';
import { balancesOf, usageRowOf, usageRowsOf } from '../support/usage.js';
import { toneFile, toneWav, wavHeader } from './audio-fixtures.js';

let gateway: TestGateway;
let directory: string;

beforeAll(async () => {
  gateway = await startTestGateway();
  directory = mkdtempSync(path.join(os.tmpdir(), 'umg-transcription-test-'));
});

afterAll(async () => {
  await gateway?.close();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

function client(key: string): OpenAI {
  return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
}

/** mock-whisper: 0.0001 credits = 100 micro-credits per second, i.e. 1 per 10 ms, rounded up. */
const costOfMilliseconds = (milliseconds: number) => Math.ceil(milliseconds / 10);

const SPOKEN = 'Meet me at the station after lunch. Bring the blue notebook, please!';

async function mockSpeech(key: string, format: 'mp3' | 'opus' | 'flac' | 'wav', input = SPOKEN): Promise<Buffer> {
  const response = await client(key).audio.speech.create({ model: 'tts-1', input, voice: 'fable', response_format: format });
  return Buffer.from(await response.arrayBuffer());
}

const SRT_CUE = /^(\d+)\n(\d{2}:\d{2}:\d{2},\d{3}) --> (\d{2}:\d{2}:\d{2},\d{3})\n(.+)$/;
const VTT_CUE = /^(\d{2}:\d{2}:\d{2}\.\d{3}) --> (\d{2}:\d{2}:\d{2}\.\d{3})\n(.+)$/;

/** The error of a call that must fail, as the SDK raises it. */
async function apiError(call: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
  const error = await call.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  return error as InstanceType<typeof OpenAI.APIError>;
}

describe('POST /v1/audio/transcriptions on the mock', () => {
  it('transcribes the mock speech back to its text in every response_format', async () => {
    const { key } = await gateway.createAccountWithKey();
    const audio = await mockSpeech(key, 'mp3');
    const file = () => toFile(audio, 'speech.mp3');
    const transcriptions = client(key).audio.transcriptions;

    const json = await transcriptions.create({ model: 'mock-whisper', file: await file() });
    expect(json).toEqual({ text: SPOKEN });

    const text = await transcriptions.create({ model: 'mock-whisper', file: await file(), response_format: 'text' });
    expect(text).toBe(`${SPOKEN}\n`);

    const verbose = await transcriptions.create({ model: 'mock-whisper', file: await file(), response_format: 'verbose_json', language: 'en', temperature: 0.2 });
    expect(verbose).toMatchObject({ task: 'transcribe', language: 'english', text: SPOKEN });
    expect(verbose.duration).toBeGreaterThan(3);
    expect(verbose.segments!.map((segment) => segment.text.trim())).toEqual(['Meet me at the station after lunch.', 'Bring the blue notebook, please!']);
    for (const segment of verbose.segments!) {
      expect(Object.keys(segment).sort()).toEqual(
        ['avg_logprob', 'compression_ratio', 'end', 'id', 'no_speech_prob', 'seek', 'start', 'temperature', 'text', 'tokens'].sort(),
      );
      expect(segment.end).toBeGreaterThan(segment.start);
      expect(segment.temperature).toBe(0.2);
      expect(segment.tokens.length).toBeGreaterThan(2);
    }
    expect(verbose.segments!.at(-1)!.end).toBeCloseTo(verbose.duration, 2);

    const srt = (await transcriptions.create({ model: 'mock-whisper', file: await file(), response_format: 'srt' })) as unknown as string;
    const cues = srt.trimEnd().split('\n\n');
    expect(cues).toHaveLength(2);
    expect(cues.map((cue) => SRT_CUE.exec(cue)?.slice(1))).toEqual([
      ['1', '00:00:00,000', expect.stringMatching(/^00:00:0\d,\d{3}$/), 'Meet me at the station after lunch.'],
      ['2', expect.any(String), expect.any(String), 'Bring the blue notebook, please!'],
    ]);
    expect(srt.endsWith('\n\n')).toBe(true);

    const vtt = (await transcriptions.create({ model: 'mock-whisper', file: await file(), response_format: 'vtt' })) as unknown as string;
    expect(vtt.startsWith('WEBVTT\n\n')).toBe(true);
    const vttCues = vtt.slice('WEBVTT\n\n'.length).trimEnd().split('\n\n');
    expect(vttCues.map((cue) => VTT_CUE.exec(cue)?.[3])).toEqual(['Meet me at the station after lunch.', 'Bring the blue notebook, please!']);
    // The second cue starts where the first ends.
    expect(VTT_CUE.exec(vttCues[1]!)?.[1]).toBe(VTT_CUE.exec(vttCues[0]!)?.[2]);
  });

  it('round-trips the mock speech in every format it makes that SPEC accepts as an upload', async () => {
    const { key } = await gateway.createAccountWithKey();
    for (const format of ['mp3', 'opus', 'flac', 'wav'] as const) {
      const input = `This sentence was spoken as ${format}.`;
      const audio = await mockSpeech(key, format, input);
      const name = format === 'opus' ? 'speech.ogg' : `speech.${format}`;
      const answer = await client(key).audio.transcriptions.create({ model: 'mock-whisper', file: await toFile(audio, name) });
      expect(answer.text, format).toBe(input);
    }
  });

  it('gives other audio a deterministic transcript with plausible segments', async () => {
    const { key } = await gateway.createAccountWithKey();
    const tone = toneWav(6, 330);
    const first = await client(key).audio.transcriptions.create({ model: 'mock-whisper', file: await toFile(tone, 'tone.wav'), response_format: 'verbose_json' });
    const second = await client(key).audio.transcriptions.create({ model: 'mock-whisper', file: await toFile(tone, 'again.wav'), response_format: 'verbose_json' });
    const other = await client(key).audio.transcriptions.create({ model: 'mock-whisper', file: await toFile(toneWav(6, 550), 'other.wav'), response_format: 'verbose_json' });
    expect(second.text).toBe(first.text);
    expect(other.text).not.toBe(first.text);
    expect(first.duration).toBe(6);
    expect(first.segments!.length).toBeGreaterThan(0);
    expect(first.segments!.at(-1)!.end).toBeCloseTo(6, 2);
  });

  it('accepts each listed format by its bytes, and refuses anything else with 415 whatever its name', async () => {
    requireTool('ffmpeg');
    const { key } = await gateway.createAccountWithKey();
    const accepted: [string, Buffer][] = [
      ['tone.flac', toneFile(directory, 'tone.flac')],
      ['tone.mp3', toneFile(directory, 'tone.mp3')],
      ['tone.mp4', toneFile(directory, 'tone.mp4')],
      ['tone.mpeg', toneFile(directory, 'tone.mpeg')],
      ['tone.mpga', toneFile(directory, 'tone-layer2.mpga', ['-f', 'mp2'])],
      ['tone.m4a', toneFile(directory, 'tone.m4a')],
      ['tone.ogg', toneFile(directory, 'tone.ogg')],
      ['tone.wav', toneFile(directory, 'tone.wav')],
      ['tone.webm', toneFile(directory, 'tone.webm')],
    ];
    for (const [name, bytes] of accepted) {
      const answer = await client(key).audio.transcriptions.create({ model: 'mock-whisper', file: await toFile(bytes, name), response_format: 'verbose_json' });
      expect(answer.text.length, name).toBeGreaterThan(0);
      expect(answer.duration, name).toBeGreaterThan(0.9);
    }
    const refused: [string, Buffer][] = [
      ['notes.mp3', Buffer.from('This is a text file that someone renamed to .mp3\n'.repeat(20))],
      ['tone.wav', toneFile(directory, 'tone.aac')],
      ['tone.webm', toneFile(directory, 'tone.mkv')],
      ['image.m4a', Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')],
    ];
    for (const [name, bytes] of refused) {
      const error = await apiError(client(key).audio.transcriptions.create({ model: 'mock-whisper', file: await toFile(bytes, name) }));
      expect(error.status, name).toBe(415);
      expect(error.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      expect(error.param).toBe('file');
    }
  });

  it('refuses a missing or empty file, a bad language, temperature or format with a 400 naming the field, before anything is held', async () => {
    const { key, accountId } = await gateway.createAccountWithKey();
    const tone = () => toFile(toneWav(1), 'tone.wav');
    // Thunks: each request is sent when its turn comes.
    const cases: [() => Promise<unknown>, string][] = [
      [async () => client(key).audio.transcriptions.create({ model: 'mock-whisper', file: await toFile(Buffer.alloc(0), 'empty.wav') }), 'file'],
      [async () => client(key).audio.transcriptions.create({ model: 'mock-whisper' } as never), 'file'],
      [async () => client(key).audio.transcriptions.create({ file: await tone() } as never), 'model'],
      [async () => client(key).audio.transcriptions.create({ model: 'mock-whisper', file: await tone(), language: 'xx' }), 'language'],
      [async () => client(key).audio.transcriptions.create({ model: 'mock-whisper', file: await tone(), language: 'english' }), 'language'],
      [async () => client(key).audio.transcriptions.create({ model: 'mock-whisper', file: await tone(), temperature: 1.5 }), 'temperature'],
      [async () => client(key).audio.transcriptions.create({ model: 'mock-whisper', file: await tone(), temperature: -0.1 }), 'temperature'],
      [async () => client(key).audio.transcriptions.create({ model: 'mock-whisper', file: await tone(), response_format: 'xml' as never }), 'response_format'],
      [async () => client(key).audio.transcriptions.create({ model: 'mock-whisper', file: await tone(), stream: true }), 'stream'],
      [async () => client(key).audio.translations.create({ model: 'mock-whisper', file: await tone(), temperature: 2 }), 'temperature'],
      [async () => client(key).audio.translations.create({ model: 'mock-whisper', file: await toFile(Buffer.alloc(0), 'empty.mp3') }), 'file'],
    ];
    for (const [call, param] of cases) {
      const error = await apiError(call());
      expect(error.status, param).toBe(400);
      expect(error.code, param).toBe('INVALID_REQUEST');
      expect(error.param).toBe(param);
    }
    // A form field that is not a number.
    const form = new FormData();
    form.append('model', 'mock-whisper');
    form.append('temperature', 'warm');
    form.append('file', new Blob([toneWav(1)]), 'tone.wav');
    const answer = await toAnswer(await fetch(`${gateway.url}/v1/audio/transcriptions`, { method: 'POST', headers: bearer(key), body: form }));
    expect(answer.status).toBe(400);
    expect((answer.body.error as { param: string }).param).toBe('temperature');
    // `file` sent as a text field (say, the id of someone else's upload) is not a file.
    const named = new FormData();
    named.append('model', 'mock-whisper');
    named.append('file', 'upl_0123456789abcdef01234567');
    const textFile = await toAnswer(await fetch(`${gateway.url}/v1/audio/transcriptions`, { method: 'POST', headers: bearer(key), body: named }));
    expect(textFile.status).toBe(400);
    expect((textFile.body.error as { param: string }).param).toBe('file');
    // The model must serve the endpoint.
    const wrongModel = await apiError(client(key).audio.transcriptions.create({ model: 'tts-1', file: await tone() }));
    expect(wrongModel.code).toBe('UNSUPPORTED_ENDPOINT');
    expect(await usageRowsOf(gateway, accountId)).toHaveLength(0);
    expect((await balancesOf(gateway, accountId)).held).toBe(0);
  });

  it('takes a file of exactly 25 MiB and refuses 25 MiB + 1 byte with 413', async () => {
    const { key } = await gateway.createAccountWithKey();
    const limit = 25 * 1024 * 1024;
    // A WAV of silence filling the limit exactly.
    const whole = Buffer.alloc(limit);
    wavHeader(limit - 44).copy(whole);
    const accepted = await client(key).audio.transcriptions.create({ model: 'mock-whisper', file: await toFile(whole, 'long.wav'), response_format: 'verbose_json' });
    expect(accepted.duration).toBeCloseTo((limit - 44) / 32_000, 2);
    const over = Buffer.alloc(limit + 1);
    wavHeader(limit + 1 - 44).copy(over);
    const error = await apiError(client(key).audio.transcriptions.create({ model: 'mock-whisper', file: await toFile(over, 'long.wav') }));
    expect(error.status).toBe(413);
    expect(error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(error.param).toBe('file');
    const translationError = await apiError(client(key).audio.translations.create({ model: 'mock-whisper', file: await toFile(over, 'long.wav') }));
    expect(translationError.status).toBe(413);
  });

  it('bills per second of audio: the hold from the probed duration, the charge for the seconds transcribed', async () => {
    const { key, accountId } = await gateway.createAccountWithKey({ credits: 1 });
    const { data, response } = await client(key)
      .audio.transcriptions.create({ model: 'mock-whisper', file: await toFile(toneWav(2.5), 'tone.wav'), response_format: 'verbose_json' })
      .withResponse();
    expect(data.duration).toBe(2.5);
    const row = await usageRowOf(gateway, response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ endpoint: '/v1/audio/transcriptions', model: 'mock-whisper', provider: 'mock', status: 200, units: 2500, input_tokens: 0, output_tokens: 0 });
    expect(row.cost).toBe(costOfMilliseconds(2500));
    const balances = await balancesOf(gateway, accountId);
    expect(balances.current).toBe(1_000_000 - costOfMilliseconds(2500));
    expect(balances.held).toBe(0);
  });

  it('holds a bound from the size when the duration cannot be read, and charges the seconds transcribed', async () => {
    // WebM written to a pipe, as a live recorder does: no duration in its header.
    const live = execFileSync(requireTool('ffmpeg'), ['-v', 'error', '-f', 'lavfi', '-i', 'sine=d=3', '-c:a', 'libopus', '-f', 'webm', 'pipe:1']);
    // The hold is size / 1000 seconds at 100 µc per second.
    const holdMicro = Math.ceil((live.length / 1000) * 100);
    const poor = await gateway.createAccountWithKey({ credits: (holdMicro - 1) / 1_000_000 });
    const refused = await apiError(client(poor.key).audio.transcriptions.create({ model: 'mock-whisper', file: await toFile(live, 'live.webm') }));
    expect(refused.status).toBe(402);
    const { key } = await gateway.createAccountWithKey({ credits: 1 });
    const { data, response } = await client(key)
      .audio.transcriptions.create({ model: 'mock-whisper', file: await toFile(live, 'live.webm'), response_format: 'verbose_json' })
      .withResponse();
    const row = await usageRowOf(gateway, response.headers.get('x-request-id')!);
    expect(row.units).toBe(Math.round(data.duration * 1000));
    expect(row.cost).toBeLessThan(holdMicro);
    expect(row.cost).toBe(costOfMilliseconds(row.units));
  });
});

describe('POST /v1/audio/translations on the mock', () => {
  it('answers English in every response_format, and bills per second', async () => {
    const { key } = await gateway.createAccountWithKey();
    const audio = await mockSpeech(key, 'wav');
    const file = () => toFile(audio, 'speech.wav');
    const translations = client(key).audio.translations;
    const { data: json, response } = await translations.create({ model: 'mock-whisper', file: await file() }).withResponse();
    expect(json).toEqual({ text: SPOKEN });
    const verbose = (await translations.create({ model: 'mock-whisper', file: await file(), response_format: 'verbose_json', prompt: 'A friendly note.' })) as OpenAI.Audio.TranslationVerbose;
    expect(verbose).toMatchObject({ task: 'translate', language: 'english', text: SPOKEN });
    expect(verbose.segments).toHaveLength(2);
    expect(await translations.create({ model: 'mock-whisper', file: await file(), response_format: 'text' })).toBe(`${SPOKEN}\n`);
    const srt = (await translations.create({ model: 'mock-whisper', file: await file(), response_format: 'srt' })) as unknown as string;
    expect(srt.trimEnd().split('\n\n').map((cue) => SRT_CUE.exec(cue)?.[4])).toEqual(['Meet me at the station after lunch.', 'Bring the blue notebook, please!']);
    const vtt = (await translations.create({ model: 'mock-whisper', file: await file(), response_format: 'vtt' })) as unknown as string;
    expect(vtt).toMatch(/^WEBVTT\n\n00:00:00\.000 --> /);
    const row = await usageRowOf(gateway, response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ endpoint: '/v1/audio/translations', status: 200, units: Math.round(verbose.duration * 1000) });
    expect(row.cost).toBe(costOfMilliseconds(row.units));
  });
});
