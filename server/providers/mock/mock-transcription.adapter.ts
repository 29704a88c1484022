/**
 * The mock provider's transcription and translation, read from the upload on
 * disk: the mock's own speech transcribes back to its text, other audio to a
 * deterministic transcript (see media/mock-transcription.ts).
 */
import { ClientAbortedError } from '../../errors.js';
import type { TranscriptionAdapter } from '../types.js';
import { transcribeMock } from './media/mock-transcription.js';

export const mockTranscriptionAdapter: TranscriptionAdapter = {
  async transcribe(transport, _connection, job) {
    if (transport.signal.aborted) throw new ClientAbortedError();
    const { language, prompt, temperature } = job.fields;
    const transcript = await transcribeMock({
      filePath: job.file.path,
      task: job.task,
      ...(typeof language === 'string' ? { language } : {}),
      ...(typeof prompt === 'string' ? { prompt } : {}),
      ...(typeof temperature === 'number' ? { temperature } : {}),
    });
    if (transport.signal.aborted) throw new ClientAbortedError();
    return { transcript, seconds: transcript.duration };
  },
};
