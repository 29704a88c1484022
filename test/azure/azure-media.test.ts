/**
 * The multipart operations of an Azure OpenAI deployment end to end, through
 * the official `openai` client against a gateway whose catalog points at the
 * Azure OpenAI test server: an image edit and an audio translation, each sent
 * to the deployment URL with the api-version and the `api-key`, re-sent as
 * multipart with the deployment as `model` and the upload byte for byte, the
 * answer relayed, and the usage row billed in the operation's unit.
 * (Generation, speech and transcription are in azure-provider.test.ts.)
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { computeCost } from '../../server/billing/money.js';
import { toMicroPrice, type ModelEntry } from '../../server/catalog/catalog.schema.js';
import { toneWav } from '../audio/audio-fixtures.js';
import { makePng } from '../images/image-e2e.js';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { usageRowOf } from '../support/usage.js';
import { startAzureUpstream, type AzureUpstreamServer } from '../upstreams/azure-upstream.js';
import { parseRecordedMultipart, type RecordedPart } from '../upstreams/openai-audio-upstream.js';
import { upstreamPng } from '../upstreams/openai-media-upstream.js';
import type { RecordedRequest } from '../upstreams/upstream-server.js';

const AZURE_KEY = '0d9c8b7a6f5e4d3c2b1a09f8e7d6c5b4azure';
const API_VERSION = '2025-04-01-preview';
const IMAGE_PRICING: ModelEntry['pricing'] = { input: 0, output: 0, image: 0.04 };
const AUDIO_PRICING: ModelEntry['pricing'] = { input: 0, output: 0, second: 0.0001 };

let azure: AzureUpstreamServer;
let gateway: TestGateway;
let openai: OpenAI;

beforeAll(async () => {
  azure = await startAzureUpstream({ expectedApiKey: AZURE_KEY });
  gateway = await startTestGateway({
    env: { UMG_AZURE_KEY: AZURE_KEY },
    catalog: {
      providers: [{ id: 'azure-east', kind: 'azure', baseUrl: azure.endpoint, apiKey: 'env:UMG_AZURE_KEY', azure: { apiVersion: API_VERSION } }],
      models: [
        { id: 'azure-image', ownedBy: 'e2e', provider: 'azure-east', upstreamModel: 'image-prod', endpoints: ['/v1/images/generations', '/v1/images/edits'], pricing: IMAGE_PRICING },
        { id: 'azure-whisper', ownedBy: 'e2e', provider: 'azure-east', upstreamModel: 'whisper-prod', endpoints: ['/v1/audio/transcriptions', '/v1/audio/translations'], pricing: AUDIO_PRICING },
      ],
    },
  });
  const { key } = await gateway.createAccountWithKey({ credits: 100 });
  openai = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
});

afterAll(async () => {
  await gateway?.close();
  await azure?.close();
});

/** What Azure received during a call. */
async function azureRequestsDuring<T>(call: () => Promise<T>): Promise<{ result: T; requests: RecordedRequest[] }> {
  const before = azure.requests.length;
  const result = await call();
  return { result, requests: azure.requests.slice(before) };
}

/** The text fields of a recorded multipart body, by name. */
function textFields(parts: RecordedPart[]): Record<string, string> {
  return Object.fromEntries(parts.filter((part) => part.filename === undefined).map((part) => [part.name, part.bytes.toString('utf8')]));
}

/** The one Azure request of a call: at the deployment URL, with the api-version, the api-key and a multipart body. */
function expectDeploymentMultipart(requests: RecordedRequest[], deployment: string, operation: string): RecordedPart[] {
  expect(requests).toHaveLength(1);
  const [sent] = requests;
  expect(sent).toMatchObject({ method: 'POST', path: `/openai/deployments/${deployment}${operation}`, query: { 'api-version': API_VERSION } });
  expect(sent!.headers['api-key']).toBe(AZURE_KEY);
  expect(sent!.headers.authorization).toBeUndefined();
  expect(sent!.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
  expect(Number(sent!.headers['content-length'])).toBe(sent!.rawBytes.length);
  return parseRecordedMultipart(sent!);
}

describe('image edits on an Azure deployment', () => {
  it('sends the edit to the deployment as multipart with the api-key, relays the image and bills one image', async () => {
    const picture = makePng(16, 16, { noise: true });
    const { result, requests } = await azureRequestsDuring(async () =>
      openai.images
        .edit({ model: 'azure-image', image: await toFile(picture, 'photo.png', { type: 'image/png' }), prompt: 'add a lighthouse', size: '1024x1024', response_format: 'b64_json' })
        .withResponse(),
    );
    expect(result.data.data).toHaveLength(1);
    expect(result.data.data![0]!.b64_json).toBe(upstreamPng('azure').toString('base64'));

    const parts = expectDeploymentMultipart(requests, 'image-prod', '/images/edits');
    expect(textFields(parts)).toMatchObject({ model: 'image-prod', prompt: 'add a lighthouse', size: '1024x1024', response_format: 'b64_json' });
    const files = parts.filter((part) => part.filename !== undefined);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatchObject({ name: 'image', filename: 'photo.png', contentType: 'image/png' });
    expect(files[0]!.bytes.equals(picture)).toBe(true);

    const row = await usageRowOf(gateway, result.response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ model: 'azure-image', provider: 'azure-east', endpoint: '/v1/images/edits', status: 200, units: 1, error_code: null });
    expect(Number(row.cost)).toBe(computeCost(toMicroPrice(IMAGE_PRICING), { inputTokens: 0, outputTokens: 0, images: 1 }));
    expect(Number(row.cost)).toBe(40_000);
  });
});

describe('audio translations on an Azure deployment', () => {
  it('sends the upload to the deployment as multipart with the api-key, relays the English text and bills its seconds', async () => {
    const audio = toneWav(1.5, 330);
    const { result, requests } = await azureRequestsDuring(async () =>
      openai.audio.translations.create({ model: 'azure-whisper', file: await toFile(audio, 'bonjour.wav', { type: 'audio/wav' }) }).withResponse(),
    );
    expect(result.data).toEqual({ text: `Upstream translate of bonjour.wav. It had ${audio.length} bytes.` });

    const parts = expectDeploymentMultipart(requests, 'whisper-prod', '/audio/translations');
    // The gateway asks for verbose_json whatever the client asked: the duration is what it bills.
    expect(textFields(parts)).toMatchObject({ model: 'whisper-prod', response_format: 'verbose_json' });
    const file = parts.find((part) => part.name === 'file');
    expect(file).toMatchObject({ filename: 'bonjour.wav', contentType: 'audio/wav' });
    expect(file!.bytes.equals(audio)).toBe(true);

    const row = await usageRowOf(gateway, result.response.headers.get('x-request-id')!);
    expect(row).toMatchObject({ model: 'azure-whisper', provider: 'azure-east', endpoint: '/v1/audio/translations', status: 200, units: 1500, error_code: null });
    expect(Number(row.cost)).toBe(computeCost(toMicroPrice(AUDIO_PRICING), { inputTokens: 0, outputTokens: 0, seconds: 1.5 }));
    expect(Number(row.cost)).toBe(150);
  });
});
