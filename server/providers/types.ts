/**
 * The contract between the routing layer and the provider adapters. Adapters
 * are translators plus data; the HTTP itself (pool, retries, timeouts, abort,
 * bounded reads) is the transport the routing layer hands them for one
 * deployment. An adapter imports nothing but the canonical types, these
 * types, the SSE parser, the tokenizer and the error classes.
 */
import type { BridgeReport, CanonicalRequest, CanonicalResponse, CanonicalStreamEvent } from './canonical.js';
import type { SseEvent } from '../sse/sse-parser.js';
import type { UpstreamError } from '../errors.js';
import type { EmbeddingList } from './openai/openai-embeddings.wire.js';
import type { ModerationResult } from './openai/openai-moderations.wire.js';
import type { ImagesResponse, ImageStreamEvent } from './openai/openai-images.wire.js';

/** The three chat wire formats a client may speak. */
export type ChatFormat = 'chat' | 'messages' | 'responses';

/** Every kind of provider the catalog can name. */
export type ProviderKind = 'openai' | 'anthropic' | 'mock';

/** A provider as configured (secrets already resolved from the environment). */
export interface ProviderConnection {
  /** Provider id from the catalog, e.g. `openai-main`. */
  id: string;
  kind: ProviderKind;
  /** Base URL including the version prefix, e.g. `https://api.openai.com/v1`. */
  baseUrl: string;
  /** Resolved secret; never logged. */
  apiKey?: string;
  /** Extra headers sent on every request (OpenAI-compatible servers often need some). */
  headers?: Record<string, string>;
}

export interface UpstreamHttpRequest {
  method: 'POST' | 'GET' | 'DELETE';
  url: string;
  headers: Record<string, string>;
  /** A JSON text, bytes, or a body streamed as it is read (multipart uploads). */
  body?: string | Uint8Array | AsyncIterable<Uint8Array>;
}

/** A provider's answer body, read once. */
export interface UpstreamBody extends AsyncIterable<Uint8Array> {
  destroy(error?: Error): void;
}

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | undefined>;
  body: UpstreamBody;
}

/** Provider error answer → UpstreamError (status kept, retryable set, message safe). */
export type ParseUpstreamError = (status: number, bodyText: string, headers: Record<string, string | undefined>) => UpstreamError;

/**
 * HTTP to one deployment's provider, bound to the request (abort on client
 * disconnect) and to the provider's timeouts and retries. Every read is
 * bounded and decodes UTF-8 across chunk boundaries.
 */
export interface UpstreamTransport {
  readonly providerId: string;
  readonly signal: AbortSignal;
  /** Answers a 2xx response with its body unread; throws UpstreamError or ClientAbortedError. */
  send(request: UpstreamHttpRequest, parseError: ParseUpstreamError): Promise<UpstreamResponse>;
  /** Reads a JSON answer whole (at most the transport's limit): the parsed value and its text. */
  readJson(response: UpstreamResponse): Promise<{ value: unknown; text: string }>;
  /** Reads a body whole, at most `limit` bytes. */
  readBytes(response: UpstreamResponse, limit: number): Promise<Buffer>;
  /** The answer's server-sent events; the body is released when the loop ends. */
  readEvents(response: UpstreamResponse): AsyncIterable<SseEvent>;
}

/** Stateful translator of one provider stream into canonical events. */
export interface StreamDecoder {
  push(event: SseEvent): CanonicalStreamEvent[];
  /** End of input; emits a closing `finish` if the provider never sent one. */
  end(): CanonicalStreamEvent[];
}

/** What a client sent that a same-format provider should see too. */
export interface NativeForwarding {
  headers: Readonly<Record<string, string | undefined>>;
  /** The client's query string (e.g. `beta=true`). */
  query: string;
}

/** The provider request carrying a client's body unchanged but for the fields the gateway sets (model, usage reporting). */
export type NativeRequestBuilder = (connection: ProviderConnection, body: Record<string, unknown>, forwarding: NativeForwarding) => UpstreamHttpRequest;

/** A canonical request translated for one provider, not sent yet: what the bridge could not carry, and how to run it. */
export interface PreparedChat {
  report: BridgeReport;
  complete(transport: UpstreamTransport): Promise<CanonicalResponse>;
  stream(transport: UpstreamTransport): Promise<AsyncIterable<CanonicalStreamEvent>>;
}

/** Chat generation (chat completions, messages, responses, compaction). */
export interface ChatAdapter {
  /** Formats the provider speaks itself: a client speaking one of them is passed through. `compact` is native Responses compaction. */
  native: Partial<Record<ChatFormat | 'compact', NativeRequestBuilder>>;
  prepare(connection: ProviderConnection, request: CanonicalRequest): PreparedChat;
  parseError: ParseUpstreamError;
}

/** `POST /v1/messages/count_tokens`, the Anthropic-format body. */
export interface CountTokensAdapter {
  /** The provider's count, or the local estimate for providers without one. */
  countTokens(transport: UpstreamTransport, connection: ProviderConnection, body: Record<string, unknown>, forwarding: NativeForwarding): Promise<number>;
}

/** `POST /v1/embeddings`: what an adapter is asked. */
export interface EmbeddingsCall {
  /** The client's body with the model already the upstream's (same-format providers get it as is). */
  body: Record<string, unknown>;
  /** The inputs, each a text or token ids (ids decode with the o200k tokenizer). */
  inputs: ReadonlyArray<string | readonly number[]>;
  /** Vector size: the request's `dimensions`, else the model's catalog size. */
  dimensions: number;
  encodingFormat: 'float' | 'base64';
}

/** An embeddings answer and what it used. */
export interface EmbeddingsAnswer {
  body: EmbeddingList;
  /** The provider's bytes when its answer is passed through unchanged. */
  raw?: string;
  /** Input tokens as the provider counted them, when it did. */
  promptTokens?: number;
}

/** `POST /v1/embeddings`. */
export interface EmbeddingsAdapter {
  embed(transport: UpstreamTransport, connection: ProviderConnection, call: EmbeddingsCall): Promise<EmbeddingsAnswer>;
}

/** `POST /v1/moderations`: what an adapter is asked. */
export interface ModerationsCall {
  /** The client's body with the model already the upstream's. */
  body: Record<string, unknown>;
  /** One entry per result: the texts of that input (images are not classified). */
  texts: string[][];
  /** The input was OpenAI's multimodal item form. */
  multimodal: boolean;
  /** Positions of its `image_url` items. */
  imageItems: number[];
}

/** `POST /v1/moderations`. */
export interface ModerationsAdapter {
  /** The verdicts; `ignored` names the inputs the provider could not classify (`input[1].image_url`). */
  moderate(transport: UpstreamTransport, connection: ProviderConnection, call: ModerationsCall): Promise<{ body: ModerationResult; raw?: string; ignored?: string[] }>;
}

/**
 * An uploaded file the gateway holds on disk (an image or mask of an edit):
 * `open()` reads it as a stream each time it is called (a retried upload
 * reads it again). `path` is a file the gateway itself wrote.
 */
export interface UploadedMedia {
  /** The form field it came in (`image`, `image[]`, `mask`). */
  field: string;
  filename: string;
  contentType: string;
  size: number;
  path: string;
  open(): AsyncIterable<Uint8Array>;
}

/** What both image operations share. */
interface ImageCallBase {
  prompt: string;
  /** Pixels of each output image (`auto` already resolved: the mock's choice). */
  width: number;
  height: number;
  /** The size as asked (`1024x1024`, `auto`), for stream events. */
  sizeLabel: string;
  /** The `quality` asked, if any. */
  quality?: string;
  count: number;
  /** Partial images per streamed image (0–3). */
  partialImages: number;
}

/** `POST /v1/images/generations`: the client's JSON body (model the upstream's) and its resolved values. */
export interface ImageGenerationCall extends ImageCallBase {
  body: Record<string, unknown>;
}

/** `POST /v1/images/edits`: the form's text fields (model the upstream's), the images and the mask. */
export interface ImageEditCall extends ImageCallBase {
  fields: Record<string, string>;
  images: UploadedMedia[];
  mask?: UploadedMedia;
}

/**
 * Image generation and edits. The non-streamed calls answer an Image list
 * (each image as `b64_json` or the provider's own `url`); the streamed ones
 * the provider's events (`*.partial_image`, `*.completed`, `error`).
 */
export interface ImagesAdapter {
  generate(transport: UpstreamTransport, connection: ProviderConnection, call: ImageGenerationCall): Promise<ImagesResponse>;
  streamGeneration(transport: UpstreamTransport, connection: ProviderConnection, call: ImageGenerationCall): Promise<AsyncIterable<ImageStreamEvent>>;
  edit(transport: UpstreamTransport, connection: ProviderConnection, call: ImageEditCall): Promise<ImagesResponse>;
  streamEdit(transport: UpstreamTransport, connection: ProviderConnection, call: ImageEditCall): Promise<AsyncIterable<ImageStreamEvent>>;
}
