/**
 * One generation on the chat family of endpoints (chat completions,
 * messages, responses, compaction), from a validated client body to a typed
 * JSON answer or a typed stream: routing picks the model and deployments,
 * metering holds and settles, the relay streams. Same-format providers are
 * passed through; others are bridged through the canonical types.
 */
import { nextId } from '../ids.js';
import type { JsonAnswer, StreamAnswer } from '../answers.js';
import type { CatalogModel } from '../catalog/catalog.js';
import type { Endpoint } from '../catalog/catalog.schema.js';
import type { BridgeReport, CanonicalMessage, CanonicalRequest, CanonicalResponse } from '../providers/canonical.js';
import type { ChatAdapter, NativeRequestBuilder, ProviderConnection, UpstreamTransport } from '../providers/types.js';
import { estimateRequestTokens } from '../providers/request-tokens.js';
import type { AnswerIdentity, ClientCodec } from './codec.js';
import { usageOfResponse } from './delivery-tracker.js';
import type { Meter } from '../operations/metering.js';
import { bridgedSource, nativeSource, relay } from './relay.js';
import { assertCanStream, fidelityHeaders, isStrict, mergeReports, type OperationContext } from '../operations/routing.js';
import { guardStream } from './stream-guard.js';
import { isChoiceCount } from '../validation.js';
import { runOperation, type Served } from '../operations/run-operation.js';

/** Output tokens reserved for a request that sets no cap (the hold is released down to the real cost). */
export const DEFAULT_HOLD_OUTPUT_TOKENS = 4096;

export interface GenerationOptions<Body extends Record<string, unknown>, Json, Event> {
  endpoint: Endpoint;
  codec: ClientCodec<Body, Json, Event>;
  body: Body;
  /** Never pass through, even to a provider that speaks the client's format (the request was rebuilt). */
  forceBridge?: boolean;
  /** The stored conversation behind `previous_response_id`, which the usage check reads with the body. */
  history?: readonly CanonicalMessage[];
  /** Called with the final canonical answer (non-stream) or the assembled one (stream), e.g. to store it. */
  onComplete?: (request: CanonicalRequest, response: CanonicalResponse, identity: AnswerIdentity) => Promise<void> | void;
}

export type GenerationAnswer<Json, Event> = JsonAnswer<Json> | StreamAnswer<Event>;

interface Generation<Body extends Record<string, unknown>, Json, Event> {
  context: OperationContext;
  options: GenerationOptions<Body, Json, Event>;
  model: CatalogModel;
  canonical: CanonicalRequest;
  report: BridgeReport;
  stream: boolean;
  strict: boolean;
  identity: AnswerIdentity;
  meter: Meter;
  /** Stops the upstream of a streamed answer nobody reads (see stream-guard.ts). */
  abandoned: AbortController;
}

/**
 * How many choices a request asks for: chat's `n` (checked by its schema), or
 * a field of that name a format does not define (messages, responses), which
 * counts only as chat would read it: whole, from 1 to 128. Anything else is 1,
 * and is not carried to a chat provider either (to-openai-request.ts).
 */
function choiceCountOf(request: CanonicalRequest): number {
  const n = request.extra?.n;
  return isChoiceCount(n) ? n : 1;
}

/** Runs one generation; answers JSON or a stream by the body's `stream` flag. */
export function runGeneration<Body extends Record<string, unknown>, Json, Event>(
  context: OperationContext,
  options: GenerationOptions<Body, Json, Event>,
): Promise<GenerationAnswer<Json, Event>> {
  const { codec, body, endpoint } = options;
  return runOperation(context, {
    endpoint,
    operation: 'chat',
    model: body.model,
    plan: (model) => {
      const stream = codec.isStream(body);
      assertCanStream(context, stream);
      const decoded = codec.decode(body);
      const canonical = decoded.request;
      const estimatedInput = estimateRequestTokens(canonical);
      const identity: AnswerIdentity = { id: nextId(codec.idPrefix), model: model.id, created: Math.floor(Date.now() / 1000), inputTokens: estimatedInput };
      // Every choice (`n`) may write up to the cap.
      const choices = choiceCountOf(canonical);
      const strict = isStrict(context, model);
      return {
        hold: { inputTokens: estimatedInput, outputTokens: (canonical.maxOutputTokens ?? DEFAULT_HOLD_OUTPUT_TOKENS) * choices },
        stream,
        readLater: stream,
        // Restricted family: every text the model will see is checked before anything is held or sent.
        usageCheck: { format: codec.format, body, history: options.history },
        call: ({ deployment, adapter, transport, meter, abandoned }) => {
          const generation: Generation<Body, Json, Event> = { context, options, model, canonical, report: decoded.report, stream, strict, identity, meter, abandoned };
          const native = options.forceBridge ? undefined : adapter.native[codec.nativeFormat];
          return native
            ? runNative(generation, adapter, native, deployment.provider, deployment.upstreamModel, transport)
            : runBridged(generation, adapter, deployment.provider, deployment.upstreamModel, transport);
        },
      };
    },
  });
}

/** The client's body to a provider that speaks its format, with only the model (and usage reporting) changed. */
async function runNative<Body extends Record<string, unknown>, Json, Event>(
  generation: Generation<Body, Json, Event>,
  adapter: ChatAdapter,
  build: NativeRequestBuilder,
  provider: ProviderConnection,
  upstreamModel: string,
  transport: UpstreamTransport,
): Promise<Served<GenerationAnswer<Json, Event>>> {
  const { context, options } = generation;
  const { codec, body } = options;
  const headers = fidelityHeaders({ dropped: [], approximated: [] }, generation.strict);
  codec.onNativeRequest?.(provider.id);
  const request = build(provider, codec.nativeBody(body, upstreamModel), { headers: context.headers, query: context.query });
  const response = await transport.send(request, adapter.parseError);
  if (!generation.stream) {
    const { value, text } = await transport.readJson(response);
    const canonicalResponse = codec.readNativeResponse(value);
    await complete(generation, canonicalResponse);
    // A same-format answer goes back as the provider wrote it, not re-serialised.
    return {
      answer: { kind: 'json', body: value as Json, raw: text, meta: { headers, provider: provider.id } },
      usage: usageOfResponse(canonicalResponse, generation.identity.inputTokens),
    };
  }
  const failFrames = (error: Parameters<ReturnType<typeof codec.createEncoder>['fail']>[0]) => codec.createEncoder(generation.identity, body).fail(error);
  const source = nativeSource<Event>({
    response,
    decoder: codec.createNativeDecoder(),
    filter: codec.nativeFrameFilter?.(body),
    provider: provider.id,
    fail: failFrames,
  });
  return streamAnswer(generation, source, provider.id, headers, failFrames, () => response.body.destroy());
}

/** Across formats: the canonical request translated for the provider, its answer translated back. */
async function runBridged<Body extends Record<string, unknown>, Json, Event>(
  generation: Generation<Body, Json, Event>,
  adapter: ChatAdapter,
  provider: ProviderConnection,
  upstreamModel: string,
  transport: UpstreamTransport,
): Promise<Served<GenerationAnswer<Json, Event>>> {
  const { options } = generation;
  const { codec, body } = options;
  const prepared = adapter.prepare(provider, { ...generation.canonical, model: upstreamModel, stream: generation.stream });
  const headers = fidelityHeaders(mergeReports(generation.report, prepared.report), generation.strict);
  if (!generation.stream) {
    const response = await prepared.complete(transport);
    await complete(generation, response);
    return {
      answer: { kind: 'json', body: codec.encodeResponse(response, generation.identity, body), meta: { headers, provider: provider.id } },
      usage: usageOfResponse(response, generation.identity.inputTokens),
    };
  }
  const events = await prepared.stream(transport);
  const encoder = codec.createEncoder(generation.identity, body);
  const release = () => void (events as AsyncGenerator<unknown>).return?.(undefined);
  return streamAnswer(generation, bridgedSource(events, encoder), provider.id, headers, (error) => encoder.fail(error), release);
}

function streamAnswer<Body extends Record<string, unknown>, Json, Event>(
  generation: Generation<Body, Json, Event>,
  source: Parameters<typeof relay<Event>>[0],
  provider: string,
  headers: Record<string, string>,
  fail: Parameters<typeof relay<Event>>[1]['fail'],
  release: () => void,
): Served<StreamAnswer<Event>> {
  const { context, options, meter, model, identity } = generation;
  const parts = relay(source, {
    meter,
    provider,
    estimatedInput: identity.inputTokens,
    secrets: model.secrets,
    fail,
    signal: context.signal,
    release,
    finish: (tracker) =>
      complete(generation, {
        id: identity.id,
        model: identity.model,
        content: tracker.parts,
        finishReason: tracker.finishReason ?? 'stop',
        usage: tracker.finalUsage(identity.inputTokens),
      }),
  });
  return { answer: { kind: 'stream', format: options.codec.format, parts: guardStream(parts, meter, generation.abandoned), meta: { headers, provider } }, settlesWhenRead: true };
}

/**
 * Hands the finished answer to `onComplete` (e.g. to store it). The client
 * was answered and charged: a failure here is logged, never turned into an
 * error after the fact.
 */
async function complete<Body extends Record<string, unknown>, Json, Event>(generation: Generation<Body, Json, Event>, response: CanonicalResponse): Promise<void> {
  try {
    await generation.options.onComplete?.(generation.canonical, response, generation.identity);
  } catch (error) {
    generation.context.services.log.warn('generation.complete_failed', { requestId: generation.context.requestId, message: (error as Error).message });
  }
}
