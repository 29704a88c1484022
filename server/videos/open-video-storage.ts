import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { VideoConfig } from '../config.js';
import { LocalVideoStorage, type VideoStorage } from './video-storage.js';

/**
 * The configured video storage. Local: `VIDEO_STORAGE_DIR`, else
 * `DATA_DIR/videos`, else (an in-memory database keeps nothing either) a new
 * temporary directory. S3: the client is loaded only when configured.
 */
export async function openVideoStorage(config: VideoConfig, dataDir: string): Promise<VideoStorage> {
  if (config.storage === 's3') {
    const { S3VideoStorage } = await import('./s3-video-storage.js');
    return new S3VideoStorage({
      bucket: config.s3.bucket!,
      region: config.s3.region,
      endpoint: config.s3.endpoint,
      accessKeyId: config.s3.accessKeyId,
      secretAccessKey: config.s3.secretAccessKey,
      forcePathStyle: config.s3.forcePathStyle,
    });
  }
  const directory =
    config.storageDir ?? (dataDir.startsWith('memory://') ? mkdtempSync(path.join(os.tmpdir(), 'umg-videos-')) : path.join(dataDir, 'videos'));
  return LocalVideoStorage.open(directory);
}
