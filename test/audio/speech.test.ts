/**
 * `POST /v1/audio/speech` on the mock, through the official `openai` SDK:
 * real audio in every format (decoded by ffprobe), the exact content types
 * of GAPS.md, streamed without a length, every bound a 400 naming its field,
 * billing per input character, and the catalog refusing speech on a provider
 * kind that cannot serve it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogConfigError, findUnservedEndpoint, loadCatalogSource } from '../../server/catalog/catalog.js';
import { DEMO_CATALOG } from '../../server/catalog/demo-catalog.js';
import { probeMedia } from '../../server/media/media-test-tools.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer, postJson } from '../support/http.js';
import { balancesOf, usageRowOf, usageRowsOf } from '../support/usage.js';

let gateway: TestGateway;
let directory: string;

beforeAll(async () => {
  gateway = await startTestGateway();
  directory = mkdtempSync(path.join(os.tmpdir(), 'umg-speech-test-'));
});

afterAll(async () => {
  await gateway?.close();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

function client(key: string): OpenAI {
  return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
}

type Format = 'mp3' | 'opus' | 'aac' | 'flac' | 'wav' | 'pcm';

/** GAPS.md "Audio", and what ffprobe must find in each. */
const FORMATS: Record<Format, { contentType: string; codec: string }> = {
  mp3: { contentType: 'audio/mpeg', codec: 'mp3' },
  opus: { contentType: 'audio/ogg', codec: 'opus' },
  aac: { contentType: 'audio/aac', codec: 'aac' },
  flac: { contentType: 'audio/flac', codec: 'flac' },
  wav: { contentType: 'audio/wav', codec: 'pcm_s16le' },
  pcm: { contentType: 'audio/pcm', codec: 'pcm_s16le' },
};

/** tts-1: 0.000015 credits = 15 micro-credits per character. */
const TTS1_MICRO_PER_CHARACTER = 15;

/** Synthesises through the SDK and writes the file; answers its path, the answer's headers and the request id. */
async function speak(key: string, body: OpenAI.Audio.SpeechCreateParams, name: string) {
  const response = await client(key).audio.speech.create(body);
  const bytes = Buffer.from(await response.arrayBuffer());
  const file = path.join(directory, name);
  writeFileSync(file, bytes);
  return { file, bytes, headers: response.headers, requestId: response.headers.get('x-request-id')! };
}

function durationOf(file: string, format: Format): number {
  const probed = probeMedia(file, format === 'pcm' ? ['-f', 's16le', '-ar', '24000', '-ac', '1'] : []);
  return Number(probed.format.duration);
}

describe('POST /v1/audio/speech on the mock', () => {
  it('answers real audio in every format with its own content type, streamed without a length, billed per character', async () => {
    const { key, accountId } = await gateway.createAccountWithKey({ credits: 10 });
    const input = 'The quick brown fox jumps over the lazy dog.';
    for (const format of Object.keys(FORMATS) as Format[]) {
      const { file, headers, requestId } = await speak(key, { model: 'tts-1', input, voice: 'nova', response_format: format }, `every-format.${format}`);
      expect(headers.get('content-type'), format).toBe(FORMATS[format].contentType);
      // Sent as it is produced: chunked, no length up front.
      expect(headers.get('content-length'), format).toBeNull();
      const probed = probeMedia(file, format === 'pcm' ? ['-f', 's16le', '-ar', '24000', '-ac', '1'] : []);
      expect(probed.streams[0]?.codec_name, format).toBe(FORMATS[format].codec);
      // 44 characters at the mock's 14 characters per second.
      expect(Number(probed.format.duration), format).toBeGreaterThan(2.5);
      const row = await usageRowOf(gateway, requestId);
      expect(row).toMatchObject({ endpoint: '/v1/audio/speech', model: 'tts-1', provider: 'mock', status: 200, aborted: false, units: input.length });
      expect(row.cost).toBe(input.length * TTS1_MICRO_PER_CHARACTER);
    }
    const balances = await balancesOf(gateway, accountId);
    expect(balances.current).toBe(10_000_000 - 6 * input.length * TTS1_MICRO_PER_CHARACTER);
    expect(balances.held).toBe(0);
  });

  it('makes audio that lasts longer with a longer input and shorter at a higher speed', async () => {
    const { key } = await gateway.createAccountWithKey();
    const short = 'Hello there, this is a short sentence.';
    const long = `${short} ${short} ${short} ${short}`;
    const base = await speak(key, { model: 'tts-1', input: short, voice: 'alloy', response_format: 'wav' }, 'short.wav');
    const longer = await speak(key, { model: 'tts-1', input: long, voice: 'alloy', response_format: 'wav' }, 'long.wav');
    const faster = await speak(key, { model: 'tts-1', input: long, voice: 'alloy', response_format: 'wav', speed: 2 }, 'fast.wav');
    const slower = await speak(key, { model: 'tts-1-hd', input: short, voice: 'alloy', response_format: 'mp3', speed: 0.5 }, 'slow.mp3');
    const baseSeconds = durationOf(base.file, 'wav');
    expect(durationOf(longer.file, 'wav')).toBeGreaterThan(baseSeconds * 3);
    expect(durationOf(faster.file, 'wav')).toBeLessThan(durationOf(longer.file, 'wav') * 0.6);
    expect(durationOf(slower.file, 'mp3')).toBeGreaterThan(baseSeconds * 1.5);
  });

  it('refuses a voice, format, speed or input outside the contract with a 400 naming the field, before anything is held', async () => {
    const { key, accountId } = await gateway.createAccountWithKey({ credits: 1 });
    const cases: [Record<string, unknown>, string][] = [
      [{ voice: 'coral' }, 'voice'],
      [{ voice: 'robot' }, 'voice'],
      [{ response_format: 'ogg' }, 'response_format'],
      [{ speed: 0.2 }, 'speed'],
      [{ speed: 4.01 }, 'speed'],
      [{ input: 'x'.repeat(4097) }, 'input'],
      [{ input: '' }, 'input'],
      [{ stream_format: 'sse' }, 'stream_format'],
    ];
    for (const [change, param] of cases) {
      const error = (await client(key)
        .audio.speech.create({ model: 'tts-1', input: 'hello', voice: 'alloy', ...change } as OpenAI.Audio.SpeechCreateParams)
        .catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;
      expect(error, JSON.stringify(change)).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.code).toBe('INVALID_REQUEST');
      expect(error.param).toBe(param);
    }
    // The unknown model and the model without the endpoint.
    const unknown = (await client(key).audio.speech.create({ model: 'tts-9', input: 'hi', voice: 'alloy' }).catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown.code).toBe('MODEL_NOT_FOUND');
    const wrong = (await client(key).audio.speech.create({ model: 'mock-chat', input: 'hi', voice: 'alloy' }).catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;
    expect(wrong.code).toBe('UNSUPPORTED_ENDPOINT');
    expect(await usageRowsOf(gateway, accountId)).toHaveLength(0);
    expect((await balancesOf(gateway, accountId)).held).toBe(0);
  });

  it('takes 4096 characters (counted as characters, not UTF-16 units) and bills each', async () => {
    const { key } = await gateway.createAccountWithKey();
    // 4096 characters of which some are outside the BMP (two UTF-16 units each).
    const input = `${'🎵'.repeat(96)}${'a b '.repeat(1000)}`;
    expect([...input]).toHaveLength(4096);
    const { bytes, requestId } = await speak(key, { model: 'tts-1', input, voice: 'echo', response_format: 'pcm', speed: 4 }, 'limit.pcm');
    expect(bytes.length).toBeGreaterThan(0);
    const row = await usageRowOf(gateway, requestId);
    expect(row.units).toBe(4096);
    expect(row.cost).toBe(4096 * TTS1_MICRO_PER_CHARACTER);
  });

  it('refuses 402 when the balance cannot cover the characters', async () => {
    const { key, accountId } = await gateway.createAccountWithKey({ credits: 0.0001 });
    // 100 µc cover 6 characters of tts-1, not 44.
    const error = (await client(key)
      .audio.speech.create({ model: 'tts-1', input: 'The quick brown fox jumps over the lazy dog.', voice: 'alloy' })
      .catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(402);
    expect(await usageRowsOf(gateway, accountId)).toHaveLength(0);
  });

  it('stops synthesis when the client leaves mid-file, and charges the characters (the provider did the work)', async () => {
    const { key, accountId } = await gateway.createAccountWithKey();
    // About 20 minutes of audio at speed 0.25: hundreds of chunks, far more than one read.
    const input = 'word '.repeat(800);
    const controller = new AbortController();
    const response = await fetch(`${gateway.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts-1', input, voice: 'onyx', response_format: 'wav', speed: 0.25 }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(first.value!.length).toBeGreaterThan(0);
    controller.abort();
    const row = await usageRowOf(gateway, requestId);
    expect(row).toMatchObject({ status: 200, aborted: true, error_code: 'CLIENT_ABORTED', units: 4000 });
    expect(row.cost).toBe(4000 * TTS1_MICRO_PER_CHARACTER);
    expect((await balancesOf(gateway, accountId)).held).toBe(0);
  });

  it('is refused over plain /trpc HTTP (a byte stream) before anything is held', async () => {
    const { key, accountId } = await gateway.createAccountWithKey();
    const answer = await postJson(`${gateway.url}/trpc/audio.speech`, { model: 'tts-1', input: 'hello', voice: 'alloy' }, bearer(key));
    expect(answer.status).toBe(400);
    expect(answer.text).toContain('/v1/audio/speech');
    expect(await usageRowsOf(gateway, accountId)).toHaveLength(0);
    expect((await balancesOf(gateway, accountId)).held).toBe(0);
  });
});

describe('catalog check', () => {
  it('refuses a model declaring speech or transcription on a provider kind without an adapter, naming model and endpoint', () => {
    const catalog = {
      providers: [{ id: 'claude', kind: 'anthropic' as const, baseUrl: 'https://api.anthropic.com/v1' }],
      models: [
        { id: 'claude-voice', ownedBy: 'x', provider: 'claude', upstreamModel: 'claude', endpoints: ['/v1/audio/speech' as const], pricing: { input: 0, output: 0, character: 0.00001 } },
      ],
    };
    expect(findUnservedEndpoint(catalog)).toMatch(/claude-voice.*\/v1\/audio\/speech.*anthropic/);
    const transcribing = { ...catalog, models: [{ ...catalog.models[0]!, id: 'claude-ears', endpoints: ['/v1/audio/translations' as const] }] };
    expect(findUnservedEndpoint(transcribing)).toMatch(/claude-ears.*\/v1\/audio\/translations/);
    const file = path.join(directory, 'catalog.json');
    writeFileSync(file, JSON.stringify(catalog));
    expect(() => loadCatalogSource(file)).toThrow(CatalogConfigError);
    // The demo catalog's audio models are served by the mock.
    expect(findUnservedEndpoint(DEMO_CATALOG)).toBeUndefined();
  });
});
