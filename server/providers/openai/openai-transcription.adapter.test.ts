import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { renderTranscript } from '../../media/subtitles.js';
import { toMultipartBody } from './multipart-body.js';
import { fromVerboseTranscription, toFormFields } from './openai-transcription.adapter.js';

const directory = mkdtempSync(path.join(os.tmpdir(), 'openai-transcription-adapter-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

async function collect(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe('toMultipartBody', () => {
  const file = path.join(directory, 'audio.bin');
  const bytes = Buffer.from(Array.from({ length: 300_000 }, (_, index) => (index * 7) & 0xff));
  writeFileSync(file, bytes);

  it('writes fields then the file, with an exact content-length, and can be sent again (a retry)', async () => {
    const multipart = toMultipartBody({ model: 'whisper-1', 'timestamp_granularities[]': ['word', 'segment'] }, { field: 'file', path: file, filename: 'a.wav', contentType: 'audio/wav', size: bytes.length });
    const boundary = /boundary=(.+)$/.exec(multipart.contentType)![1]!;
    const first = await collect(multipart.body);
    const second = await collect(multipart.body);
    expect(first.length).toBe(multipart.contentLength);
    expect(second.equals(first)).toBe(true);
    const text = first.toString('latin1');
    expect(text.startsWith(`--${boundary}\r\ncontent-disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n`)).toBe(true);
    expect(text.match(/name="timestamp_granularities\[\]"\r\n\r\n(\w+)\r\n/g)).toHaveLength(2);
    expect(text).toContain('name="file"; filename="a.wav"\r\ncontent-type: audio/wav\r\n\r\n');
    const start = first.indexOf('\r\n\r\n', first.indexOf('filename=')) + 4;
    expect(first.subarray(start, start + bytes.length).equals(bytes)).toBe(true);
    expect(text.endsWith(`\r\n--${boundary}--\r\n`)).toBe(true);
  });

  it('escapes quotes and line breaks in names and refuses a content type that is not one', async () => {
    const multipart = toMultipartBody({}, { field: 'file', path: file, filename: 'evil"\r\nx-injected: 1.wav', contentType: 'audio/wav\r\nx-injected: 1', size: bytes.length });
    const text = (await collect(multipart.body)).toString('latin1');
    expect(text).toContain('filename="evil%22%0D%0Ax-injected: 1.wav"');
    expect(text).toContain('content-type: application/octet-stream\r\n');
    expect(text).not.toContain('\r\nx-injected');
  });
});

describe('toFormFields', () => {
  it('writes values as text, repeats arrays and leaves out absent fields', () => {
    expect(toFormFields({ model: 'whisper-1', temperature: 0.3, stream: false, language: null, prompt: undefined, 'include[]': ['logprobs'] })).toEqual({
      model: 'whisper-1',
      temperature: '0.3',
      stream: 'false',
      'include[]': ['logprobs'],
    });
  });
});

describe('fromVerboseTranscription', () => {
  it('gives an answer without segments one segment spanning the text, so srt and vtt can still be rendered', () => {
    const transcript = fromVerboseTranscription({ text: 'Hello there.', duration: 2.5 }, 'transcribe', 'german');
    expect(transcript).toMatchObject({ task: 'transcribe', language: 'german', duration: 2.5, text: 'Hello there.' });
    expect(transcript.segments).toEqual([
      { id: 0, seek: 0, start: 0, end: 2.5, text: 'Hello there.', tokens: [], temperature: 0, avg_logprob: 0, compression_ratio: 0, no_speech_prob: 0 },
    ]);
    expect(renderTranscript('srt', transcript).body).toBe('1\n00:00:00,000 --> 00:00:02,500\nHello there.\n\n');
  });

  it('takes the duration from the last segment when the provider gives none, and answers English for a translation', () => {
    const transcript = fromVerboseTranscription(
      { text: 'One. Two.', segments: [{ start: 0, end: 1.2, text: ' One.' }, { start: 1.2, end: 3.4, text: ' Two.' }] },
      'translate',
      'french',
    );
    expect(transcript.duration).toBe(3.4);
    expect(transcript.language).toBe('english');
    expect(transcript.segments.map((segment) => segment.id)).toEqual([0, 1]);
  });
});
