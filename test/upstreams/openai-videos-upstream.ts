/**
 * The OpenAI video API for the OpenAI-format upstream test server
 * (`startOpenAIUpstream({ routes })`): `POST /v1/videos` (multipart, as the
 * official SDK sends it), `GET /v1/videos/:id`, `GET /v1/videos/:id/content`
 * (`?variant=thumbnail|spritesheet`) and `DELETE /v1/videos/:id`, over an
 * in-memory set of generations the test steers through `state`.
 *
 * A generation is `queued` when created and `in_progress` from its first
 * poll; it completes on the poll that reaches `pollsToComplete` (unless
 * `state.holdAll` is set, or it is marked to fail). Its files are fixed bytes:
 * a real MP4 (given), a "webp" thumbnail and a "jpeg" spritesheet.
 * @see https://platform.openai.com/docs/api-reference/videos
 */
import type { RecordedRequest, UpstreamAnswer, UpstreamRouteHandler } from './upstream-server.js';
import { toOpenAIErrorBody } from './openai-upstream.js';

export interface UpstreamGeneration {
  id: string;
  model: string;
  prompt: string;
  size: string;
  seconds: string;
  /** The idempotency key the gateway sent. */
  idempotencyKey: string | undefined;
  /** Bytes of the `input_reference` file, when one came. */
  referenceBytes: number | undefined;
  polls: number;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  /** Failure to report on the next poll. */
  failWith?: { code: string; message: string };
  deleted: boolean;
}

export interface VideoUpstreamState {
  generations: Map<string, UpstreamGeneration>;
  /** Creates answered (each one a new generation). */
  creates: number;
  /** Ids the gateway deleted. */
  deletes: string[];
  /** The poll that completes a generation (1 = the first). */
  pollsToComplete: number;
  /** While true, no generation completes (it stays `in_progress`). */
  holdAll: boolean;
  /** The next created generation fails on its first poll with this. */
  failNext?: { code: string; message: string };
  files: { video: Buffer; thumbnail: Buffer; spritesheet: Buffer };
}

/** `multipart/form-data` of the request: text fields, and the size of each file. Enough for the gateway's own bodies. */
export function readMultipartFields(request: RecordedRequest): { fields: Record<string, string>; files: Record<string, number> } {
  const boundary = /boundary=([^;]+)/.exec(request.headers['content-type'] ?? '')?.[1]?.replace(/^"|"$/g, '');
  const fields: Record<string, string> = {};
  const files: Record<string, number> = {};
  if (!boundary) return { fields, files };
  const text = request.rawBytes.toString('latin1');
  for (const part of text.split(`--${boundary}`)) {
    const split = part.indexOf('\r\n\r\n');
    if (split === -1) continue;
    const head = part.slice(0, split);
    const body = part.slice(split + 4).replace(/\r\n$/, '');
    const name = /name="([^"]*)"/.exec(head)?.[1];
    if (!name) continue;
    if (/filename="/.test(head)) files[name] = Buffer.byteLength(body, 'latin1');
    else fields[name] = Buffer.from(body, 'latin1').toString('utf8');
  }
  return { fields, files };
}

function videoObject(generation: UpstreamGeneration): Record<string, unknown> {
  return {
    id: generation.id,
    object: 'video',
    model: generation.model,
    status: generation.status,
    progress: generation.status === 'completed' ? 100 : generation.status === 'queued' ? 0 : Math.min(99, generation.polls * 10),
    created_at: 1_700_000_000,
    completed_at: generation.status === 'completed' ? 1_700_000_100 : null,
    expires_at: null,
    size: generation.size,
    seconds: generation.seconds,
    prompt: generation.prompt,
    remixed_from_video_id: null,
    error: generation.status === 'failed' ? generation.failWith : null,
  };
}

function notFound(id: string): UpstreamAnswer {
  return { kind: 'json', status: 404, body: toOpenAIErrorBody(404, { message: `Video with id '${id}' not found.`, code: 'video_not_found', param: 'video_id' }) };
}

/** The video routes and the state they answer from. */
export function createVideoUpstream(files: VideoUpstreamState['files'], options: { pollsToComplete?: number } = {}): { routes: Record<string, UpstreamRouteHandler>; state: VideoUpstreamState } {
  const state: VideoUpstreamState = { generations: new Map(), creates: 0, deletes: [], pollsToComplete: options.pollsToComplete ?? 2, holdAll: false, files };
  const live = (id: string | undefined): UpstreamGeneration | undefined => {
    const generation = state.generations.get(id ?? '');
    return generation && !generation.deleted ? generation : undefined;
  };
  const routes: Record<string, UpstreamRouteHandler> = {
    'POST /v1/videos': (request) => {
      const { fields, files: uploaded } = readMultipartFields(request);
      if (!fields.prompt) return { kind: 'json', status: 400, body: toOpenAIErrorBody(400, { message: "Missing required parameter: 'prompt'.", param: 'prompt' }) };
      state.creates++;
      const generation: UpstreamGeneration = {
        id: `video_up_${state.creates}`,
        model: fields.model ?? 'sora-2',
        prompt: fields.prompt,
        size: fields.size ?? '720x1280',
        seconds: fields.seconds ?? '4',
        idempotencyKey: request.headers['idempotency-key'],
        referenceBytes: uploaded.input_reference,
        polls: 0,
        status: 'queued',
        ...(state.failNext ? { failWith: state.failNext } : {}),
        deleted: false,
      };
      state.failNext = undefined;
      state.generations.set(generation.id, generation);
      return { kind: 'json', status: 200, body: videoObject(generation) };
    },
    'GET /v1/videos/:id': (request) => {
      const generation = live(request.params.id);
      if (!generation) return notFound(request.params.id ?? '');
      if (generation.status !== 'completed' && generation.status !== 'failed') {
        generation.polls++;
        if (generation.failWith) generation.status = 'failed';
        else if (!state.holdAll && generation.polls >= state.pollsToComplete) generation.status = 'completed';
        else generation.status = 'in_progress';
      }
      return { kind: 'json', status: 200, body: videoObject(generation) };
    },
    'GET /v1/videos/:id/content': (request) => {
      const generation = live(request.params.id);
      if (!generation || generation.status !== 'completed') return notFound(request.params.id ?? '');
      const variant = request.query.variant ?? 'video';
      if (variant === 'thumbnail') return { kind: 'bytes', contentType: 'image/webp', body: state.files.thumbnail };
      if (variant === 'spritesheet') return { kind: 'bytes', contentType: 'image/jpeg', body: state.files.spritesheet };
      return { kind: 'bytes', contentType: 'video/mp4', body: state.files.video };
    },
    'DELETE /v1/videos/:id': (request) => {
      const generation = live(request.params.id);
      if (!generation) return notFound(request.params.id ?? '');
      generation.deleted = true;
      state.deletes.push(generation.id);
      return { kind: 'json', status: 200, body: { id: generation.id, object: 'video.deleted', deleted: true } };
    },
  };
  return { routes, state };
}
