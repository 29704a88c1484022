/**
 * The life of a multipart upload, through the real server on raw sockets:
 * however a request ends — answered, refused while read, refused after,
 * the client resetting mid-body, closing after the whole body or in the
 * middle of it, a body that stalls, a chunked body past the limit — its
 * files leave the upload folder, its bytes go back to the budget, and the
 * request ends. The budget is small on purpose: one upload left behind
 * would make the next valid one a 503.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway.js';
import { waitFor } from '../support/wait.js';
import { toneWav } from '../audio/audio-fixtures.js';

const BUDGET = 1024 * 1024;
const LIMIT = 900 * 1024;
/** What an interrupted upload holds before it is cut: what is left of the budget is less than a valid upload. */
const HELD = 800 * 1024;
/** 8 s of tone, 256,044 bytes: more than BUDGET - HELD. */
const VALID_AUDIO = toneWav(8);
const BOUNDARY = 'lifecycle-boundary-7f3a';

let gateway: TestGateway;
let key: string;
let uploadDir: string;
let port: number;

beforeAll(async () => {
  uploadDir = mkdtempSync(path.join(os.tmpdir(), 'umg-upload-lifecycle-'));
  // A stall is cut at 3 s: long enough that a loaded machine's pauses in a valid upload are not one.
  gateway = await startTestGateway({
    env: { UPLOAD_DIR: uploadDir, UPLOAD_BUDGET_BYTES: String(BUDGET), UPLOAD_LIMIT_BYTES: String(LIMIT), BODY_IDLE_TIMEOUT_MS: '3000' },
  });
  ({ key } = await gateway.createAccountWithKey());
  port = Number(new URL(gateway.url).port);
});

afterAll(async () => {
  await gateway?.close();
  if (uploadDir) rmSync(uploadDir, { recursive: true, force: true });
});

function part(name: string, value: string): Buffer {
  return Buffer.from(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`);
}

/** The opening of a file part; its bytes and `\r\n` follow. */
function fileHead(name: string, filename: string): Buffer {
  return Buffer.from(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="${name}"; filename="${filename}"\r\ncontent-type: audio/wav\r\n\r\n`);
}

const CLOSING = Buffer.from(`--${BOUNDARY}--\r\n`);

/** A whole transcription form around `audio`, with extra text fields. */
function transcriptionForm(audio: Buffer, fields: Record<string, string> = {}): Buffer {
  return Buffer.concat([part('model', 'mock-whisper'), ...Object.entries(fields).map(([name, value]) => part(name, value)), fileHead('file', 'tone.wav'), audio, Buffer.from('\r\n'), CLOSING]);
}

function requestHead(body: { contentLength: number } | 'chunked'): Buffer {
  const length = body === 'chunked' ? 'transfer-encoding: chunked' : `content-length: ${body.contentLength}`;
  return Buffer.from(
    `POST /v1/audio/transcriptions HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${key}\r\ncontent-type: multipart/form-data; boundary=${BOUNDARY}\r\n${length}\r\n\r\n`,
  );
}

function chunk(bytes: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`), bytes, Buffer.from('\r\n')]);
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

interface RawExchange {
  socket: net.Socket;
  /** The answer, once whole; rejected when the connection ends without one. */
  answer: Promise<RawAnswer>;
  /** Resolved when the connection has closed. */
  closed: Promise<void>;
}

/** A raw connection to the gateway; what it is sent is up to the test. */
async function connect(): Promise<RawExchange> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  let received = Buffer.alloc(0);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  const answer = new Promise<RawAnswer>((resolve, reject) => {
    const parse = (): RawAnswer | undefined => {
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return undefined;
      const [statusLine, ...lines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      const length = Number(headers['content-length'] ?? NaN);
      if (!Number.isFinite(length) || received.length < end + 4 + length) return undefined;
      return { status: Number(statusLine!.split(' ')[1]), headers, body: received.subarray(end + 4, end + 4 + length).toString('utf8') };
    };
    socket.on('data', (data: Buffer) => {
      received = Buffer.concat([received, data]);
      const parsed = parse();
      if (parsed) resolve(parsed);
    });
    // A reset after the answer (the rest of a body refused) is no failure of the exchange.
    socket.on('error', () => undefined);
    socket.once('close', () => reject(new Error(`the connection closed without a whole answer: ${received.toString('latin1').slice(0, 200)}`)));
  });
  answer.catch(() => undefined);
  return { socket, answer, closed };
}

function write(socket: net.Socket, bytes: Buffer): Promise<void> {
  return new Promise((resolve, reject) => socket.write(bytes, (error) => (error ? reject(error) : resolve())));
}

function codeOf(answer: RawAnswer): unknown {
  return (JSON.parse(answer.body) as { error?: { code?: unknown } }).error?.code;
}

function uploadsOf() {
  return gateway.gateway.services.uploads;
}

/** The gateway holds at least `bytes` of upload (the interrupted request is under way, on disk). */
async function untilHeld(bytes: number): Promise<void> {
  await waitFor(() => uploadsOf().heldBytes >= bytes, { message: `${bytes} upload bytes to be held` });
}

/**
 * After a request ended however it did: it has ended (no request in
 * flight), no file of it is left in UPLOAD_DIR, the budget is whole, and a
 * valid upload that needs more than what an upload left behind would leave
 * is served.
 */
async function expectReleased(): Promise<void> {
  const store = uploadsOf();
  await waitFor(() => gateway.gateway.requestsInFlight() === 0, { message: 'the request to end' });
  await waitFor(() => store.count === 0 && store.heldBytes === 0 && readdirSync(store.directory).length === 0, { message: 'the uploads to be removed and their bytes given back' });
  // The instance's own folder is the only thing in UPLOAD_DIR.
  expect(readdirSync(uploadDir)).toEqual([path.basename(store.directory)]);
  const exchange = await connect();
  const body = transcriptionForm(VALID_AUDIO);
  await write(exchange.socket, Buffer.concat([requestHead({ contentLength: body.length }), body]));
  const answer = await exchange.answer;
  exchange.socket.destroy();
  expect(answer.status, answer.body).toBe(200);
  expect(JSON.parse(answer.body)).toHaveProperty('text');
  await waitFor(() => gateway.gateway.requestsInFlight() === 0 && store.count === 0 && store.heldBytes === 0, { message: 'the valid upload to be released' });
}

describe('an upload is released however its request ends', () => {
  it('answered: a valid upload is transcribed, then nothing of it is left', async () => {
    const exchange = await connect();
    const body = transcriptionForm(VALID_AUDIO);
    await write(exchange.socket, Buffer.concat([requestHead({ contentLength: body.length }), body]));
    const answer = await exchange.answer;
    exchange.socket.destroy();
    expect(answer.status, answer.body).toBe(200);
    await expectReleased();
  });

  it('refused after the body was read (a bad language): 400, and the file is gone', async () => {
    const exchange = await connect();
    const body = transcriptionForm(toneWav(20), { language: 'xx' });
    expect(body.length).toBeGreaterThan(HELD / 2);
    await write(exchange.socket, Buffer.concat([requestHead({ contentLength: body.length }), body]));
    const answer = await exchange.answer;
    exchange.socket.destroy();
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { param: 'language' } });
    await expectReleased();
  });

  it('refused while read (an unexpected file field after the file): 400, and the file written so far is gone', async () => {
    const exchange = await connect();
    const body = Buffer.concat([part('model', 'mock-whisper'), fileHead('file', 'tone.wav'), toneWav(20), Buffer.from('\r\n'), fileHead('other', 'x.wav'), toneWav(1), Buffer.from('\r\n'), CLOSING]);
    await write(exchange.socket, Buffer.concat([requestHead({ contentLength: body.length }), body]));
    const answer = await exchange.answer;
    exchange.socket.destroy();
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { param: 'other' } });
    await expectReleased();
  });

  it('the client resets the connection in the middle of the body', async () => {
    const exchange = await connect();
    const audio = toneWav(28);
    const body = transcriptionForm(audio);
    await write(exchange.socket, Buffer.concat([requestHead({ contentLength: body.length }), body.subarray(0, HELD + 4096)]));
    await untilHeld(HELD);
    exchange.socket.resetAndDestroy();
    await expectReleased();
  });

  it('the client sends the whole body and closes its side before the answer', async () => {
    const exchange = await connect();
    const body = transcriptionForm(toneWav(27));
    expect(body.length).toBeGreaterThan(HELD);
    exchange.socket.end(Buffer.concat([requestHead({ contentLength: body.length }), body]));
    await exchange.closed;
    await expectReleased();
  });

  it('the client closes its side in the middle of the body (half-close)', async () => {
    const exchange = await connect();
    const body = transcriptionForm(toneWav(28));
    await write(exchange.socket, Buffer.concat([requestHead({ contentLength: body.length }), body.subarray(0, HELD + 4096)]));
    await untilHeld(HELD);
    exchange.socket.end();
    await exchange.closed;
    await expectReleased();
  });

  it('a body that stalls is answered 408 at BODY_IDLE_TIMEOUT_MS, and its connection closed', async () => {
    const exchange = await connect();
    const body = transcriptionForm(toneWav(28));
    await write(exchange.socket, Buffer.concat([requestHead({ contentLength: body.length }), body.subarray(0, 200 * 1024)]));
    // Nothing more is sent: REQUEST_TIMEOUT_MS (300 s) is far past this test's budget.
    const answer = await exchange.answer;
    expect(answer.status).toBe(408);
    expect(codeOf(answer)).toBe('REQUEST_TIMEOUT');
    expect(answer.headers.connection).toBe('close');
    await exchange.closed;
    await expectReleased();
  });

  it('a stall right after the headers and four bytes is cut the same way', async () => {
    const exchange = await connect();
    await write(exchange.socket, Buffer.concat([requestHead({ contentLength: 100_000 }), Buffer.from('--li')]));
    const answer = await exchange.answer;
    expect(answer.status).toBe(408);
    await exchange.closed;
    await expectReleased();
  });

  it('a content-length above UPLOAD_LIMIT_BYTES is answered 413 before any body byte is sent', async () => {
    const exchange = await connect();
    // The headers alone: the answer must come without the body.
    await write(exchange.socket, requestHead({ contentLength: LIMIT + 1 }));
    const answer = await exchange.answer;
    exchange.socket.destroy();
    expect(answer.status, answer.body).toBe(413);
    expect(codeOf(answer)).toBe('PAYLOAD_TOO_LARGE');
    expect(uploadsOf().heldBytes).toBe(0);
    await expectReleased();
  });

  it('a chunked body is held to UPLOAD_LIMIT_BYTES on the bytes read: 413', async () => {
    const exchange = await connect();
    await write(exchange.socket, Buffer.concat([requestHead('chunked'), chunk(part('model', 'mock-whisper')), chunk(fileHead('file', 'tone.wav')), chunk(toneWav(1))]));
    // More than the limit, in 64 KiB chunks, until the answer comes (or everything is sent).
    const block = Buffer.alloc(64 * 1024, 0x11);
    let answered = false;
    void exchange.answer.then(() => (answered = true), () => (answered = true));
    for (let sent = 0; sent < 3 * LIMIT && !answered && !exchange.socket.destroyed; sent += block.length) {
      await write(exchange.socket, chunk(block)).catch(() => undefined);
    }
    const answer = await exchange.answer;
    exchange.socket.destroy();
    expect(answer.status).toBe(413);
    expect(codeOf(answer)).toBe('PAYLOAD_TOO_LARGE');
    await expectReleased();
  });

  it('a chunked body under the limit is served', async () => {
    const exchange = await connect();
    const body = transcriptionForm(VALID_AUDIO);
    const pieces: Buffer[] = [requestHead('chunked')];
    for (let offset = 0; offset < body.length; offset += 50_000) pieces.push(chunk(body.subarray(offset, offset + 50_000)));
    pieces.push(Buffer.from('0\r\n\r\n'));
    await write(exchange.socket, Buffer.concat(pieces));
    const answer = await exchange.answer;
    exchange.socket.destroy();
    expect(answer.status, answer.body).toBe(200);
    await expectReleased();
  });
});
