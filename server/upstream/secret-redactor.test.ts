import { describe, expect, it } from 'vitest';
import type { UpstreamBody } from '../providers/types.js';
import { redactionModeOf, SecretRedactor } from './secret-redactor.js';

const SECRET = 'sk-test-0123456789abcdef';
const OTHER = 'hdr-secret-value-42';

/** A body that yields these chunks; records whether it was destroyed. */
function bodyOf(chunks: readonly (string | Buffer)[]): UpstreamBody & { destroyed: boolean } {
  const body = {
    destroyed: false,
    destroy() {
      body.destroyed = true;
    },
    async *[Symbol.asyncIterator]() {
      for (const chunk of chunks) yield typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    },
  };
  return body;
}

async function readAll(body: UpstreamBody): Promise<{ text: string; chunks: number }> {
  const parts: Buffer[] = [];
  for await (const chunk of body) parts.push(Buffer.from(chunk));
  return { text: Buffer.concat(parts).toString('latin1'), chunks: parts.length };
}

describe('SecretRedactor', () => {
  const redactor = new SecretRedactor([SECRET, OTHER, 'short']);

  it('replaces every secret in text answers with [redacted], and ignores values under 8 characters', async () => {
    const text = `{"a":"${SECRET}","b":"x ${OTHER} ${SECRET}","c":"short"}`;
    expect((await readAll(redactor.redactBody(bodyOf([text]), 'text'))).text).toBe('{"a":"[redacted]","b":"x [redacted] [redacted]","c":"short"}');
    expect(redactor.redactText(text)).toBe('{"a":"[redacted]","b":"x [redacted] [redacted]","c":"short"}');
  });

  it('catches a secret cut across chunks at every position', async () => {
    const text = `data: {"content":"your key is ${SECRET}!"}\n\n`;
    for (let cut = 1; cut < text.length; cut++) {
      const { text: read } = await readAll(redactor.redactBody(bodyOf([text.slice(0, cut), text.slice(cut)]), 'text'));
      expect(read, `cut at ${cut}`).toBe('data: {"content":"your key is [redacted]!"}\n\n');
    }
  });

  it('catches a secret spread over many one-byte chunks', async () => {
    const text = `a${SECRET}b${OTHER}c`;
    const { text: read } = await readAll(redactor.redactBody(bodyOf([...text]), 'text'));
    expect(read).toBe('a[redacted]b[redacted]c');
  });

  it('masks a secret in binary bodies byte for byte, keeping the length', async () => {
    const bytes = Buffer.concat([Buffer.from([0, 255, 1]), Buffer.from(SECRET), Buffer.from([2, 3])]);
    const { text } = await readAll(redactor.redactBody(bodyOf([bytes.subarray(0, 8), bytes.subarray(8)]), 'binary'));
    expect(text.length).toBe(bytes.length);
    expect(text.slice(3, 3 + SECRET.length)).toBe('*'.repeat(SECRET.length));
  });

  it('passes chunks without a secret on as they are, holding back only an end that may begin one', async () => {
    const frame = Buffer.from('data: {"content":"hello"}\n\n');
    const chunks: Uint8Array[] = [];
    for await (const chunk of redactor.redactBody(bodyOf([frame]), 'text')) chunks.push(chunk);
    expect(chunks).toEqual([frame]);
    expect(chunks[0]).toBe(frame);
    // "sk-" may begin the secret: held until the next chunk shows it does not.
    const { ready, tail } = redactor.redactChunk(Buffer.from('abc sk-'), 'text', false);
    expect(ready.toString()).toBe('abc ');
    expect(tail.toString()).toBe('sk-');
    expect((await readAll(redactor.redactBody(bodyOf(['abc sk-', 'nope']), 'text'))).text).toBe('abc sk-nope');
    expect((await readAll(redactor.redactBody(bodyOf(['abc sk-']), 'text'))).text).toBe('abc sk-');
  });

  it('replaces the longer of two secrets that share a start', async () => {
    const nested = new SecretRedactor(['sk-abcdefgh', 'sk-abcdefgh-long-part']);
    expect((await readAll(nested.redactBody(bodyOf(['x sk-abcdefgh-long-part y sk-abcdefgh z']), 'text'))).text).toBe('x [redacted] y [redacted] z');
  });

  it('destroys the provider body when the reader destroys it', async () => {
    const body = bodyOf(['a', 'b', 'c']);
    const redacted = redactor.redactBody(body, 'text');
    redacted.destroy();
    expect(body.destroyed).toBe(true);
  });

  it('leaves a body as it is when the provider has no secret', () => {
    const body = bodyOf(['x']);
    expect(new SecretRedactor([]).redactBody(body, 'text')).toBe(body);
  });

  it('picks the mode from the content type', () => {
    expect(redactionModeOf('application/json; charset=utf-8')).toBe('text');
    expect(redactionModeOf('text/event-stream')).toBe('text');
    expect(redactionModeOf('application/problem+json')).toBe('text');
    expect(redactionModeOf(undefined)).toBe('text');
    expect(redactionModeOf('audio/mpeg')).toBe('binary');
    expect(redactionModeOf('video/mp4')).toBe('binary');
    expect(redactionModeOf('application/octet-stream')).toBe('binary');
  });
});
