/**
 * Where finished videos (and their thumbnails, spritesheets and input
 * references) are kept: the gateway's own copy, so a video outlives the
 * provider deleting its files. A local directory by default; an
 * S3-compatible bucket when several instances share the videos
 * (s3-video-storage.ts).
 */
import { createReadStream } from 'node:fs';
import { chmod, copyFile, mkdir, rename, rm, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';

/** Bytes `start` to `end` of an object, both included. */
export interface ByteRange {
  start: number;
  end: number;
}

/** An object read from storage. */
export interface StoredObject {
  /** The bytes asked for (the whole object, or the range). */
  body: AsyncIterable<Uint8Array>;
  /** Size of the whole object, bytes. */
  size: number;
}

/** A file to store, already on local disk. */
export interface FileToStore {
  path: string;
  contentType: string;
}

/**
 * A key–value store of files. Keys are `<video id>/<name>`: letters, digits,
 * `_`, `-` and `.`, in segments separated by `/`.
 */
export interface VideoStorage {
  readonly kind: 'local' | 's3';
  /** Stores a file under `key`, replacing what was there; readers never see a partly written object. */
  put(key: string, file: FileToStore): Promise<void>;
  /** The object (or a range of it), undefined when there is none. */
  get(key: string, range?: ByteRange): Promise<StoredObject | undefined>;
  exists(key: string): Promise<boolean>;
  /** Removes the object for good; a key with nothing stored is not an error. */
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}

const KEY_PATTERN = /^[A-Za-z0-9_-]+(?:\/[A-Za-z0-9_-][A-Za-z0-9_.-]*)*$/;

/** Refuses keys that could name anything outside the store (`..`, absolute paths). */
export function assertStorageKey(key: string): void {
  if (!KEY_PATTERN.test(key) || key.split('/').some((segment) => segment === '..' || segment === '.')) {
    throw new Error(`not a storage key: ${JSON.stringify(key)}`);
  }
}

/**
 * Files under one directory, readable by the gateway's user only (folders
 * 0700, files 0600). A put writes a temporary file beside the target and
 * renames it into place, so a reader sees the old file or the new one.
 */
export class LocalVideoStorage implements VideoStorage {
  readonly kind = 'local' as const;

  private constructor(readonly directory: string) {}

  static async open(directory: string): Promise<LocalVideoStorage> {
    await mkdir(directory, { recursive: true, mode: 0o700 });
    await chmod(directory, 0o700);
    return new LocalVideoStorage(directory);
  }

  private pathOf(key: string): string {
    assertStorageKey(key);
    return path.join(this.directory, ...key.split('/'));
  }

  async put(key: string, file: FileToStore): Promise<void> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    const temporary = `${target}.tmp-${randomBytes(6).toString('hex')}`;
    try {
      await copyFile(file.path, temporary);
      await chmod(temporary, 0o600);
      await rename(temporary, target);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  async get(key: string, range?: ByteRange): Promise<StoredObject | undefined> {
    const filePath = this.pathOf(key);
    let size: number;
    try {
      size = (await stat(filePath)).size;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const body = createReadStream(filePath, range ? { start: range.start, end: range.end } : {});
    return { body, size };
  }

  async exists(key: string): Promise<boolean> {
    try {
      await stat(this.pathOf(key));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    const target = this.pathOf(key);
    await rm(target, { force: true });
    // The video's folder goes with its last file.
    if (key.includes('/')) await rmdir(path.dirname(target)).catch(() => undefined);
  }

  async close(): Promise<void> {}
}
