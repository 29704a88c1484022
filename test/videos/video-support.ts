/**
 * What the video suites share: job settings that make a test's videos finish
 * in well under a second, a catalog of small video models, and readers of a
 * video's state and of its files.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { CatalogFile } from '../../server/catalog/catalog.schema.js';
import { requireTool } from '../../server/media/media-test-tools.js';
import { bearer } from '../support/http.js';
import type { TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/wait.js';

/** Job settings of the suites: a short mock "generation", frequent polls, a short lease. */
export const FAST_VIDEO_ENV: Record<string, string> = {
  MOCK_VIDEO_DELAY_MS: '200',
  VIDEO_POLL_MIN_MS: '25',
  VIDEO_POLL_MAX_MS: '200',
  VIDEO_WORKER_INTERVAL_MS: '50',
  VIDEO_LEASE_MS: '3000',
};

/** 0.1 credits a second: a 2-second video holds and costs 200,000 µc. */
export const VIDEO_PRICE_PER_SECOND_MICRO = 100_000;

/** The mock video model, small sizes only (fast renders); an OpenAI-format one when an upstream URL is given. */
export function videoCatalog(openaiUrl?: string): CatalogFile {
  return {
    providers: [{ id: 'mock', kind: 'mock' }, ...(openaiUrl ? [{ id: 'openai-up', kind: 'openai' as const, baseUrl: openaiUrl, apiKey: 'env:VIDEO_UPSTREAM_KEY' }] : [])],
    models: [
      {
        id: 'mock-video',
        ownedBy: 'umg',
        provider: 'mock',
        upstreamModel: 'mock-video',
        endpoints: ['/v1/videos'],
        pricing: { input: 0, output: 0, second: 0.1 },
        videos: { sizes: ['320x180', '180x320', '640x360'], seconds: { min: 1, max: 8 } },
      },
      ...(openaiUrl
        ? [
            {
              id: 'sora-test',
              ownedBy: 'umg',
              provider: 'openai-up',
              upstreamModel: 'sora-2',
              endpoints: ['/v1/videos' as const],
              pricing: { input: 0, output: 0, second: 0.1 },
              videos: { sizes: ['1280x720', '720x1280'], seconds: [4, 8, 12] },
            },
          ]
        : []),
    ],
  };
}

export type Json = Record<string, unknown>;

/** GET /v1/videos/{id} over plain HTTP. */
export async function fetchVideo(gateway: TestGateway, key: string, id: string): Promise<{ status: number; body: Json }> {
  const answer = await fetch(`${gateway.url}/v1/videos/${id}`, { headers: bearer(key) });
  return { status: answer.status, body: (await answer.json()) as Json };
}

/** Polls the video until its status is one of `statuses`; its last state. */
export async function waitForVideoStatus(gateway: TestGateway, key: string, id: string, statuses: string[], timeoutMs = 60_000): Promise<Json> {
  let last: Json = {};
  await waitFor(
    async () => {
      last = (await fetchVideo(gateway, key, id)).body;
      return statuses.includes(String(last.status));
    },
    { timeoutMs, intervalMs: 50, message: `video ${id} to be ${statuses.join(' or ')} (last: ${JSON.stringify(last)})` },
  );
  return last;
}

/** Width, height and duration of a video file, as ffprobe reads them. */
export function probeVideo(bytes: Uint8Array): { width: number; height: number; duration: number; codec: string } {
  const ffprobe = requireTool('ffprobe');
  const file = path.join(mkdtempSync(path.join(os.tmpdir(), 'umg-video-probe-')), 'video.mp4');
  writeFileSync(file, bytes);
  const output = execFileSync(ffprobe, ['-v', 'error', '-select_streams', 'v:0', '-show_entries', 'stream=width,height,codec_name:format=duration', '-of', 'json', file], {
    encoding: 'utf8',
  });
  const probe = JSON.parse(output) as { streams: { width: number; height: number; codec_name: string }[]; format: { duration: string } };
  return { width: probe.streams[0]!.width, height: probe.streams[0]!.height, duration: Number(probe.format.duration), codec: probe.streams[0]!.codec_name };
}

/** A small PNG (1×1, red). */
export const TINY_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC', 'base64');
