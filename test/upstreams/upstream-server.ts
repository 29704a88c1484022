/**
 * Shared machinery of the real-HTTP upstream test servers (OpenAI and Anthropic
 * dialects live in openai-upstream.ts and anthropic-upstream.ts).
 *
 * A server records every request, then answers it with the next matching
 * scripted step or, when the script is empty, with its dialect's deterministic
 * default answer. Faults are produced on the real socket (resets, truncated
 * bodies, stalls), so the gateway's HTTP client sees exactly what it would see
 * from a misbehaving provider.
 *
 * Robustness rules: a client abort never throws (every req/res/socket gets an
 * error listener and every write checks for a dead response), every timer is
 * tied to an AbortSignal that fires when the client goes away or the server
 * closes, and close() destroys open sockets so teardown never waits on
 * keep-alive connections or streams in progress.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

// ---------------------------------------------------------------------------
// Public types
// ---------------------------------------------------------------------------

/** One request as the server received it. */
export interface RecordedRequest {
  /** 1-based arrival number on this server (reset() restarts it); generated ids use it. */
  sequence: number;
  method: string;
  /** Path without the query string, e.g. `/v1/chat/completions`. */
  path: string;
  /** Query parameters (the last value wins when a name repeats). */
  query: Record<string, string>;
  /** Header names lower-cased; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** The body parsed as JSON, or undefined when it is empty or not JSON. */
  body: unknown;
  /** The body exactly as received (UTF-8). */
  rawBody: string;
  /** The body's bytes (multipart uploads, binary bodies). */
  rawBytes: Buffer;
  /** Values of `:name` segments when a custom route's key has them (`GET /v1/videos/:id`). */
  params: Record<string, string>;
  /** The script step that answered this request, if any. */
  step: ScriptStep | undefined;
}

interface ScriptStepBase {
  /**
   * Limits the step to requests on this path (`/v1/messages/count_tokens`, or
   * without the `/v1` prefix). Requests on other paths skip it and leave it queued.
   */
  path?: string;
}

/** Waits `ms`, then gives the default answer. */
export interface DelayStep extends ScriptStepBase {
  kind: 'delay';
  ms: number;
}

/**
 * Answers with this status. Without `body`, the body is the provider's error
 * shape built from status, `message`, `errorType`, `param` and `code`. A string
 * `body` is sent verbatim, anything else as JSON.
 */
export interface StatusStep extends ScriptStepBase {
  kind: 'status';
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  message?: string;
  errorType?: string;
  param?: string | null;
  code?: string | null;
}

/** Reads the request, then destroys the socket before any response byte. */
export interface ResetBeforeStep extends ScriptStepBase {
  kind: 'reset-before';
}

/**
 * Sends the default answer's first `afterChunks` SSE frames, then destroys the
 * socket. On a non-streaming answer: headers and half of the JSON body.
 */
export interface ResetDuringStreamStep extends ScriptStepBase {
  kind: 'reset-during-stream';
  afterChunks: number;
}

/** 200 with `content-type: application/json` and a truncated JSON body. */
export interface MalformedJsonStep extends ScriptStepBase {
  kind: 'malformed-json';
}

/**
 * Sends `afterChunks` default frames, then a frame whose data is not JSON, then
 * ends. On a non-streaming answer it behaves as `malformed-json`.
 */
export interface MalformedSseStep extends ScriptStepBase {
  kind: 'malformed-sse';
  afterChunks: number;
}

/**
 * Sends `afterChunks` default frames, goes silent for `ms`, then ends the
 * response (truncated), or with `resume: true` sends the remaining frames.
 * On a non-streaming answer the headers go out at once and the body after `ms`.
 * Stops at once if the client closes.
 */
export interface StallStep extends ScriptStepBase {
  kind: 'stall';
  afterChunks: number;
  ms: number;
  resume?: boolean;
}

/**
 * Sends `afterChunks` default frames, then holds the stream open until
 * `until` settles (a test's own moment, not a duration), then sends the rest.
 * On a non-streaming answer the whole body waits. Stops at once if the client closes.
 */
export interface HoldStep extends ScriptStepBase {
  kind: 'hold';
  afterChunks: number;
  until: Promise<unknown>;
}

/** Waits `chunkDelayMs` before every SSE frame (once before a JSON body). */
export interface SlowStreamStep extends ScriptStepBase {
  kind: 'slow-stream';
  chunkDelayMs: number;
}

/** Answers exactly this JSON (status 200 unless given). */
export interface JsonStep extends ScriptStepBase {
  kind: 'json';
  body: unknown;
  status?: number;
  headers?: Record<string, string>;
}

/** Streams exactly these frames (each written as given, so include the blank line; binary framings give bytes). */
export interface SseStep extends ScriptStepBase {
  kind: 'sse';
  frames: Array<string | Buffer>;
  status?: number;
  headers?: Record<string, string>;
  chunkDelayMs?: number;
}

/**
 * Sends `afterChunks` default frames, then an in-band error in the provider's
 * format, then ends. On a non-streaming answer: a 500 in the provider's error shape.
 */
export interface ErrorEventStep extends ScriptStepBase {
  kind: 'error-event';
  afterChunks: number;
  message?: string;
  errorType?: string;
}

export type ScriptStep =
  | DelayStep
  | StatusStep
  | ResetBeforeStep
  | ResetDuringStreamStep
  | MalformedJsonStep
  | MalformedSseStep
  | StallStep
  | SlowStreamStep
  | HoldStep
  | JsonStep
  | SseStep
  | ErrorEventStep;

/** What a handler decided to send; the machinery writes it (or a fault derived from it). */
export type UpstreamAnswer =
  | { kind: 'json'; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'bytes'; status?: number; contentType: string; body: Buffer; headers?: Record<string, string> }
  | { kind: 'sse'; status?: number; frames: Array<string | Buffer>; headers?: Record<string, string> };

/** A custom endpoint, keyed `"POST /v1/embeddings"` in `routes`. */
export type UpstreamRouteHandler = (request: RecordedRequest) => UpstreamAnswer;

export interface UpstreamServerOptions {
  /** When set, requests whose key differs get the provider's 401. */
  expectedApiKey?: string;
  /** Characters per streamed text or argument piece (default 4). */
  streamChunkSize?: number;
  /**
   * Arguments of the default tool call. Default: `{"input":"<last user text>"}`.
   */
  toolArguments?: Record<string, unknown>;
  /** Ids listed by `GET /v1/models`. */
  models?: string[];
  /** Extra endpoints, keyed `"<METHOD> <path>"` (`:name` segments match one path segment); they take precedence over the defaults. */
  routes?: Record<string, UpstreamRouteHandler>;
  /**
   * A provider that leaks its credential: every {@link CREDENTIAL_PLACEHOLDER}
   * in what it sends (JSON, frames, bytes) becomes the credential the request
   * carried (its `authorization` value, e.g. `Bearer sk-…`, else `x-api-key`).
   * The default answers echo the prompt, so a prompt holding the placeholder
   * makes the answer's content hold the key.
   */
  echoCredential?: boolean;
}

/** What an `echoCredential` server replaces with the request's credential. */
export const CREDENTIAL_PLACEHOLDER = '{{credential}}';

export interface UpstreamServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:40123/v1`. */
  readonly url: string;
  /** The same without `/v1` (the Anthropic SDK's `baseURL` adds `/v1` itself). */
  readonly origin: string;
  readonly port: number;
  /** Every request whose body was read, in arrival order. */
  readonly requests: RecordedRequest[];
  /** Requests whose client closed the connection before the answer finished. */
  readonly aborted: RecordedRequest[];
  /** Number of scripted steps not consumed yet. */
  readonly pendingSteps: number;
  /** Queues behaviours, consumed one per matching request. */
  script(...steps: ScriptStep[]): void;
  /** Clears the recordings, the script and the sequence counter. */
  reset(): void;
  /** Resolves once `count` requests were recorded (rejects after `timeoutMs`, 10 s unless told: a budget for a busy machine). */
  waitForRequests(count: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Resolves once `count` aborts were seen (rejects after `timeoutMs`, 10 s unless told). */
  waitForAborted(count?: number, timeoutMs?: number): Promise<RecordedRequest[]>;
  /** Destroys open sockets, clears timers and stops listening. Idempotent. */
  close(): Promise<void>;
}

/** Fields an error body or in-band error event is built from. */
export interface UpstreamErrorDetails {
  message?: string;
  errorType?: string;
  param?: string | null;
  code?: string | null;
}

/** What a provider file plugs into the machinery. */
export interface UpstreamDialect {
  /** Response header carrying the generated request id (`x-request-id`, `request-id`). */
  requestIdHeader: string;
  /**
   * Auth and protocol checks, run before any script step; an answer returned
   * here is sent as is and consumes no step.
   */
  check(request: RecordedRequest): UpstreamAnswer | undefined | Promise<UpstreamAnswer | undefined>;
  /** The deterministic default answer (including 404s and validation errors). */
  answer(request: RecordedRequest): UpstreamAnswer;
  /** The provider's error body for a status. */
  errorBody(status: number, details: UpstreamErrorDetails, request: RecordedRequest): unknown;
  /** An in-band error frame; `frameIndex` is the number of frames already sent. */
  errorEventFrame(request: RecordedRequest, details: UpstreamErrorDetails, frameIndex: number): string | Buffer;
  /** A frame the provider's SDK would try to JSON-parse, with data that is not JSON. */
  malformedSseFrame(request: RecordedRequest): string | Buffer;
}

// ---------------------------------------------------------------------------
// Shared wire helpers used by the dialects
// ---------------------------------------------------------------------------

/** Fixed `created` timestamp so answers are byte-for-byte deterministic. */
export const UPSTREAM_CREATED = 1_700_000_000;

/**
 * The servers' token estimate: one token per 4 characters, rounded up. Prompt
 * tokens apply it to the concatenated string values of the prompt (see each
 * dialect), completion tokens to the answer text or the tool name + arguments.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** Splits text into pieces of `size` code points (never inside a surrogate pair). */
export function splitText(text: string, size: number): string[] {
  const points = Array.from(text);
  const pieces: string[] = [];
  for (let i = 0; i < points.length; i += size) pieces.push(points.slice(i, i + size).join(''));
  return pieces;
}

/** Truncates to `maxTokens` tokens under the 4-characters estimate. */
export function truncateToTokens(text: string, maxTokens: number): string {
  return Array.from(text).slice(0, maxTokens * 4).join('');
}

/** Cuts the text before the earliest stop sequence found in it. */
export function applyStopSequences(text: string, stops: readonly string[]): { text: string; matched: string | undefined } {
  let cut = -1;
  let matched: string | undefined;
  for (const stop of stops) {
    if (stop.length === 0) continue;
    const index = text.indexOf(stop);
    if (index !== -1 && (cut === -1 || index < cut)) {
      cut = index;
      matched = stop;
    }
  }
  return cut === -1 ? { text, matched: undefined } : { text: text.slice(0, cut), matched };
}

/** Concatenates every string value under `value`, skipping `role` and `type` keys. */
export function collectPromptText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(collectPromptText).join('');
  if (isRecord(value)) {
    return Object.entries(value)
      .filter(([key]) => key !== 'role' && key !== 'type')
      .map(([, item]) => collectPromptText(item))
      .join('');
  }
  return '';
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A data-only SSE frame (chat completions). */
export function dataFrame(data: unknown): string {
  return `data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`;
}

/** A named SSE frame (Anthropic, Responses). */
export function namedFrame(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export const SSE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
};

// ---------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------

/** One request/response exchange in flight. */
interface Exchange {
  request: IncomingMessage;
  response: ServerResponse;
  record: RecordedRequest;
  /** Fires when the client goes away or the server closes. */
  signal: AbortSignal;
  /** Set when this server destroyed the socket on purpose (not a client abort). */
  destroyedByServer: boolean;
}

/**
 * Default deadline of waitForRequests/waitForAborted. What they wait for takes
 * milliseconds on an idle machine; the deadline only bounds a failure.
 */
const WAIT_BUDGET_MS = 10_000;

const MALFORMED_JSON_BODY = '{"id":"broken","object":"chat.completion","choices":[{"index":0,"message":{"role":';

export async function startUpstreamServer(
  dialect: UpstreamDialect,
  options: UpstreamServerOptions = {},
): Promise<UpstreamServer> {
  const requests: RecordedRequest[] = [];
  const aborted: RecordedRequest[] = [];
  let queue: ScriptStep[] = [];
  let sequence = 0;
  let closing = false;
  const sockets = new Set<Socket>();
  const serverController = new AbortController();
  /** Pending waitFor* calls: re-check on every change, cancel on close. */
  const waiters = new Map<() => void, () => void>();
  const routes = options.routes ?? {};

  const notify = (): void => {
    for (const check of [...waiters.keys()]) check();
  };

  const server = createServer({ keepAlive: true }, (request, response) => {
    void handleExchange(request, response);
  });
  // Long enough that a client's pooled connection is never closed under it mid-test.
  server.keepAliveTimeout = 10_000;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', ignoreError);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => {
    socket.destroy();
  });

  async function handleExchange(request: IncomingMessage, response: ServerResponse): Promise<void> {
    request.on('error', ignoreError);
    response.on('error', ignoreError);
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const record: RecordedRequest = {
      sequence: ++sequence,
      method: request.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams.entries()),
      headers: flattenHeaders(request.headers),
      body: undefined,
      rawBody: '',
      rawBytes: Buffer.alloc(0),
      params: {},
      step: undefined,
    };
    const controller = new AbortController();
    const stopOnServerClose = (): void => controller.abort();
    serverController.signal.addEventListener('abort', stopOnServerClose, { once: true });
    const exchange: Exchange = { request, response, record, signal: controller.signal, destroyedByServer: false };

    response.on('close', () => {
      serverController.signal.removeEventListener('abort', stopOnServerClose);
      if (!response.writableFinished && !exchange.destroyedByServer && !closing) {
        aborted.push(record);
        notify();
      }
      controller.abort();
    });

    const rawBytes = await readBody(request, controller.signal);
    if (rawBytes === undefined) return;
    record.rawBytes = rawBytes;
    record.rawBody = rawBytes.toString('utf8');
    record.body = parseJson(record.rawBody);
    requests.push(record);
    notify();

    try {
      const refusal = await dialect.check(record);
      if (refusal) {
        await sendAnswer(exchange, refusal);
        return;
      }
      const step = takeStep(record.path);
      record.step = step;
      await perform(exchange, step);
    } catch (_error) {
      // A bug in a handler must not take the test process down; the client sees a reset.
      destroyConnection(exchange);
    }
  }

  function takeStep(path: string): ScriptStep | undefined {
    const index = queue.findIndex((step) => step.path === undefined || step.path === path || `/v1${step.path}` === path);
    if (index === -1) return undefined;
    const [step] = queue.splice(index, 1);
    return step;
  }

  function defaultAnswer(record: RecordedRequest): UpstreamAnswer {
    const custom = routes[`${record.method} ${record.path}`] ?? matchRoute(record);
    return custom ? custom(record) : dialect.answer(record);
  }

  /** A custom route whose key has `:name` segments, with the values put in `record.params`. */
  function matchRoute(record: RecordedRequest): UpstreamRouteHandler | undefined {
    const segments = record.path.split('/');
    for (const [key, handler] of Object.entries(routes)) {
      const [method, pattern] = key.split(' ');
      if (method !== record.method || !pattern?.includes(':')) continue;
      const parts = pattern.split('/');
      if (parts.length !== segments.length) continue;
      const params: Record<string, string> = {};
      if (parts.every((part, index) => (part.startsWith(':') ? ((params[part.slice(1)] = decodeURIComponent(segments[index]!)), true) : part === segments[index]))) {
        record.params = params;
        return handler;
      }
    }
    return undefined;
  }

  async function perform(exchange: Exchange, step: ScriptStep | undefined): Promise<void> {
    const { record, signal } = exchange;
    if (step === undefined) return sendAnswer(exchange, defaultAnswer(record));
    switch (step.kind) {
      case 'delay':
        if (await sleep(step.ms, signal)) await sendAnswer(exchange, defaultAnswer(record));
        return;
      case 'status': {
        const details: UpstreamErrorDetails = {
          message: step.message,
          errorType: step.errorType,
          param: step.param,
          code: step.code,
        };
        const body = step.body === undefined ? dialect.errorBody(step.status, details, record) : step.body;
        sendBody(exchange, step.status, body, step.headers);
        return;
      }
      case 'reset-before':
        destroyConnection(exchange);
        return;
      case 'reset-during-stream': {
        const answer = defaultAnswer(record);
        if (answer.kind === 'json') {
          const text = JSON.stringify(answer.body);
          writeHead(exchange, answer.status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) }, answer.headers);
          await writeChunk(exchange, text.slice(0, Math.floor(text.length / 2)));
        } else if (answer.kind === 'bytes') {
          writeHead(exchange, answer.status ?? 200, { 'content-type': answer.contentType, 'content-length': String(answer.body.length) }, answer.headers);
          await writeChunk(exchange, answer.body.subarray(0, Math.floor(answer.body.length / 2)));
        } else {
          startStream(exchange, answer);
          await writeFrames(exchange, answer.frames.slice(0, cappedCount(step.afterChunks, answer.frames)));
        }
        destroyConnection(exchange);
        return;
      }
      case 'malformed-json':
        sendBody(exchange, 200, MALFORMED_JSON_BODY, { 'content-type': 'application/json' });
        return;
      case 'malformed-sse': {
        const answer = defaultAnswer(record);
        if (answer.kind !== 'sse') {
          sendBody(exchange, 200, MALFORMED_JSON_BODY, { 'content-type': 'application/json' });
          return;
        }
        startStream(exchange, answer);
        const sent = answer.frames.slice(0, cappedCount(step.afterChunks, answer.frames));
        if (await writeFrames(exchange, sent)) {
          if (await writeChunk(exchange, dialect.malformedSseFrame(record))) endResponse(exchange);
        }
        return;
      }
      case 'stall': {
        const answer = defaultAnswer(record);
        if (answer.kind === 'json') {
          const text = JSON.stringify(answer.body);
          writeHead(exchange, answer.status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) }, answer.headers);
          exchange.response.flushHeaders();
          if (await sleep(step.ms, signal)) {
            if (await writeChunk(exchange, text)) endResponse(exchange);
          }
          return;
        }
        if (answer.kind === 'bytes') {
          writeHead(exchange, answer.status ?? 200, { 'content-type': answer.contentType, 'content-length': String(answer.body.length) }, answer.headers);
          exchange.response.flushHeaders();
          if (await sleep(step.ms, signal)) {
            if (await writeChunk(exchange, answer.body)) endResponse(exchange);
          }
          return;
        }
        startStream(exchange, answer);
        const count = cappedCount(step.afterChunks, answer.frames);
        if (!(await writeFrames(exchange, answer.frames.slice(0, count)))) return;
        if (!(await sleep(step.ms, signal))) return;
        if (step.resume && !(await writeFrames(exchange, answer.frames.slice(count)))) return;
        endResponse(exchange);
        return;
      }
      case 'hold': {
        const answer = defaultAnswer(record);
        const released = new Promise<boolean>((resolve) => {
          if (signal.aborted) return resolve(false);
          signal.addEventListener('abort', () => resolve(false), { once: true });
          step.until.then(
            () => resolve(true),
            () => resolve(true),
          );
        });
        if (answer.kind !== 'sse') {
          if (await released) await sendAnswer(exchange, answer);
          return;
        }
        startStream(exchange, answer);
        const count = cappedCount(step.afterChunks, answer.frames);
        if (!(await writeFrames(exchange, answer.frames.slice(0, count)))) return;
        if (!(await released)) return;
        if (await writeFrames(exchange, answer.frames.slice(count))) endResponse(exchange);
        return;
      }
      case 'slow-stream': {
        const answer = defaultAnswer(record);
        if (answer.kind !== 'sse') {
          if (await sleep(step.chunkDelayMs, signal)) await sendAnswer(exchange, answer);
          return;
        }
        startStream(exchange, answer);
        if (await writeFrames(exchange, answer.frames, step.chunkDelayMs)) endResponse(exchange);
        return;
      }
      case 'json':
        sendBody(exchange, step.status ?? 200, step.body, step.headers);
        return;
      case 'sse':
        startStream(exchange, { kind: 'sse', status: step.status, frames: step.frames, headers: step.headers });
        if (await writeFrames(exchange, step.frames, step.chunkDelayMs ?? 0)) endResponse(exchange);
        return;
      case 'error-event': {
        const answer = defaultAnswer(record);
        const details: UpstreamErrorDetails = { message: step.message ?? 'Upstream test server error', errorType: step.errorType };
        if (answer.kind !== 'sse') {
          sendBody(exchange, 500, dialect.errorBody(500, details, record));
          return;
        }
        startStream(exchange, answer);
        const count = cappedCount(step.afterChunks, answer.frames);
        if (!(await writeFrames(exchange, answer.frames.slice(0, count)))) return;
        if (await writeChunk(exchange, dialect.errorEventFrame(record, details, count))) endResponse(exchange);
        return;
      }
    }
  }

  function writeHead(
    exchange: Exchange,
    status: number,
    base: Record<string, string>,
    extra: Record<string, string> | undefined,
  ): void {
    if (exchange.response.headersSent || exchange.response.destroyed) return;
    const headers: Record<string, string> = {
      [dialect.requestIdHeader]: `req_${exchange.record.sequence}`,
      ...lowerCaseKeys(base),
      ...lowerCaseKeys(extra ?? {}),
    };
    exchange.response.writeHead(status, headers);
  }

  /** The credential the request carried in place of each placeholder, on an `echoCredential` server. */
  function leak<T extends string | Buffer>(exchange: Exchange, data: T): T {
    if (!options.echoCredential) return data;
    const credential = exchange.record.headers.authorization ?? exchange.record.headers['x-api-key'] ?? '';
    if (typeof data === 'string') return data.split(CREDENTIAL_PLACEHOLDER).join(credential) as T;
    const text = data.toString('latin1');
    return (text.includes(CREDENTIAL_PLACEHOLDER) ? Buffer.from(text.split(CREDENTIAL_PLACEHOLDER).join(credential), 'latin1') : data) as T;
  }

  /** A complete non-streaming body: strings verbatim, anything else as JSON. */
  function sendBody(exchange: Exchange, status: number, body: unknown, headers?: Record<string, string>): void {
    if (exchange.response.destroyed) return;
    const text = leak(exchange, typeof body === 'string' ? body : JSON.stringify(body));
    writeHead(exchange, status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)) }, headers);
    exchange.response.end(text);
  }

  async function sendAnswer(exchange: Exchange, answer: UpstreamAnswer): Promise<void> {
    if (answer.kind === 'json') {
      sendBody(exchange, answer.status, answer.body, answer.headers);
      return;
    }
    if (answer.kind === 'bytes') {
      if (exchange.response.destroyed) return;
      const bytes = leak(exchange, answer.body);
      writeHead(exchange, answer.status ?? 200, { 'content-type': answer.contentType, 'content-length': String(bytes.length) }, answer.headers);
      exchange.response.end(bytes);
      return;
    }
    startStream(exchange, answer);
    if (await writeFrames(exchange, answer.frames)) endResponse(exchange);
  }

  function startStream(exchange: Exchange, answer: Extract<UpstreamAnswer, { kind: 'sse' }>): void {
    writeHead(exchange, answer.status ?? 200, SSE_HEADERS, answer.headers);
    if (!exchange.response.destroyed) exchange.response.flushHeaders();
  }

  /** Writes frames one by one; false when the exchange died on the way. */
  async function writeFrames(exchange: Exchange, frames: ReadonlyArray<string | Buffer>, delayMs = 0): Promise<boolean> {
    for (const frame of frames) {
      if (delayMs > 0 && !(await sleep(delayMs, exchange.signal))) return false;
      if (!(await writeChunk(exchange, frame))) return false;
    }
    return true;
  }

  /** Resolves once the chunk is handed to the socket; false if the client is gone. */
  function writeChunk(exchange: Exchange, chunk: string | Buffer): Promise<boolean> {
    const { response, signal } = exchange;
    if (signal.aborted || response.destroyed || response.writableEnded) return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = (): void => resolve(false);
      signal.addEventListener('abort', onAbort, { once: true });
      response.write(leak(exchange, chunk), (error) => {
        signal.removeEventListener('abort', onAbort);
        resolve(!error && !signal.aborted);
      });
    });
  }

  function endResponse(exchange: Exchange): void {
    if (!exchange.response.destroyed && !exchange.response.writableEnded) exchange.response.end();
  }

  function destroyConnection(exchange: Exchange): void {
    exchange.destroyedByServer = true;
    // A plain destroy (FIN) rather than an RST: bytes already written are
    // guaranteed to reach the client before it sees the connection drop.
    exchange.request.socket.destroy();
    exchange.response.destroy();
  }

  function waitFor<T>(ready: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const value = ready();
        if (value === undefined) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve(value);
      };
      const fail = (reason: string): void => {
        clearTimeout(timer);
        waiters.delete(check);
        reject(new Error(`upstream test server: ${reason} while waiting for ${what}`));
      };
      const timer = setTimeout(() => fail(`timed out after ${timeoutMs} ms`), timeoutMs);
      waiters.set(check, () => fail('closed'));
      check();
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | undefined;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    aborted,
    get pendingSteps() {
      return queue.length;
    },
    script(...steps: ScriptStep[]) {
      queue.push(...steps);
    },
    reset() {
      requests.length = 0;
      aborted.length = 0;
      queue = [];
      sequence = 0;
    },
    waitForRequests(count: number, timeoutMs = WAIT_BUDGET_MS) {
      return waitFor(() => (requests.length >= count ? requests : undefined), timeoutMs, `${count} request(s)`);
    },
    waitForAborted(count = 1, timeoutMs = WAIT_BUDGET_MS) {
      return waitFor(() => (aborted.length >= count ? aborted : undefined), timeoutMs, `${count} aborted request(s)`);
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        closing = true;
        serverController.abort();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
        for (const cancel of [...waiters.values()]) cancel();
      });
      return closed;
    },
  };
}

// ---------------------------------------------------------------------------
// Small internals
// ---------------------------------------------------------------------------

function ignoreError(): void {
  // EPIPE / ECONNRESET after a client abort are expected here.
}

/** Never more than all-but-the-last frame, so a fault always leaves the stream unfinished. */
function cappedCount(afterChunks: number, frames: readonly unknown[]): number {
  return Math.max(0, Math.min(Math.floor(afterChunks), frames.length - 1));
}

/** Resolves true after `ms`, or false as soon as `signal` aborts (the timer is cleared). */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function readBody(request: IncomingMessage, signal: AbortSignal): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const onAbort = (): void => resolve(undefined);
    signal.addEventListener('abort', onAbort, { once: true });
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      signal.removeEventListener('abort', onAbort);
      resolve(Buffer.concat(chunks));
    });
    request.on('error', () => {
      signal.removeEventListener('abort', onAbort);
      resolve(undefined);
    });
  });
}

function parseJson(text: string): unknown {
  if (text.length === 0) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch (_error) {
    return undefined;
  }
}

function flattenHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    flat[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return flat;
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}
