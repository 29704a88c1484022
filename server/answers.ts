/**
 * What an operation answers, for every caller: compat/ writes it as HTTP,
 * internal TypeScript callers (CLI, workers, tests, the dashboard) read the
 * typed value. Answer metadata (headers a client sees, the provider that
 * served) travels inside the answer, never in a side channel.
 */

/** The SSE dialect of a streamed answer: decides keep-alive and last-resort error frames. */
export type StreamFormat = 'chat' | 'messages' | 'responses' | 'images';

/** Facts about an answer that are not its body. */
export interface AnswerMeta {
  /** Headers for the client (e.g. `x-gateway-dropped-params`), lower-case names. */
  headers: Record<string, string>;
  /** Catalog id of the provider that served the answer, when one did. */
  provider?: string;
}

/** A JSON answer. */
export interface JsonAnswer<Body> {
  kind: 'json';
  body: Body;
  /**
   * The provider's own serialisation of `body`, when it was passed through
   * unchanged: compat writes these bytes as they came instead of serialising
   * `body` again.
   */
  raw?: string;
  meta: AnswerMeta;
}

/** One SSE event: `event:` line (optional) and its JSON `data` (or a literal like `[DONE]`). */
export interface TypedEvent<Event> {
  event?: string;
  data: Event;
}

/**
 * A piece of a stream: typed events, and — when the piece is a provider's
 * bytes passed through unchanged — those bytes, which compat writes as they
 * are. On a passed-through piece, `events` is parsed only when read.
 */
export interface StreamPart<Event> {
  readonly events: readonly TypedEvent<Event>[];
  readonly bytes?: Uint8Array;
}

/** A streamed answer (server-sent events). */
export interface StreamAnswer<Event> {
  kind: 'stream';
  format: StreamFormat;
  parts: AsyncIterable<StreamPart<Event>>;
  meta: AnswerMeta;
}

/** Binary bytes (audio, video, images) with their content type. */
export interface BinaryAnswer {
  kind: 'binary';
  contentType: string;
  /** Known length, or undefined for a body streamed as it is produced. */
  contentLength?: number;
  /** HTTP status: 200, or 206 for a range. */
  status?: 200 | 206;
  body: AsyncIterable<Uint8Array>;
  meta: AnswerMeta;
}

/** A text body that is not JSON (srt, vtt, plain transcripts). */
export interface TextAnswer {
  kind: 'text';
  contentType: string;
  body: string;
  meta: AnswerMeta;
}

export type Answer<Body = unknown, Event = unknown> = JsonAnswer<Body> | StreamAnswer<Event> | BinaryAnswer | TextAnswer;

/** A JSON answer with no metadata. */
export function jsonAnswer<Body>(body: Body, meta: AnswerMeta = { headers: {} }): JsonAnswer<Body> {
  return { kind: 'json', body, meta };
}

/** A piece of typed events (the gateway's own frames). */
export function eventPart<Event>(events: readonly TypedEvent<Event>[]): StreamPart<Event> {
  return { events };
}

/**
 * A piece of provider bytes passed through: `frames` are the SSE events the
 * bytes hold (already split by the parser), turned into typed events only
 * when an internal caller reads `events`.
 */
export class RawPart<Event> implements StreamPart<Event> {
  private parsed: TypedEvent<Event>[] | undefined;

  constructor(
    readonly bytes: Uint8Array,
    private readonly frames: readonly { event?: string; data: string }[],
  ) {}

  get events(): readonly TypedEvent<Event>[] {
    this.parsed ??= this.frames.map((frame) => ({ ...(frame.event ? { event: frame.event } : {}), data: parseFrameData(frame.data) as Event }));
    return this.parsed;
  }
}

function parseFrameData(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    // `[DONE]` and other literals stay strings.
    return data;
  }
}
