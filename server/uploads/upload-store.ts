/**
 * Files a client uploaded (multipart), kept on disk while their request
 * runs, never whole in memory. An operation names a file by the id the store
 * gave it: a caller cannot make the gateway open a path of its choosing, and
 * ids the store did not issue (or already released) are refused.
 *
 * Every byte of a file counts in the instance's budget from the moment it
 * is written, and a file is given back (bytes and disk) when its request
 * ends, however it ends: see {@link RequestUploads}.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { GatewayError } from '../errors.js';
import { createScratchFolder, removeScratchFolder } from '../scratch-folders.js';

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
  /** Every file held, the ones still being written included (`ready` once whole). */
  private readonly held = new Map<string, { file: UploadedFile; ready: boolean }>();
  /** Bytes of all files currently held, for the instance-wide budget. */
  private bytesHeld = 0;

  private constructor(
    /** This instance's own scratch folder (see scratch-folders.ts). */
    readonly directory: string,
    /** Most bytes held at once across requests (a disk budget): past it, uploads are refused with 503. */
    readonly budgetBytes: number,
  ) {}

  /** A store in a new scratch folder of `parent`, removed by {@link close}. */
  static open(parent: string, budgetBytes: number): UploadStore {
    return new UploadStore(createScratchFolder('uploads', parent), budgetBytes);
  }

  /** The uploads of one new request. */
  forRequest(): RequestUploads {
    return new RequestUploads(this);
  }

  /** A new, empty file held by the store (not readable through {@link get} until {@link markReady}). */
  begin(field: string, filename: string, contentType: string): UploadedFile {
    const id = `upl_${randomBytes(12).toString('hex')}`;
    const file: UploadedFile = { id, field, filename, contentType, size: 0, path: path.join(this.directory, id), head: Buffer.alloc(0) };
    this.held.set(id, { file, ready: false });
    return file;
  }

  /** Counts `bytes` more of a held file in the budget (false when the budget is spent or the file released). */
  grow(file: UploadedFile, bytes: number): boolean {
    if (!this.held.has(file.id) || this.bytesHeld + bytes > this.budgetBytes) return false;
    this.bytesHeld += bytes;
    file.size += bytes;
    return true;
  }

  /** A held file written whole: operations may read it now. */
  markReady(file: UploadedFile): void {
    const entry = this.held.get(file.id);
    if (entry) entry.ready = true;
  }

  /** An upload from bytes in memory (internal callers, tests). */
  async fromBuffer(bytes: Uint8Array, options: { field: string; filename: string; contentType: string }): Promise<UploadedFile> {
    const file = this.begin(options.field, options.filename, options.contentType);
    if (!this.grow(file, bytes.length)) {
      this.held.delete(file.id);
      throw new GatewayError('SERVICE_UNAVAILABLE', 'Too many uploads in progress; retry shortly.', { retryAfter: 5 });
    }
    try {
      await writeFile(file.path, bytes, { mode: 0o600 });
    } catch (error) {
      await this.release([file.id]);
      throw error;
    }
    file.head = Buffer.from(bytes.subarray(0, UPLOAD_HEAD_BYTES));
    this.markReady(file);
    return file;
  }

  /** The file behind an id (400 naming `param` for an id this store does not hold whole). */
  get(id: string, param: string): UploadedFile {
    const entry = this.held.get(id);
    if (!entry?.ready) throw new GatewayError('INVALID_REQUEST', `Invalid value for '${param}': not a file uploaded with this request.`, { param });
    return entry.file;
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
    // Out of the store at once: a request ending meanwhile does not remove it, nor give its bytes back twice.
    this.held.delete(id);
    this.bytesHeld = Math.max(0, this.bytesHeld - file.size);
    try {
      await rename(file.path, destination);
    } catch (error) {
      await rm(file.path, { force: true });
      throw error;
    }
  }

  /** Removes files (whole or not) and gives their bytes back. */
  async release(ids: readonly string[]): Promise<void> {
    await Promise.all(
      ids.map(async (id) => {
        const entry = this.held.get(id);
        if (!entry) return;
        this.held.delete(id);
        this.bytesHeld = Math.max(0, this.bytesHeld - entry.file.size);
        await rm(entry.file.path, { force: true });
      }),
    );
  }

  /** At shutdown: the scratch folder goes, with anything left in it. */
  async close(): Promise<void> {
    this.held.clear();
    this.bytesHeld = 0;
    await removeScratchFolder(this.directory);
  }

  get heldBytes(): number {
    return this.bytesHeld;
  }

  /** Files held, the ones being written included. */
  get count(): number {
    return this.held.size;
  }
}

/**
 * The files one request uploads, from the first byte: {@link end} — called
 * when the request ends, however it ends (answered, failed, the client gone,
 * timed out) and as often as it comes — stops the writers still running,
 * removes every file and gives the bytes back. Nothing can be added after.
 */
export class RequestUploads {
  private readonly files: UploadedFile[] = [];
  private readonly writers = new Set<WriteStream>();
  private readonly ending = new AbortController();
  private ended: Promise<void> | undefined;

  constructor(private readonly store: UploadStore) {}

  /** Aborted once the request's uploads are ended (readers stop on it). */
  get signal(): AbortSignal {
    return this.ending.signal;
  }

  /** A new file and the stream that writes it (owner-only); undefined once ended. */
  create(field: string, filename: string, contentType: string): { file: UploadedFile; output: WriteStream } | undefined {
    if (this.ended) return undefined;
    const file = this.store.begin(field, filename, contentType);
    this.files.push(file);
    const output = createWriteStream(file.path, { mode: 0o600 });
    this.writers.add(output);
    output.once('close', () => this.writers.delete(output));
    return { file, output };
  }

  /** Counts bytes of one of this request's files in the budget (false: the budget is spent, or the uploads ended). */
  grow(file: UploadedFile, bytes: number): boolean {
    return !this.ended && this.store.grow(file, bytes);
  }

  markReady(file: UploadedFile): void {
    if (!this.ended) this.store.markReady(file);
  }

  end(): Promise<void> {
    this.ended ??= (async () => {
      this.ending.abort();
      // A file is removed once its writer has closed it, so that no late open makes it again.
      await Promise.all(
        [...this.writers].map(
          (output) =>
            new Promise<void>((resolve) => {
              output.once('close', () => resolve());
              output.destroy();
            }),
        ),
      );
      await this.store.release(this.files.map((file) => file.id));
    })();
    return this.ended;
  }
}
