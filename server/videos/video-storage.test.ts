/**
 * The video storage contract, on both backends: a local directory (owner-only
 * files) and an S3-compatible bucket (s3rver, a local server from the npm
 * registry).
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalS3, type LocalS3 } from '../../test/videos/s3-server.js';
import { S3VideoStorage } from './s3-video-storage.js';
import { assertStorageKey, LocalVideoStorage, type VideoStorage } from './video-storage.js';

let dir: string;
let s3: LocalS3;
let source: string;
const bytes = Buffer.from(Array.from({ length: 5000 }, (_, index) => index % 251));

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'umg-video-storage-test-'));
  source = path.join(dir, 'source.bin');
  writeFileSync(source, bytes);
  s3 = await startLocalS3();
});

afterAll(async () => {
  await s3?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

const backends: Array<[string, () => Promise<VideoStorage>]> = [
  ['a local directory', () => LocalVideoStorage.open(path.join(dir, 'local'))],
  [
    'an S3-compatible bucket',
    async () =>
      new S3VideoStorage({ bucket: s3.bucket, region: 'us-east-1', endpoint: s3.endpoint, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, forcePathStyle: true }),
  ],
];

describe.each(backends)('video storage in %s', (_name, open) => {
  it('stores, reads whole and by range, tells what exists, and deletes for good', async () => {
    const storage = await open();
    try {
      const key = 'video_abc/video.mp4';
      expect(await storage.exists(key)).toBe(false);
      expect(await storage.get(key)).toBeUndefined();
      await storage.put(key, { path: source, contentType: 'video/mp4' });
      expect(await storage.exists(key)).toBe(true);
      const whole = await storage.get(key);
      expect(whole?.size).toBe(bytes.length);
      expect((await readAll(whole!.body)).equals(bytes)).toBe(true);
      const part = await storage.get(key, { start: 1000, end: 1999 });
      expect(part?.size).toBe(bytes.length);
      expect((await readAll(part!.body)).equals(bytes.subarray(1000, 2000))).toBe(true);
      // A put replaces what was there.
      const other = path.join(dir, 'other.bin');
      writeFileSync(other, 'replaced');
      await storage.put(key, { path: other, contentType: 'video/mp4' });
      expect((await readAll((await storage.get(key))!.body)).toString()).toBe('replaced');
      await storage.delete(key);
      expect(await storage.exists(key)).toBe(false);
      expect(await storage.get(key)).toBeUndefined();
      // Deleting what is not there is not an error.
      await storage.delete(key);
    } finally {
      await storage.close();
    }
  });

  it('refuses keys that could reach outside the store', async () => {
    const storage = await open();
    try {
      for (const key of ['../escape', 'video_a/../../x', '/absolute', 'video_a//x', 'video_a/.', '']) {
        await expect(storage.put(key, { path: source, contentType: 'video/mp4' }), key).rejects.toThrow(/not a storage key/);
      }
    } finally {
      await storage.close();
    }
  });
});

describe('the local video storage', () => {
  it('keeps its folders 0700 and its files 0600, and removes a video’s folder with its last file', async () => {
    const root = path.join(dir, 'modes');
    const storage = await LocalVideoStorage.open(root);
    await storage.put('video_modes/thumbnail', { path: source, contentType: 'image/png' });
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(root, 'video_modes')).mode & 0o777).toBe(0o700);
    expect(statSync(path.join(root, 'video_modes', 'thumbnail')).mode & 0o777).toBe(0o600);
    await storage.delete('video_modes/thumbnail');
    expect(() => statSync(path.join(root, 'video_modes'))).toThrow();
  });

  it('accepts the keys the gateway makes', () => {
    for (const key of ['video_Ab0/video.mp4', 'video_Ab0/thumbnail', 'video_Ab0/input_reference']) expect(() => assertStorageKey(key)).not.toThrow();
  });
});
