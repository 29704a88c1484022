/**
 * The audio operations on OpenAI-format providers (the upstream test server
 * over real HTTP), through the official `openai` SDK: speech bytes streamed
 * through with the provider's content type, the upload forwarded as
 * multipart byte for byte, the client's format rendered from the provider's
 * `verbose_json`, provider errors relayed or mapped, failover, and usage.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CatalogFile } from '../../server/catalog/catalog.schema.js';
import { FAST_UPSTREAM } from '../support/e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer } from '../support/http.js';
import { balancesOf, usageRowOf } from '../support/usage.js';
import { waitFor } from '../support/wait.js';
import { startOpenAIUpstream } from '../upstreams/openai-upstream.js';
import { OPENAI_AUDIO_ROUTES, parseRecordedMultipart, upstreamSpeechBytes } from '../upstreams/openai-audio-upstream.js';
import type { UpstreamServer } from '../upstreams/upstream-server.js';
import { toneWav } from './audio-fixtures.js';

const UPSTREAM_KEY = 'sk-upstream-audio-secret-0123456789';

let primary: UpstreamServer;
let backup: UpstreamServer;
let gateway: TestGateway;

/** Two OpenAI-format providers; `*-failover` models try `flaky` (no retries) first, then `steady`. */
function catalog(): CatalogFile {
  return {
    providers: [
      { id: 'steady', kind: 'openai', baseUrl: primary.url, apiKey: 'env:AUDIO_UPSTREAM_KEY' },
      { id: 'flaky', kind: 'openai', baseUrl: backup.url, apiKey: 'env:AUDIO_UPSTREAM_KEY', maxRetries: 0 },
    ],
    models: [
      { id: 'up-tts', ownedBy: 'openai', provider: 'steady', upstreamModel: 'tts-1', endpoints: ['/v1/audio/speech'], pricing: { input: 0, output: 0, character: 0.00002 } },
      {
        id: 'up-whisper',
        ownedBy: 'openai',
        provider: 'steady',
        upstreamModel: 'whisper-1',
        endpoints: ['/v1/audio/transcriptions', '/v1/audio/translations'],
        pricing: { input: 0, output: 0, second: 0.0001 },
      },
      {
        id: 'up-tts-failover',
        ownedBy: 'openai',
        provider: 'flaky',
        upstreamModel: 'tts-1-hd',
        endpoints: ['/v1/audio/speech'],
        pricing: { input: 0, output: 0, character: 0.00002 },
        deployments: [{ provider: 'steady', upstreamModel: 'tts-1-hd', priority: 1, weight: 1 }],
      },
      {
        id: 'up-whisper-failover',
        ownedBy: 'openai',
        provider: 'flaky',
        upstreamModel: 'whisper-1',
        endpoints: ['/v1/audio/transcriptions'],
        pricing: { input: 0, output: 0, second: 0.0001 },
        deployments: [{ provider: 'steady', upstreamModel: 'whisper-1', priority: 1, weight: 1 }],
      },
    ],
  };
}

beforeAll(async () => {
  primary = await startOpenAIUpstream({ routes: OPENAI_AUDIO_ROUTES, expectedApiKey: UPSTREAM_KEY });
  backup = await startOpenAIUpstream({ routes: OPENAI_AUDIO_ROUTES, expectedApiKey: UPSTREAM_KEY });
  gateway = await startTestGateway({ catalog: catalog(), env: { AUDIO_UPSTREAM_KEY: UPSTREAM_KEY }, config: { upstream: { ...FAST_UPSTREAM, maxRetries: 0 } } });
});

afterAll(async () => {
  await gateway?.close();
  await primary?.close();
  await backup?.close();
});

beforeEach(() => {
  primary.reset();
  backup.reset();
});

function client(key: string): OpenAI {
  return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
}

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

/** up-tts: 0.00002 credits = 20 micro-credits per character. */
const MICRO_PER_CHARACTER = 20;

describe('speech on an OpenAI-format provider', () => {
  it('passes the provider audio through byte for byte with its content type, the body sent with the upstream model', async () => {
    const { key } = await gateway.createAccountWithKey();
    const input = 'Pass these bytes along unchanged.';
    for (const [format, contentType] of [
      ['opus', 'audio/opus'],
      ['wav', 'audio/wav'],
      ['mp3', 'audio/mpeg'],
    ] as const) {
      const response = await client(key).audio.speech.create({ model: 'up-tts', input, voice: 'shimmer', response_format: format, speed: 1.5 });
      expect(response.headers.get('content-type')).toBe(contentType);
      expect(Buffer.from(await response.arrayBuffer()).equals(upstreamSpeechBytes(input, format))).toBe(true);
      const row = await usageRowOf(gateway, response.headers.get('x-request-id')!);
      expect(row).toMatchObject({ provider: 'steady', status: 200, units: input.length, cost: input.length * MICRO_PER_CHARACTER });
    }
    expect(primary.requests.map((request) => request.body)).toEqual(
      ['opus', 'wav', 'mp3'].map((format) => ({ model: 'tts-1', input, voice: 'shimmer', response_format: format, speed: 1.5 })),
    );
    expect(primary.requests[0]!.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
  });

  it('streams the audio as it arrives: a provider cut off mid-file reaches the client as a broken body, not a whole one, and is not charged', async () => {
    const { key, accountId } = await gateway.createAccountWithKey();
    const input = 'This answer will be cut in half by the provider.';
    primary.script({ kind: 'reset-during-stream', afterChunks: 0, path: '/v1/audio/speech' });
    const response = await fetch(`${gateway.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'up-tts', input, voice: 'alloy', response_format: 'wav' }),
    });
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id')!;
    const reader = response.body!.getReader();
    const received: Uint8Array[] = [];
    const failure = await (async () => {
      try {
        while (true) {
          const step = await reader.read();
          if (step.done) return undefined;
          received.push(step.value);
        }
      } catch (error) {
        return error;
      }
    })();
    // The half the provider sent went through before the cut, and the cut is an error.
    expect(failure).toBeInstanceOf(Error);
    const half = upstreamSpeechBytes(input, 'wav').subarray(0, Math.floor(upstreamSpeechBytes(input, 'wav').length / 2));
    expect(Buffer.concat(received).equals(half)).toBe(true);
    const row = await usageRowOf(gateway, requestId);
    expect(row).toMatchObject({ status: 502, error_code: 'UPSTREAM_ERROR', aborted: false, cost: 0 });
    expect((await balancesOf(gateway, accountId)).held).toBe(0);
  });

  it('answers as soon as the provider does, and a client leaving mid-file stops the upstream call (characters charged)', async () => {
    const { key } = await gateway.createAccountWithKey();
    // Headers at once, the body a long while later.
    primary.script({ kind: 'stall', afterChunks: 0, ms: 60_000, path: '/v1/audio/speech' });
    const controller = new AbortController();
    const response = await fetch(`${gateway.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'up-tts', input: 'slow words', voice: 'alloy' }),
      signal: controller.signal,
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('audio/mpeg');
    controller.abort();
    await primary.waitForAborted(1);
    const row = await usageRowOf(gateway, response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ status: 200, aborted: true, units: 10, cost: 10 * MICRO_PER_CHARACTER });
  });

  it('relays a provider 4xx with its status and message, maps a 5xx to 502, and fails over to the next deployment', async () => {
    const { key, accountId } = await gateway.createAccountWithKey();
    primary.script({ kind: 'status', status: 400, message: 'Voice not available for this model.', param: 'voice', path: '/v1/audio/speech' });
    const relayed = await apiError(client(key).audio.speech.create({ model: 'up-tts', input: 'hello', voice: 'alloy' }));
    expect(relayed.status).toBe(400);
    expect(relayed.message).toContain('Voice not available for this model.');
    expect(relayed.param).toBe('voice');

    primary.script({ kind: 'status', status: 500, message: 'boom', path: '/v1/audio/speech' });
    const failed = await apiError(client(key).audio.speech.create({ model: 'up-tts', input: 'hello', voice: 'alloy' }));
    expect(failed.status).toBe(502);
    expect(failed.code).toBe('UPSTREAM_ERROR');
    expect(JSON.stringify(failed.error)).not.toContain(UPSTREAM_KEY);

    backup.script({ kind: 'status', status: 503, message: 'overloaded', path: '/v1/audio/speech' });
    const response = await client(key).audio.speech.create({ model: 'up-tts-failover', input: 'fall over', voice: 'nova', response_format: 'flac' });
    expect(Buffer.from(await response.arrayBuffer()).equals(upstreamSpeechBytes('fall over', 'flac'))).toBe(true);
    expect(backup.requests).toHaveLength(1);
    expect(primary.requests.at(-1)!.body).toMatchObject({ model: 'tts-1-hd', input: 'fall over' });
    const row = await usageRowOf(gateway, response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ provider: 'steady', status: 200, cost: 9 * MICRO_PER_CHARACTER });
    await waitFor(async () => (await balancesOf(gateway, accountId)).held === 0, { message: 'every hold released' });
  });
});

describe('transcription and translation on an OpenAI-format provider', () => {
  it('forwards the upload intact as multipart, asks for verbose_json, and renders each of the five formats from it', async () => {
    const { key } = await gateway.createAccountWithKey();
    const audio = toneWav(2, 523);
    const transcriptions = client(key).audio.transcriptions;
    const expected = `Upstream transcribe of clip.wav. It had ${audio.length} bytes.`;

    const { data: verbose, response } = await transcriptions
      .create({ model: 'up-whisper', file: await toFile(audio, 'clip.wav', { type: 'audio/wav' }), response_format: 'verbose_json', language: 'de', prompt: 'Ein Ton.', temperature: 0.3 })
      .withResponse();
    const recorded = primary.requests.at(-1)!;
    expect(recorded.path).toBe('/v1/audio/transcriptions');
    expect(recorded.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(Number(recorded.headers['content-length'])).toBe(recorded.rawBytes.length);
    const parts = parseRecordedMultipart(recorded);
    const file = parts.find((part) => part.name === 'file')!;
    expect(file.filename).toBe('clip.wav');
    expect(file.contentType).toBe('audio/wav');
    expect(file.bytes.equals(audio)).toBe(true);
    const fields = Object.fromEntries(parts.filter((part) => part.filename === undefined).map((part) => [part.name, part.bytes.toString('utf8')]));
    expect(fields).toEqual({ model: 'whisper-1', response_format: 'verbose_json', language: 'de', prompt: 'Ein Ton.', temperature: '0.3' });
    // verbose_json is the provider's own answer.
    expect(verbose).toEqual({
      task: 'transcribe',
      language: 'german',
      duration: 2,
      text: expected,
      segments: [expect.objectContaining({ id: 0, start: 0, end: 1, text: ' Upstream transcribe of clip.wav.' }), expect.objectContaining({ id: 1, start: 1, end: 2 })],
    });
    const row = await usageRowOf(gateway, response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ endpoint: '/v1/audio/transcriptions', provider: 'steady', status: 200, units: 2000, cost: 200 });

    expect(await transcriptions.create({ model: 'up-whisper', file: await toFile(audio, 'clip.wav') })).toEqual({ text: expected });
    expect(await transcriptions.create({ model: 'up-whisper', file: await toFile(audio, 'clip.wav'), response_format: 'text' })).toBe(`${expected}\n`);
    expect(await transcriptions.create({ model: 'up-whisper', file: await toFile(audio, 'clip.wav'), response_format: 'srt' })).toBe(
      `1\n00:00:00,000 --> 00:00:01,000\nUpstream transcribe of clip.wav.\n\n2\n00:00:01,000 --> 00:00:02,000\nIt had ${audio.length} bytes.\n\n`,
    );
    expect(await transcriptions.create({ model: 'up-whisper', file: await toFile(audio, 'clip.wav'), response_format: 'vtt' })).toBe(
      `WEBVTT\n\n00:00:00.000 --> 00:00:01.000\nUpstream transcribe of clip.wav.\n\n00:00:01.000 --> 00:00:02.000\nIt had ${audio.length} bytes.\n\n`,
    );
    // Whatever the client asked, the provider was asked for verbose_json.
    for (const request of primary.requests) {
      expect(parseRecordedMultipart(request).find((part) => part.name === 'response_format')!.bytes.toString()).toBe('verbose_json');
    }
  });

  it('translates through /audio/translations in every format', async () => {
    const { key } = await gateway.createAccountWithKey();
    const audio = toneWav(1, 700);
    const translations = client(key).audio.translations;
    const expected = `Upstream translate of fr.wav. It had ${audio.length} bytes.`;
    expect(await translations.create({ model: 'up-whisper', file: await toFile(audio, 'fr.wav') })).toEqual({ text: expected });
    expect(await translations.create({ model: 'up-whisper', file: await toFile(audio, 'fr.wav'), response_format: 'verbose_json' })).toMatchObject({
      task: 'translate',
      language: 'english',
      duration: 1,
      text: expected,
    });
    expect(await translations.create({ model: 'up-whisper', file: await toFile(audio, 'fr.wav'), response_format: 'text' })).toBe(`${expected}\n`);
    expect(await translations.create({ model: 'up-whisper', file: await toFile(audio, 'fr.wav'), response_format: 'srt' })).toMatch(/^1\n00:00:00,000 --> 00:00:00,500\n/);
    expect(await translations.create({ model: 'up-whisper', file: await toFile(audio, 'fr.wav'), response_format: 'vtt' })).toMatch(/^WEBVTT\n\n00:00:00\.000 --> 00:00:00\.500\n/);
    expect(primary.requests.map((request) => request.path)).toEqual(Array(5).fill('/v1/audio/translations'));
    expect(parseRecordedMultipart(primary.requests[0]!).find((part) => part.name === 'file')!.bytes.equals(audio)).toBe(true);
  });

  it('relays a provider 4xx, maps a 5xx to 502 without charging, and fails over with the upload intact', async () => {
    const { key, accountId } = await gateway.createAccountWithKey();
    const audio = toneWav(1.5, 250);
    primary.script({ kind: 'status', status: 400, message: 'Audio file might be corrupted or unsupported', param: 'file', path: '/v1/audio/transcriptions' });
    const relayed = await apiError(client(key).audio.transcriptions.create({ model: 'up-whisper', file: await toFile(audio, 'a.wav') }));
    expect(relayed.status).toBe(400);
    expect(relayed.message).toContain('Audio file might be corrupted or unsupported');
    expect(relayed.param).toBe('file');

    primary.script({ kind: 'status', status: 502, message: 'bad gateway upstream', path: '/v1/audio/transcriptions' });
    const failed = await apiError(client(key).audio.transcriptions.create({ model: 'up-whisper', file: await toFile(audio, 'a.wav') }));
    expect(failed.status).toBe(502);
    expect(failed.code).toBe('UPSTREAM_ERROR');

    backup.script({ kind: 'reset-before', path: '/v1/audio/transcriptions' });
    const { data, response } = await client(key)
      .audio.transcriptions.create({ model: 'up-whisper-failover', file: await toFile(audio, 'b.wav'), response_format: 'verbose_json' })
      .withResponse();
    expect(data.duration).toBe(1.5);
    expect(backup.requests).toHaveLength(1);
    expect(parseRecordedMultipart(backup.requests[0]!).find((part) => part.name === 'file')!.bytes.equals(audio)).toBe(true);
    expect(parseRecordedMultipart(primary.requests.at(-1)!).find((part) => part.name === 'file')!.bytes.equals(audio)).toBe(true);
    const row = await usageRowOf(gateway, response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ provider: 'steady', status: 200, units: 1500, cost: 150 });
    const balances = await balancesOf(gateway, accountId);
    expect(balances.current).toBe(100_000_000 - 150);
    expect(balances.held).toBe(0);
  });
});
