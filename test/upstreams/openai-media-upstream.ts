/**
 * Media endpoints of the OpenAI-format upstream test server, as `routes` for
 * `startOpenAIUpstream({ routes: createOpenAIMediaRoutes(name) })`:
 * `POST /v1/embeddings`, `/v1/moderations`, `/v1/images/generations` and
 * `/v1/images/edits` (multipart: the body is kept whole in
 * `record.rawBytes`; read it with {@link readRecordedForm}).
 *
 * Answers are derived from the request only, and carry the server's `name`
 * so a test can tell which deployment answered:
 * - embeddings: 8 floats per input (or `dimensions`), base64 when asked;
 *   `usage.prompt_tokens` = 4-characters estimate of the texts (token arrays: their length);
 * - moderations: one result per string (a multimodal array is one input),
 *   flagged when the text contains "kill";
 * - images: `b64_json` of {@link UPSTREAM_PNG} unless `response_format: url`
 *   (then `https://images.upstream.test/{name}/{n}.png`); `stream: true`
 *   answers one partial and one completed event per image, named as OpenAI does.
 */
import { encodePng } from '../../server/media/png.js';
import { MODERATION_CATEGORIES } from '../../server/classifier/moderation-categories.js';
import { UPSTREAM_CREATED, estimateTokens, isRecord, namedFrame, type RecordedRequest, type UpstreamAnswer, type UpstreamRouteHandler } from './upstream-server.js';

/** The picture every image answer carries: 2×2, distinct per server by colour. */
export function upstreamPng(name: string): Buffer {
  const shade = [...name].reduce((sum, character) => sum + character.charCodeAt(0), 0) % 256;
  return encodePng(2, 2, Uint8Array.from([shade, 10, 20, 255, shade, 30, 40, 255, shade, 50, 60, 255, shade, 70, 80, 255]));
}

function error(status: number, message: string, param: string | null): UpstreamAnswer {
  return { kind: 'json', status, body: { error: { message, type: 'invalid_request_error', param, code: null } } };
}

function vectorOf(text: string, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions);
  for (let index = 0; index < dimensions; index++) vector[index] = ((text.length + index * 7) % 13) / 13 - 0.5;
  return vector;
}

function embeddings(name: string): UpstreamRouteHandler {
  return (request) => {
    const body = request.body;
    if (!isRecord(body) || typeof body.model !== 'string') return error(400, 'you must provide a model parameter', 'model');
    const raw = body.input;
    const inputs: unknown[] = typeof raw === 'string' ? [raw] : Array.isArray(raw) && typeof raw[0] === 'number' ? [raw] : Array.isArray(raw) ? raw : [];
    if (inputs.length === 0) return error(400, "'input' is required", 'input');
    const dimensions = typeof body.dimensions === 'number' ? body.dimensions : 8;
    let tokens = 0;
    const data = inputs.map((input, index) => {
      const text = typeof input === 'string' ? input : JSON.stringify(input);
      tokens += typeof input === 'string' ? estimateTokens(input) : (input as unknown[]).length;
      const vector = vectorOf(text, dimensions);
      const embedding = body.encoding_format === 'base64' ? Buffer.from(vector.buffer).toString('base64') : [...vector];
      return { object: 'embedding', index, embedding };
    });
    return { kind: 'json', status: 200, body: { object: 'list', data, model: `${body.model}-from-${name}`, usage: { prompt_tokens: tokens, total_tokens: tokens } } };
  };
}

function moderations(name: string): UpstreamRouteHandler {
  return (request) => {
    const body = request.body;
    if (!isRecord(body) || body.input === undefined) return error(400, "'input' is required", 'input');
    const input = body.input;
    const texts: string[] =
      typeof input === 'string'
        ? [input]
        : Array.isArray(input) && input.every((item) => typeof item === 'string')
          ? (input as string[])
          : [JSON.stringify(input)];
    const results = texts.map((text) => {
      const flagged = /kill/i.test(text);
      return {
        flagged,
        categories: Object.fromEntries(MODERATION_CATEGORIES.map((category) => [category, flagged && category === 'violence'])),
        category_scores: Object.fromEntries(MODERATION_CATEGORIES.map((category) => [category, flagged && category === 'violence' ? 0.9 : 0.01])),
      };
    });
    return { kind: 'json', status: 200, body: { id: `modr-${name}-${request.sequence}`, model: String(body.model ?? 'omni-moderation-latest'), results } };
  };
}

function imageAnswer(name: string, request: RecordedRequest, fields: { n: number; responseFormat: unknown; stream: boolean; edit: boolean }): UpstreamAnswer {
  const b64 = upstreamPng(name).toString('base64');
  const prefix = fields.edit ? 'image_edit' : 'image_generation';
  if (fields.stream) {
    const frames: string[] = [];
    for (let index = 0; index < fields.n; index++) {
      const common = { b64_json: b64, created_at: UPSTREAM_CREATED, size: '1024x1024', quality: 'high', background: 'opaque', output_format: 'png' };
      frames.push(namedFrame(`${prefix}.partial_image`, { type: `${prefix}.partial_image`, partial_image_index: 0, ...common }));
      frames.push(
        namedFrame(`${prefix}.completed`, {
          type: `${prefix}.completed`,
          ...common,
          usage: { input_tokens: 10, input_tokens_details: { image_tokens: 0, text_tokens: 10 }, output_tokens: 100, total_tokens: 110 },
        }),
      );
    }
    return { kind: 'sse', frames };
  }
  const data = Array.from({ length: fields.n }, (_, index) =>
    fields.responseFormat === 'url' ? { url: `https://images.upstream.test/${name}/${request.sequence}-${index}.png` } : { b64_json: b64 },
  );
  return { kind: 'json', status: 200, body: { created: UPSTREAM_CREATED, data, usage: { input_tokens: 10, output_tokens: 100, total_tokens: 110 } } };
}

function generations(name: string): UpstreamRouteHandler {
  return (request) => {
    const body = request.body;
    if (!isRecord(body) || typeof body.prompt !== 'string') return error(400, "'prompt' is required", 'prompt');
    return imageAnswer(name, request, { n: typeof body.n === 'number' ? body.n : 1, responseFormat: body.response_format, stream: body.stream === true, edit: false });
  };
}

/** A text field of a recorded multipart body, read without a parser (the handlers answer synchronously). */
function formText(request: RecordedRequest, field: string): string | undefined {
  const match = new RegExp(`name="${field.replace(/[[\]]/g, '\\$&')}"\\r\\n\\r\\n([^\\r]*)\\r\\n`).exec(request.rawBytes.toString('latin1'));
  return match?.[1];
}

function edits(name: string): UpstreamRouteHandler {
  return (request) => {
    if (!(request.headers['content-type'] ?? '').startsWith('multipart/form-data; boundary=')) return error(400, 'expected multipart/form-data', null);
    if (formText(request, 'prompt') === undefined) return error(400, "'prompt' is required", 'prompt');
    return imageAnswer(name, request, { n: Number(formText(request, 'n') ?? 1), responseFormat: formText(request, 'response_format'), stream: formText(request, 'stream') === 'true', edit: true });
  };
}

/** The media routes of one upstream; `name` tells its answers apart. */
export function createOpenAIMediaRoutes(name: string): Record<string, UpstreamRouteHandler> {
  return {
    'POST /v1/embeddings': embeddings(name),
    'POST /v1/moderations': moderations(name),
    'POST /v1/images/generations': generations(name),
    'POST /v1/images/edits': edits(name),
  };
}

/** A recorded multipart request body, parsed (fields and files with their bytes). */
export async function readRecordedForm(request: RecordedRequest): Promise<FormData> {
  return new Response(request.rawBytes, { headers: { 'content-type': request.headers['content-type'] ?? '' } }).formData();
}
