/**
 * Image generation and edits on the offline `mock` provider: deterministic
 * pictures of exactly the requested size (`media/mock-images.ts`), drawn on
 * worker threads (`media/mock-image-worker.ts`) one image at a time, so the
 * event loop stays free and only one finished PNG per request is held while
 * the next is drawn. Streams send `partialImages` coarser pictures before
 * each final one, as OpenAI's GPT image models do.
 */
import { ClientAbortedError, GatewayError } from '../../errors.js';
import { MediaFormatError } from '../../media/media-format-error.js';
import { countTextTokens } from '../../tokenizer.js';
import { IMAGE_STREAM_EVENT_TYPES, type ImageDatum, type ImageStreamEvent } from '../openai/openai-images.wire.js';
import type { ImageEditCall, ImageGenerationCall, ImagesAdapter, UpstreamTransport } from '../types.js';
import { renderMockImage, type MockImageJob } from './media/mock-image-worker.js';

type Operation = keyof typeof IMAGE_STREAM_EVENT_TYPES;

function jobOf(operation: Operation, call: ImageGenerationCall | ImageEditCall, index: number, partialImages: number | null): MockImageJob {
  const base = { prompt: call.prompt, index, width: call.width, height: call.height, partialImages };
  if (operation === 'generation') return { kind: 'generate', ...base };
  const edit = call as ImageEditCall;
  return { kind: 'edit', ...base, imagePaths: edit.images.map((image) => image.path), ...(edit.mask ? { maskPath: edit.mask.path } : {}) };
}

/** A worker failure as the client should see it: the client left, a bad input image, or a fault of the gateway. */
function toMockFailure(error: unknown, transport: UpstreamTransport): unknown {
  if (transport.signal.aborted) return new ClientAbortedError();
  if (error instanceof MediaFormatError) {
    return new GatewayError(error.reason === 'unrecognized' ? 'UNSUPPORTED_MEDIA_TYPE' : 'INVALID_REQUEST', `Invalid value for 'image': ${error.message}`, { param: 'image' });
  }
  return error;
}

async function drawFinal(job: MockImageJob, transport: UpstreamTransport): Promise<Buffer> {
  try {
    let final: Buffer | undefined;
    for await (const frame of renderMockImage(job, transport.signal)) if (frame.kind === 'final') final = frame.png;
    if (!final) throw new Error('the mock image worker answered no picture');
    return final;
  } catch (error) {
    throw toMockFailure(error, transport);
  }
}

async function drawAll(operation: Operation, transport: UpstreamTransport, call: ImageGenerationCall | ImageEditCall) {
  const data: ImageDatum[] = [];
  for (let index = 0; index < call.count; index++) {
    const png = await drawFinal(jobOf(operation, call, index, null), transport);
    data.push({ b64_json: png.toString('base64'), ...(operation === 'generation' ? { revised_prompt: call.prompt } : {}) });
  }
  return { created: Math.floor(Date.now() / 1000), data };
}

/** The events of `count` streamed pictures, one picture after another (partial indexes restart at 0 for each). */
async function* streamAll(operation: Operation, transport: UpstreamTransport, call: ImageGenerationCall | ImageEditCall): AsyncGenerator<ImageStreamEvent> {
  const types = IMAGE_STREAM_EVENT_TYPES[operation];
  const textTokens = countTextTokens(call.prompt);
  const common = {
    size: call.sizeLabel,
    quality: call.quality ?? 'auto',
    background: operation === 'generation' ? 'opaque' : 'auto',
    output_format: 'png',
  };
  try {
    for (let index = 0; index < call.count; index++) {
      for await (const frame of renderMockImage(jobOf(operation, call, index, call.partialImages), transport.signal)) {
        const created_at = Math.floor(Date.now() / 1000);
        const b64_json = frame.png.toString('base64');
        if (frame.kind === 'partial') {
          yield { type: types.partial, b64_json, partial_image_index: frame.partialImageIndex, created_at, ...common };
        } else {
          yield {
            type: types.completed,
            b64_json,
            created_at,
            ...common,
            usage: { input_tokens: textTokens, input_tokens_details: { image_tokens: 0, text_tokens: textTokens }, output_tokens: 0, total_tokens: textTokens },
          };
        }
      }
    }
  } catch (error) {
    throw toMockFailure(error, transport);
  }
}

export const mockImagesAdapter: ImagesAdapter = {
  generate: (transport, _connection, call) => drawAll('generation', transport, call),
  streamGeneration: async (transport, _connection, call) => streamAll('generation', transport, call),
  edit: (transport, _connection, call) => drawAll('edit', transport, call),
  streamEdit: async (transport, _connection, call) => streamAll('edit', transport, call),
};
