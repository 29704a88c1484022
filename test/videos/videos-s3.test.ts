/**
 * A gateway keeping its videos in an S3-compatible bucket (s3rver): the
 * files of a finished video are stored there, served from there (with
 * Range), and removed from there when the video is deleted or its files
 * expire.
 */
import { S3Client, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { sql } from 'kysely';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { bearer } from '../support/http.js';
import { startLocalS3, type LocalS3 } from './s3-server.js';
import { FAST_VIDEO_ENV, probeVideo, videoCatalog, waitForVideoStatus } from './video-support.js';

let s3: LocalS3;
let gateway: TestGateway;
let client: S3Client;

beforeAll(async () => {
  s3 = await startLocalS3();
  gateway = await startTestGateway({
    catalog: videoCatalog(),
    env: {
      ...FAST_VIDEO_ENV,
      VIDEO_STORAGE: 's3',
      S3_ENDPOINT: s3.endpoint,
      S3_BUCKET: s3.bucket,
      S3_REGION: 'us-east-1',
      S3_ACCESS_KEY_ID: s3.accessKeyId,
      S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
      S3_FORCE_PATH_STYLE: 'true',
    },
  });
  client = new S3Client({ endpoint: s3.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } });
});

afterAll(async () => {
  client?.destroy();
  await gateway?.close();
  await s3?.close();
});

async function objectKeys(prefix: string): Promise<string[]> {
  const listed = await client.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
  return (listed.Contents ?? []).map((object) => object.Key!).sort();
}

describe('videos in an S3-compatible bucket', () => {
  it('stores a finished video’s files in the bucket, serves them with Range, and deletes them', async () => {
    expect(gateway.gateway.services.videoStorage.kind).toBe('s3');
    const { key } = await gateway.createAccountWithKey({ credits: 10 });
    const sdk = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
    const created = await sdk.videos.create({ model: 'mock-video', prompt: 'stored in a bucket', size: '320x180' as never, seconds: '1' as never });
    await waitForVideoStatus(gateway, key, created.id, ['completed']);
    expect(await objectKeys(`${created.id}/`)).toEqual([`${created.id}/spritesheet`, `${created.id}/thumbnail`, `${created.id}/video.mp4`]);

    const whole = Buffer.from(await (await sdk.videos.downloadContent(created.id)).arrayBuffer());
    expect(probeVideo(whole)).toMatchObject({ width: 320, height: 180 });
    const part = await fetch(`${gateway.url}/v1/videos/${created.id}/content`, { headers: { ...bearer(key), range: 'bytes=10-19' } });
    expect(part.status).toBe(206);
    expect(part.headers.get('content-range')).toBe(`bytes 10-19/${whole.length}`);
    expect(Buffer.from(await part.arrayBuffer()).equals(whole.subarray(10, 20))).toBe(true);

    await sdk.videos.delete(created.id);
    expect(await objectKeys(`${created.id}/`)).toEqual([]);
  });

  it('deletes an expired video’s files from the bucket, keeps the record with its expiry, and refuses its content', async () => {
    const { key } = await gateway.createAccountWithKey({ credits: 10 });
    const sdk = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: key, maxRetries: 0 });
    const created = await sdk.videos.create({ model: 'mock-video', prompt: 'expires in a bucket', size: '320x180' as never, seconds: '1' as never });
    await waitForVideoStatus(gateway, key, created.id, ['completed']);
    const files = [`${created.id}/spritesheet`, `${created.id}/thumbnail`, `${created.id}/video.mp4`];
    // Not before expiry.
    await gateway.gateway.services.videos.retention.sweep();
    expect(await objectKeys(`${created.id}/`)).toEqual(files);

    await gateway.gateway.services.db.updateTable('videos').set({ expires_at: sql<Date>`now() - interval '1 second'` }).where('id', '=', created.id).execute();
    await gateway.gateway.services.videos.retention.sweep();
    expect(await objectKeys(`${created.id}/`)).toEqual([]);
    const video = await sdk.videos.retrieve(created.id);
    expect(video.status).toBe('completed');
    expect(video.expires_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    const refused = await sdk.videos.downloadContent(created.id).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
    expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe('VIDEO_EXPIRED');
  });
});
