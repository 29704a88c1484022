import { randomBytes } from 'node:crypto';
import type { Video as VideoRow } from '../../db/schema.js';
import type { Video, VideoStatus } from '../providers/openai/openai-videos.wire.js';
import type { VideoVariant } from '../providers/types.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** `video_` + 32 random base62 characters (~190 bits): ids cannot be guessed. */
export function newVideoId(): string {
  // 248 = 62 × 4: bytes from 248 up are dropped, so every character is equally likely.
  let id = '';
  while (id.length < 32) {
    for (const byte of randomBytes(48)) {
      if (byte < 248 && id.length < 32) id += BASE62[byte % 62];
    }
  }
  return `video_${id}`;
}

/** Where a video's files are kept in the video storage. */
export function videoAssetKey(videoId: string, variant: VideoVariant | 'input_reference'): string {
  return `${videoId}/${variant === 'video' ? 'video.mp4' : variant}`;
}

function unixSeconds(date: Date | string | null): number | null {
  return date === null ? null : Math.floor(new Date(date).getTime() / 1000);
}

/** A stored video as the API shows it (SPEC "Video", with the SDK's extra fields). */
export function toPublicVideo(row: VideoRow): Video {
  return {
    id: row.id,
    object: 'video',
    status: row.status as VideoStatus,
    model: row.model,
    prompt: row.prompt,
    size: row.size,
    seconds: String(row.seconds),
    duration: row.status === 'completed' ? row.duration : null,
    progress: row.progress,
    created_at: unixSeconds(row.created_at)!,
    completed_at: row.status === 'completed' ? unixSeconds(row.completed_at) : null,
    // When the files are (or were) deleted; a failed video's has no files to download.
    expires_at: row.status === 'completed' ? unixSeconds(row.expires_at) : null,
    error: row.status === 'failed' ? (row.error ?? 'The video generation failed.') : null,
    remixed_from_video_id: null,
  };
}
