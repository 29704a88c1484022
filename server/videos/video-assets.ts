/**
 * A finished video's files on their way from the provider into the gateway's
 * storage: each download is spooled to a private file with a size bound (the
 * provider's announced length is checked first), then put in storage under
 * the video's key for that variant.
 */
import { randomBytes } from 'node:crypto';
import { open, rm } from 'node:fs/promises';
import path from 'node:path';
import type { VideoAssetRecord } from '../../db/schema.js';
import type { ResolvedDeployment } from '../catalog/catalog.js';
import { GatewayError, UpstreamError } from '../errors.js';
import type { UpstreamTransport, VideoJobRef, VideosAdapter, VideoVariant } from '../providers/types.js';
import { videoAssetKey } from './video-object.js';
import type { VideoStorage } from './video-storage.js';

/** One file of a generation to copy. */
export interface VideoAssetSource {
  adapter: VideosAdapter;
  transport: UpstreamTransport;
  deployment: ResolvedDeployment;
  jobRef: VideoJobRef;
  videoId: string;
  variant: VideoVariant;
  signal: AbortSignal;
}

/** Writes a download to a file, at most `limit` bytes; the bytes written. */
async function spoolToFile(body: AsyncIterable<Uint8Array>, filePath: string, limit: number, signal: AbortSignal, providerId: string): Promise<number> {
  const handle = await open(filePath, 'w', 0o600);
  let size = 0;
  try {
    for await (const chunk of body) {
      signal.throwIfAborted();
      size += chunk.length;
      if (size > limit) throw new UpstreamError(`the provider's file is larger than ${limit} bytes`, { status: 502, provider: providerId, retryable: false });
      await handle.write(chunk);
    }
  } finally {
    await handle.close();
  }
  return size;
}

/** Copies one file of a generation into storage, through a work file in `workDirectory` of at most `maxBytes`. */
export async function copyVideoAsset(storage: VideoStorage, source: VideoAssetSource, workDirectory: string, maxBytes: number): Promise<VideoAssetRecord> {
  const { adapter, transport, deployment, jobRef, videoId, variant, signal } = source;
  const download = await adapter.download(transport, deployment.provider, jobRef, variant);
  const file = path.join(workDirectory, `${videoId}-${variant}-${randomBytes(6).toString('hex')}`);
  try {
    if (download.contentLength !== undefined && download.contentLength > maxBytes) {
      throw new UpstreamError(`the provider's ${variant} is larger than ${maxBytes} bytes`, { status: 502, provider: deployment.provider.id, retryable: false });
    }
    const size = await spoolToFile(download.body, file, maxBytes, signal, deployment.provider.id);
    const key = videoAssetKey(videoId, variant);
    await storage.put(key, { path: file, contentType: download.contentType });
    return { key, contentType: download.contentType, size };
  } finally {
    await rm(file, { force: true });
  }
}

/** Deletes stored files, best effort. */
export async function deleteVideoAssets(storage: VideoStorage, assets: readonly (VideoAssetRecord | undefined)[]): Promise<void> {
  for (const asset of assets) if (asset) await storage.delete(asset.key).catch(() => undefined);
}

/** The bytes of a stored file (a video's input reference). */
export async function* readStoredAsset(storage: VideoStorage, key: string): AsyncGenerator<Uint8Array> {
  const stored = await storage.get(key);
  if (!stored) throw new GatewayError('INTERNAL_ERROR', 'The input reference of this video is missing from storage.');
  yield* stored.body;
}
