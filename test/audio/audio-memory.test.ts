/**
 * Uploads never sit whole in the gateway's memory: a gateway process (spawned,
 * so that its RSS is its own) takes 20 concurrent 20 MiB transcription uploads
 * and 20 concurrent 30 MiB ones it refuses with 413, while its RSS is sampled
 * from /proc. The growth over the idle process must stay under
 * 150 MB (issue 11: 20 uploads held whole would be 400+). The numbers are printed. (Most of the idle process's
 * RSS is the embedded PGlite database, the same before and after.)
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey } from '../../server/auth/api-keys.js';
import { killSpawnedGateways, spawnGateway, type SpawnedGateway } from '../support/spawn-gateway.js';
import { wavHeader } from './audio-fixtures.js';

const MiB = 1024 * 1024;
// 20 uploads buffered whole would be 400+ MiB; streamed to disk they stay near the parser's
// buffers. Node 24's collector lets a little more stay resident than Node 20's (115 MB seen).
const RSS_GROWTH_LIMIT_BYTES = 150 * 1000 * 1000;

let gateway: SpawnedGateway;
let directory: string;
let url: string;
const key = generateApiKey();

/** The process's resident set, bytes (Linux). */
function residentBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error('no VmRSS in /proc status');
  return Number(match[1]) * 1024;
}

/** A 64 KiB block of a tone, reused for every chunk the client sends (the client stays small too). */
const BLOCK = (() => {
  const block = Buffer.alloc(64 * 1024);
  for (let index = 0; index < block.length / 2; index++) block.writeInt16LE(Math.round(6000 * Math.sin(index / 7)), index * 2);
  return block;
})();

/**
 * POSTs a `multipart/form-data` transcription of a WAV file of `fileBytes`,
 * written chunk by chunk with backpressure; answers the status and body.
 */
function uploadWav(fileBytes: number): Promise<{ status: number; body: string }> {
  const boundary = `memory-test-${fileBytes}`;
  const head = Buffer.from(
    `--${boundary}\r\ncontent-disposition: form-data; name="model"\r\n\r\nmock-whisper\r\n` +
      `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="long.wav"\r\ncontent-type: audio/wav\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve, reject) => {
    const outgoing = request(`${url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': head.length + fileBytes + tail.length },
    });
    let answered = false;
    outgoing.once('response', (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      response.once('error', reject);
    });
    outgoing.once('error', (error) => {
      if (!answered) reject(error);
    });
    void (async () => {
      const write = (chunk: Buffer) =>
        new Promise<void>((done) => {
          if (outgoing.write(chunk)) done();
          else outgoing.once('drain', () => done());
        });
      const header = wavHeader(fileBytes - 44);
      await write(head);
      await write(header);
      let sent = header.length;
      while (sent < fileBytes && !outgoing.destroyed) {
        const size = Math.min(BLOCK.length, fileBytes - sent);
        await write(size === BLOCK.length ? BLOCK : BLOCK.subarray(0, size));
        sent += size;
      }
      outgoing.end(tail);
    })().catch(reject);
  });
}

beforeAll(async () => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'umg-audio-memory-'));
  gateway = await spawnGateway({
    DATABASE_URL: '',
    DATA_DIR: path.join(directory, 'data'),
    UPLOAD_DIR: path.join(directory, 'uploads'),
    GATEWAY_CONFIG: '',
    GATEWAY_BOOTSTRAP_KEY: key,
    GATEWAY_BOOTSTRAP_CREDITS: '100',
    LOG_LEVEL: 'silent',
  });
  url = gateway.url;
}, 150_000);

afterAll(async () => {
  await killSpawnedGateways();
  if (directory) rmSync(directory, { recursive: true, force: true });
});

describe('memory under large audio uploads', () => {
  it('keeps RSS growth under 150 MB through 20 concurrent 20 MiB transcriptions and 20 refused 30 MiB uploads', { timeout: 300_000 }, async () => {
    const pid = gateway.child.pid!;
    // The idle process before its first upload: the modules a transcription loads count as growth too.
    const baseline = residentBytes(pid);
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, residentBytes(pid));
    }, 20);
    let answers: { status: number; body: string }[];
    try {
      answers = await Promise.all([...Array.from({ length: 20 }, () => uploadWav(20 * MiB)), ...Array.from({ length: 20 }, () => uploadWav(30 * MiB))]);
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, residentBytes(pid));
    const growth = peak - baseline;
    console.log(
      `audio upload memory: RSS baseline ${(baseline / MiB).toFixed(1)} MiB, peak ${(peak / MiB).toFixed(1)} MiB, growth ${(growth / 1e6).toFixed(1)} MB ` +
        `(limit ${RSS_GROWTH_LIMIT_BYTES / 1e6} MB) for 20 × 20 MiB accepted + 20 × 30 MiB refused`,
    );
    expect(answers.slice(0, 20).map((answer) => answer.status), answers[0]!.body).toEqual(Array(20).fill(200));
    expect(answers.slice(20).map((answer) => answer.status)).toEqual(Array(20).fill(413));
    expect(JSON.parse(answers[0]!.body).text.length).toBeGreaterThan(0);
    expect(JSON.parse(answers[20]!.body).error.code).toBe('PAYLOAD_TOO_LARGE');
    expect(growth).toBeLessThan(RSS_GROWTH_LIMIT_BYTES);
  });
});
