/**
 * `POST /v1/audio/speech`: text to audio, streamed to the client as the
 * provider produces it, billed per input character.
 */
import type { BinaryAnswer } from '../answers.js';
import { ClientAbortedError, GatewayError, toGatewayError } from '../errors.js';
import type { Meter } from '../operations/metering.js';
import { redactError } from '../operations/redaction.js';
import type { OperationContext } from '../operations/routing.js';
import { runOperation } from '../operations/run-operation.js';
import { guardStream } from '../generation/stream-guard.js';
import { countCharacters, type SpeechRequest } from '../providers/openai/openai-audio.wire.js';

/**
 * Synthesises `body.input`. The hold is the input's characters at the
 * model's `character` price; the charge is the same characters once the
 * provider has started answering — also when the client leaves mid-file (the
 * provider bills the whole input it was sent) — and nothing when the
 * provider fails, before or during the audio.
 */
export async function createSpeech(context: OperationContext, body: SpeechRequest): Promise<BinaryAnswer> {
  // The answer is a byte stream: plain /trpc HTTP cannot carry it, so refuse before anything is held.
  if (!context.canStream) {
    throw new GatewayError('INVALID_REQUEST', 'Speech audio is served on POST /v1/audio/speech, not over /trpc.');
  }
  return runOperation(context, {
    endpoint: '/v1/audio/speech',
    operation: 'speech',
    model: body.model,
    plan: (model) => {
      const usage = { inputTokens: 0, outputTokens: 0, characters: countCharacters(body.input) };
      return {
        hold: usage,
        stream: false,
        readLater: true,
        call: async ({ deployment, adapter, transport, meter, abandoned }) => {
          const audio = await adapter.synthesize(transport, deployment.provider, { ...body, model: deployment.upstreamModel });
          const provider = deployment.provider.id;
          const chunks = relayAudio(audio.chunks, { meter, usage, provider, signal: context.signal, secrets: model.secrets });
          return {
            answer: { kind: 'binary', contentType: audio.contentType, body: guardStream(chunks, meter, abandoned), meta: { headers: {}, provider } },
            settlesWhenRead: true,
          };
        },
      };
    },
  });
}

interface AudioRelayOptions {
  meter: Meter;
  usage: { inputTokens: number; outputTokens: number; characters: number };
  provider: string;
  signal: AbortSignal;
  secrets: readonly string[];
}

/**
 * The provider's chunks to the client, settled once however they end:
 * completed or cut off by the client (charged), or failed by the provider
 * (not charged; the error goes on so that compat cuts the connection, and the
 * client cannot take a truncated file for a whole one).
 */
async function* relayAudio(chunks: AsyncIterable<Uint8Array>, options: AudioRelayOptions): AsyncGenerator<Uint8Array> {
  let outcome: { status: number; errorCode: string | null; aborted: boolean } = { status: 200, errorCode: 'CLIENT_ABORTED', aborted: true };
  try {
    for await (const chunk of chunks) yield chunk;
    outcome = { status: 200, errorCode: null, aborted: false };
  } catch (error) {
    if (error instanceof ClientAbortedError || options.signal.aborted) return;
    const failure = redactError(toGatewayError(error), options.secrets);
    outcome = { status: failure.status, errorCode: failure.code, aborted: false };
    throw failure;
  } finally {
    options.meter.settle({ usage: options.usage, ...outcome, provider: options.provider });
  }
}
