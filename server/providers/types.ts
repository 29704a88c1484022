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
import type { Transcript } from '../media/subtitles.js';
import type { EmbeddingList } from './openai/openai-embeddings.wire.js';
import type { ModerationResult } from './openai/openai-moderations.wire.js';
import type { ImagesResponse, ImageStreamEvent } from './openai/openai-images.wire.js';

/** The three chat wire formats a client may speak. */
export type ChatFormat = 'chat' | 'messages' | 'responses';

/** Every kind of provider the catalog can name. */
export const PROVIDER_KIND_NAMES = ['openai', 'anthropic', 'mock', 'azure', 'bedrock'] as const;
export type ProviderKind = (typeof PROVIDER_KIND_NAMES)[number];

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
  /** When set, the only client betas this provider receives (`*`: any); unset: every beta the client sent. */
  allowedBetas?: readonly string[];
  /** Azure OpenAI: the `api-version` of deployment URLs, and an Entra ID token sent instead of the `api-key` (resolved). */
  azure?: { apiVersion?: string; entraToken?: string };
  /** AWS Signature V4 region and credentials (`bedrock`), secrets resolved; never logged. */
  aws?: AwsConnection;
}

/** What a request signed with AWS Signature V4 needs. A credential whose variable is unset is absent. */
export interface AwsConnection {
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  sessionToken?: string;
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
  /** The answer's bytes as they come (binary stream framings); read failures mapped as for events; the body is released when the loop ends. */
  readChunks(response: UpstreamResponse): AsyncIterable<Uint8Array>;
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

/** Audio as a provider produces it: its content type up front, its bytes as they come. */
export interface SpeechAudio {
  /** The provider's own content type (`audio/mpeg`, `audio/ogg`…). */
  contentType: string;
  /** The file, in order, read once. Ending the iteration early stops the provider (synthesis or HTTP body). */
  chunks: AsyncIterable<Uint8Array>;
}

/** `POST /v1/audio/speech` (the OpenAI-format body, already validated, model already the upstream's). */
export interface SpeechAdapter {
  /** Resolves once the provider has started answering (its headers, or the mock's encoder); throws UpstreamError before that. */
  synthesize(transport: UpstreamTransport, connection: ProviderConnection, body: Record<string, unknown>): Promise<SpeechAudio>;
}

/** An uploaded audio file on disk (never whole in memory). */
export interface AudioUpload {
  path: string;
  /** As the client named it (providers guess formats from the extension). */
  filename: string;
  /** As the client declared it. */
  contentType: string;
  size: number;
}

/** A transcription or translation to run: the file, and the client's form fields (model already the upstream's). */
export interface TranscriptionJob {
  task: 'transcribe' | 'translate';
  file: AudioUpload;
  /** Text fields as the client sent them (a repeated field is an array), `file` excluded. */
  fields: Record<string, unknown>;
}

/** What a provider transcribed: always with segments, so that the gateway can render every `response_format`. */
export interface TranscriptionResult {
  transcript: Transcript;
  /** The provider's own `verbose_json` text, when it answered one (passed on as it came). */
  verboseJson?: string;
  /** Seconds of audio as the provider counted them, when it said (billing uses them before any estimate). */
  seconds?: number;
}

/** `POST /v1/audio/transcriptions` and `/v1/audio/translations`. */
export interface TranscriptionAdapter {
  transcribe(transport: UpstreamTransport, connection: ProviderConnection, job: TranscriptionJob): Promise<TranscriptionResult>;
}

/** A video generation as a provider reports it. */
export interface UpstreamVideo {
  /** The provider's id of the generation. */
  id: string;
  status: 'queued' | 'in_progress' | 'completed' | 'failed';
  /** 0–100, when the provider says. */
  progress?: number;
  /** Duration of the finished video in seconds, when the provider says. */
  durationSeconds?: number;
  /** Why the generation failed, as the provider says (shown to the client). */
  error?: string;
  /** When to look again, ms, when the provider knows. */
  retryAfterMs?: number;
}

/** A file sent with a request (a video's input reference), read from storage as it is sent. */
export interface UpstreamFile {
  filename: string;
  contentType: string;
  size: number;
  open(): AsyncIterable<Uint8Array>;
}

/** `POST /v1/videos` as a provider gets it: the upstream model, bounds already checked. */
export interface VideoGenerationRequest {
  model: string;
  prompt: string;
  /** `WIDTHxHEIGHT`. */
  size: string;
  seconds: number;
  inputReference?: UpstreamFile;
}

/** A generation the provider accepted: its id, and the request it was created with. */
export interface VideoJobRef {
  providerJobId: string;
  request: Omit<VideoGenerationRequest, 'inputReference'>;
}

export type VideoVariant = 'video' | 'thumbnail' | 'spritesheet';

/** A file of a finished generation, streamed. */
export interface VideoDownload {
  contentType: string;
  /** Declared length, when the provider declares one. */
  contentLength?: number;
  body: AsyncIterable<Uint8Array>;
}

export interface VideoCreateOptions {
  /** The gateway's id of the video: sent as the idempotency key, so a create retried after an uncertain answer creates nothing twice. */
  idempotencyKey: string;
  /** How long a simulated provider (the mock) takes, ms. */
  simulatedDelayMs: number;
}

/** Asynchronous video generation (`/v1/videos`): create, poll, download, delete. */
export interface VideosAdapter {
  create(transport: UpstreamTransport, connection: ProviderConnection, request: VideoGenerationRequest, options: VideoCreateOptions): Promise<UpstreamVideo>;
  retrieve(transport: UpstreamTransport, connection: ProviderConnection, job: VideoJobRef): Promise<UpstreamVideo>;
  /** A file of a completed generation. */
  download(transport: UpstreamTransport, connection: ProviderConnection, job: VideoJobRef, variant: VideoVariant): Promise<VideoDownload>;
  /** Cancels the generation, or deletes its files at the provider; a generation the provider no longer knows is not an error. */
  remove(transport: UpstreamTransport, connection: ProviderConnection, job: VideoJobRef): Promise<void>;
}
