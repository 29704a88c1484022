/**
 * The mock provider's speech: real audio in every format, made in-process
 * and handed on block by block as it is encoded (see media/mock-speech.ts).
 */
import { ClientAbortedError } from '../../errors.js';
import type { SpeechAdapter, UpstreamTransport } from '../types.js';
import { SPEECH_FORMATS, synthesizeSpeech, type SpeechFormat } from './media/mock-speech.js';

function toSpeechFormat(value: unknown): SpeechFormat {
  return (SPEECH_FORMATS as readonly unknown[]).includes(value) ? (value as SpeechFormat) : 'mp3';
}

/** Stops encoding when the request is gone (the consumer's `return` stops it too). */
async function* untilAborted(chunks: AsyncIterable<Uint8Array>, transport: UpstreamTransport): AsyncGenerator<Uint8Array> {
  for await (const chunk of chunks) {
    if (transport.signal.aborted) throw new ClientAbortedError();
    yield chunk;
  }
}

export const mockSpeechAdapter: SpeechAdapter = {
  async synthesize(transport, _connection, body) {
    if (transport.signal.aborted) throw new ClientAbortedError();
    const speech = synthesizeSpeech({
      text: String(body.input ?? ''),
      voice: String(body.voice ?? 'alloy'),
      format: toSpeechFormat(body.response_format ?? 'mp3'),
      speed: typeof body.speed === 'number' ? body.speed : 1,
      model: String(body.model ?? ''),
    });
    return { contentType: speech.contentType, chunks: untilAborted(speech.chunks, transport) };
  },
};
