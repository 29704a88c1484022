/**
 * Files a client uploaded (multipart), kept on disk while their request
 * runs, never whole in memory. An operation names a file by the id the store
 * gave it: a caller cannot make the gateway open a path of its choosing, and
 * ids the store did not issue (or already released) are refused.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync, rmSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { GatewayError } from '../errors.js';

/** How many leading bytes of each upload are kept in memory, for format detection. */
export const UPLOAD_HEAD_BYTES = 64 * 1024;

export interface UploadedFile {
  id: string;
  /** The form field it came in (`image`, `image[]`, `mask`, `file`, `input_reference`). */
  field: string;
  filename: string;
  /** As the client declared it; formats are judged by content, never by this. */
  contentType: string;
  size: number;
  /** Where the bytes are (a temporary file, removed when the request ends unless moved). */
  path: string;
  /** The first bytes (at most {@link UPLOAD_HEAD_BYTES}). */
  head: Buffer;
}

/** How a procedure's input names an uploaded file. */
export const uploadIdSchema = z.string().regex(/^upl_[A-Za-z0-9]+$/, 'expected an uploaded file');

export class UploadStore {
  private readonly files = new Map<string, UploadedFile>();
  /** Bytes of all files currently held, for the instance-wide budget. */
  private bytesHeld = 0;

  constructor(
    private readonly directory: string,
    /** Most bytes held at once across requests (a disk budget): past it, uploads are refused with 503. */
    readonly budgetBytes: number,
  ) {
    // Files of an earlier run of this process's directory are leftovers of a crash.
    rmSync(directory, { recursive: true, force: true });
    mkdirSync(directory, { recursive: true, mode: 0o700 });
  }

  /** A path for a new upload (the writer creates it). */
  newPath(): { id: string; path: string } {
    const id = `upl_${randomBytes(12).toString('hex')}`;
    return { id, path: path.join(this.directory, id) };
  }

  /** Reserves room for `bytes` more (false when the budget is spent). */
  reserve(bytes: number): boolean {
    if (this.bytesHeld + bytes > this.budgetBytes) return false;
    this.bytesHeld += bytes;
    return true;
  }

  unreserve(bytes: number): void {
    this.bytesHeld = Math.max(0, this.bytesHeld - bytes);
  }

  /** Registers a written file (its bytes already reserved). */
  add(file: UploadedFile): void {
    this.files.set(file.id, file);
  }

  /** An upload from bytes in memory (internal callers, tests). */
  async fromBuffer(bytes: Uint8Array, options: { field: string; filename: string; contentType: string }): Promise<UploadedFile> {
    if (!this.reserve(bytes.length)) throw new GatewayError('SERVICE_UNAVAILABLE', 'Too many uploads in progress; retry shortly.', { retryAfter: 5 });
    const { id, path: filePath } = this.newPath();
    await writeFile(filePath, bytes, { mode: 0o600 });
    const file: UploadedFile = { id, ...options, size: bytes.length, path: filePath, head: Buffer.from(bytes.subarray(0, UPLOAD_HEAD_BYTES)) };
    this.add(file);
    return file;
  }

  /** The file behind an id (400 naming `param` for an id this store does not hold). */
  get(id: string, param: string): UploadedFile {
    const file = this.files.get(id);
    if (!file) throw new GatewayError('INVALID_REQUEST', `Invalid value for '${param}': not a file uploaded with this request.`, { param });
    return file;
  }

  read(id: string, param: string): NodeJS.ReadableStream {
    return createReadStream(this.get(id, param).path);
  }

  /**
   * Takes a file out of the store to keep it (e.g. a video's reference
   * image): moved to `destination`, no longer removed with its request.
   */
  async adopt(id: string, param: string, destination: string): Promise<void> {
    const file = this.get(id, param);
    await rename(file.path, destination);
    this.files.delete(id);
    this.unreserve(file.size);
  }

  /** Removes files when their request ended. */
  async release(ids: readonly string[]): Promise<void> {
    await Promise.all(
      ids.map(async (id) => {
        const file = this.files.get(id);
        if (!file) return;
        this.files.delete(id);
        this.unreserve(file.size);
        await rm(file.path, { force: true });
      }),
    );
  }

  get heldBytes(): number {
    return this.bytesHeld;
  }

  get count(): number {
    return this.files.size;
  }
}
