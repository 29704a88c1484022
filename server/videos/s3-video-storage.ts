/**
 * Video storage in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2…), for
 * several instances sharing the videos. The bucket must exist; the gateway
 * only puts, reads and deletes objects in it.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { assertStorageKey, type ByteRange, type FileToStore, type StoredObject, type VideoStorage } from './video-storage.js';

export interface S3StorageOptions {
  bucket: string;
  region: string;
  /** Unset: AWS's own endpoint for the region. */
  endpoint?: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
}

function isMissing(error: unknown): boolean {
  return error instanceof S3ServiceException && (error.name === 'NoSuchKey' || error.name === 'NotFound' || error.$metadata?.httpStatusCode === 404);
}

/** `bytes 0-99/1234` → 1234. */
function totalOf(contentRange: string | undefined): number | undefined {
  const total = contentRange ? Number(contentRange.split('/')[1]) : NaN;
  return Number.isFinite(total) ? total : undefined;
}

export class S3VideoStorage implements VideoStorage {
  readonly kind = 's3' as const;
  private readonly client: S3Client;

  constructor(private readonly options: S3StorageOptions) {
    this.client = new S3Client({
      region: options.region,
      ...(options.endpoint ? { endpoint: options.endpoint } : {}),
      forcePathStyle: options.forcePathStyle,
      // The SDK's default streams uploads as `aws-chunked` with trailing checksums, which many
      // S3-compatible servers store as is (or refuse): outside AWS, checksums only where an operation requires them.
      ...(options.endpoint ? { requestChecksumCalculation: 'WHEN_REQUIRED' as const, responseChecksumValidation: 'WHEN_REQUIRED' as const } : {}),
      // Without explicit keys the SDK's own chain (environment, instance role) is used.
      ...(options.accessKeyId && options.secretAccessKey ? { credentials: { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey } } : {}),
    });
  }

  async put(key: string, file: FileToStore): Promise<void> {
    assertStorageKey(key);
    const { size } = await stat(file.path);
    await this.client.send(
      new PutObjectCommand({ Bucket: this.options.bucket, Key: key, Body: createReadStream(file.path), ContentLength: size, ContentType: file.contentType }),
    );
  }

  async get(key: string, range?: ByteRange): Promise<StoredObject | undefined> {
    assertStorageKey(key);
    try {
      const answer = await this.client.send(
        new GetObjectCommand({ Bucket: this.options.bucket, Key: key, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
      );
      const size = totalOf(answer.ContentRange) ?? answer.ContentLength ?? 0;
      return { body: answer.Body as Readable, size };
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async exists(key: string): Promise<boolean> {
    assertStorageKey(key);
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: key }));
      return true;
    } catch (error) {
      if (isMissing(error)) return false;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    assertStorageKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.options.bucket, Key: key }));
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
