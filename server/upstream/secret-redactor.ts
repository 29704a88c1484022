/**
 * Provider secrets kept out of every byte a provider sends: the transport
 * hands every answer body (JSON, server-sent events, audio, video, error
 * bodies) through the redactor of the provider it called, so that whatever
 * reads the body afterwards — a pass-through, a bridge, a stored video — only
 * ever sees the secret replaced. A secret cut across two chunks is caught:
 * the end of a chunk that may begin a secret waits for the next chunk.
 *
 * Text answers (JSON, `text/*`, SSE) get `[redacted]`; any other body gets
 * the secret's bytes overwritten with `*`, so its length (and a declared
 * `content-length`, and byte ranges over a stored file) stay right.
 */
import { MIN_SECRET_LENGTH, REDACTED } from '../logger.js';
import type { UpstreamBody } from '../providers/types.js';

// The logger's bounds: shorter values are not treated as secrets (they would blank ordinary words).
export { MIN_SECRET_LENGTH, REDACTED };

const MASK_BYTE = 0x2a; // '*'
const EMPTY = Buffer.alloc(0);

/** How a body is redacted: a marker in text, same-length masking in binary. */
export type RedactionMode = 'text' | 'binary';

/** `text` for JSON, `text/*` and SSE answers (and none declared), `binary` for anything else. */
export function redactionModeOf(contentType: string | undefined): RedactionMode {
  if (!contentType) return 'text';
  const type = contentType.toLowerCase();
  return type.startsWith('text/') || type.includes('json') ? 'text' : 'binary';
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** One provider's secrets, searched in every body it sends. Build once per provider (see {@link redactorOf}). */
export class SecretRedactor {
  private readonly secrets: readonly Buffer[];
  private readonly texts: readonly string[];
  private readonly marker = Buffer.from(REDACTED);
  /** Which byte values occur in some secret. */
  private readonly secretBytes = new Uint8Array(256);

  constructor(secrets: readonly string[]) {
    // Longest first: a secret that contains another is replaced whole.
    this.texts = [...new Set(secrets)].filter((secret) => secret.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
    this.secrets = this.texts.map((secret) => Buffer.from(secret, 'utf8'));
    for (const secret of this.secrets) for (const byte of secret) this.secretBytes[byte] = 1;
  }

  get isEmpty(): boolean {
    return this.secrets.length === 0;
  }

  /** A text with every secret replaced by `[redacted]`. */
  redactText(text: string): string {
    let redacted = text;
    for (const secret of this.texts) if (redacted.includes(secret)) redacted = redacted.split(secret).join(REDACTED);
    return redacted;
  }

  /** The body as its reader will see it: secrets replaced, chunk boundaries otherwise kept. */
  redactBody(body: UpstreamBody, mode: RedactionMode): UpstreamBody {
    if (this.isEmpty) return body;
    const chunks = this.redactChunks(body, mode);
    return { destroy: (error?: Error) => body.destroy(error), [Symbol.asyncIterator]: () => chunks };
  }

  private async *redactChunks(body: AsyncIterable<Uint8Array>, mode: RedactionMode): AsyncGenerator<Uint8Array> {
    let held: Buffer | undefined;
    for await (const chunk of body) {
      const bytes = held ? Buffer.concat([held, chunk]) : asBuffer(chunk);
      const { ready, tail } = this.redactChunk(bytes, mode, false);
      held = tail.length > 0 ? tail : undefined;
      if (ready.length > 0) yield ready;
    }
    if (held) yield this.redactChunk(held, mode, true).ready;
  }

  /**
   * Redacts the secrets that lie whole in `bytes`; unless `final`, the end of
   * `bytes` that may be the start of a secret is answered apart as `tail`,
   * to be put before the next chunk.
   */
  redactChunk(bytes: Buffer, mode: RedactionMode, final: boolean): { ready: Buffer; tail: Buffer } {
    const matches = this.findAll(bytes);
    const searchedTo = matches.length > 0 ? matches[matches.length - 1]!.end : 0;
    const cut = final ? bytes.length : this.partialStart(bytes, searchedTo);
    if (matches.length === 0) return cut === bytes.length ? { ready: bytes, tail: EMPTY } : { ready: bytes.subarray(0, cut), tail: bytes.subarray(cut) };
    const tail = Buffer.from(bytes.subarray(cut));
    if (mode === 'binary') {
      const ready = Buffer.from(bytes.subarray(0, cut));
      for (const match of matches) ready.fill(MASK_BYTE, match.start, match.end);
      return { ready, tail };
    }
    const parts: Buffer[] = [];
    let from = 0;
    for (const match of matches) {
      parts.push(bytes.subarray(from, match.start), this.marker);
      from = match.end;
    }
    parts.push(bytes.subarray(from, cut));
    return { ready: Buffer.concat(parts), tail };
  }

  /** Every whole occurrence, in order, none overlapping (at one place the longest secret wins). */
  private findAll(bytes: Buffer): { start: number; end: number }[] {
    let found: { start: number; end: number }[] | undefined;
    for (const secret of this.secrets) {
      let at = bytes.indexOf(secret);
      while (at !== -1) {
        (found ??= []).push({ start: at, end: at + secret.length });
        at = bytes.indexOf(secret, at + secret.length);
      }
    }
    if (!found) return [];
    found.sort((a, b) => a.start - b.start || b.end - a.end);
    const kept: { start: number; end: number }[] = [];
    for (const match of found) if (kept.length === 0 || match.start >= kept[kept.length - 1]!.end) kept.push(match);
    return kept;
  }

  /** Where the longest end of `bytes` (after `from`) that is the start of a secret begins; `bytes.length` when none is. */
  private partialStart(bytes: Buffer, from: number): number {
    // An end that begins a secret ends in one of its bytes: an SSE frame's last `\n`, or a JSON `}`, never does.
    if (bytes.length === 0 || !this.secretBytes[bytes[bytes.length - 1]!]) return bytes.length;
    let start = bytes.length;
    for (const secret of this.secrets) {
      const first = secret[0]!;
      let at = bytes.indexOf(first, Math.max(from, bytes.length - secret.length + 1));
      while (at !== -1 && at < start) {
        if (bytes.subarray(at).equals(secret.subarray(0, bytes.length - at))) {
          start = at;
          break;
        }
        at = bytes.indexOf(first, at + 1);
      }
    }
    return start;
  }
}
