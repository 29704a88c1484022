import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../errors.js';
import type { ProviderConnection, UpstreamTransport, VideoJobRef } from '../types.js';
import { fromOpenAIVideo } from '../openai/openai-videos.adapter.js';
import { mockVideosAdapter } from './mock-videos.adapter.js';

const connection: ProviderConnection = { id: 'mock', kind: 'mock', baseUrl: 'mock://' };

function transportWith(signal: AbortSignal): UpstreamTransport {
  return { providerId: 'mock', signal } as UpstreamTransport;
}

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

describe('the mock video adapter', () => {
  const request = { model: 'mock-video', prompt: 'a test', size: '64x36', seconds: 1 };

  it('is in progress until its delay has passed, then completed with the real duration, from its id alone', async () => {
    const signal = new AbortController().signal;
    const slow = await mockVideosAdapter.create(transportWith(signal), connection, request, { idempotencyKey: 'video_x', simulatedDelayMs: 60_000 });
    expect(slow).toMatchObject({ status: 'queued', progress: 0, retryAfterMs: 60_000 });
    const polled = await mockVideosAdapter.retrieve(transportWith(signal), connection, { providerJobId: slow.id, request });
    expect(polled.status).toBe('in_progress');
    expect(polled.retryAfterMs).toBeGreaterThan(0);

    const ready = await mockVideosAdapter.create(transportWith(signal), connection, request, { idempotencyKey: 'video_y', simulatedDelayMs: 0 });
    const job: VideoJobRef = { providerJobId: ready.id, request };
    expect(await mockVideosAdapter.retrieve(transportWith(signal), connection, job)).toMatchObject({ status: 'completed', progress: 100, durationSeconds: 1 });
    const video = await mockVideosAdapter.download(transportWith(signal), connection, job, 'video');
    expect(video.contentType).toBe('video/mp4');
    const bytes = await readAll(video.body);
    expect(bytes.length).toBe(video.contentLength);
    expect(bytes.subarray(4, 8).toString('ascii')).toBe('ftyp');
    const thumbnail = await mockVideosAdapter.download(transportWith(signal), connection, job, 'thumbnail');
    expect(thumbnail.contentType).toBe('image/png');
  });

  it('refuses what it cannot render as a provider 400, and an unknown generation as a 404', async () => {
    const signal = new AbortController().signal;
    const refused = await mockVideosAdapter
      .create(transportWith(signal), connection, { ...request, size: '63x36' }, { idempotencyKey: 'video_z', simulatedDelayMs: 0 })
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UpstreamError);
    expect((refused as UpstreamError).status).toBe(400);
    const unknown = await mockVideosAdapter.retrieve(transportWith(signal), connection, { providerJobId: 'nope', request }).catch((error: unknown) => error);
    expect((unknown as UpstreamError).status).toBe(404);
  });

  it('stops a render when its download is aborted', async () => {
    const controller = new AbortController();
    const job = await mockVideosAdapter.create(transportWith(controller.signal), connection, { ...request, size: '1920x1080', seconds: 20 }, { idempotencyKey: 'v', simulatedDelayMs: 0 });
    const download = mockVideosAdapter.download(transportWith(controller.signal), connection, { providerJobId: job.id, request: { ...request, size: '1920x1080', seconds: 20 } }, 'video');
    controller.abort(new Error('deleted'));
    await expect(download).rejects.toThrow('deleted');
  });
});

describe('an OpenAI video object', () => {
  it('maps status, progress, duration and error', () => {
    expect(fromOpenAIVideo({ id: 'v', status: 'queued', progress: 0 })).toEqual({ id: 'v', status: 'queued', progress: 0 });
    expect(fromOpenAIVideo({ id: 'v', status: 'in_progress', progress: 42.4 })).toEqual({ id: 'v', status: 'in_progress', progress: 42 });
    expect(fromOpenAIVideo({ id: 'v', status: 'completed', progress: 100, seconds: '8' })).toEqual({ id: 'v', status: 'completed', progress: 100, durationSeconds: 8 });
    expect(fromOpenAIVideo({ id: 'v', status: 'failed', error: { code: 'x', message: 'blocked' } })).toEqual({ id: 'v', status: 'failed', error: 'blocked' });
    expect(fromOpenAIVideo({ id: 'v', status: 'cancelled' }).status).toBe('failed');
  });
});
