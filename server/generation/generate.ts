import { randomBytes } from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { AuthContext } from '../auth/authenticate.js';
import { applyDiscount, computeCost } from '../billing/money.js';
import type { CatalogModel, ResolvedDeployment } from '../catalog/catalog.js';
import type { Endpoint } from '../catalog/catalog.schema.js';
import { GatewayError, toGatewayError, UpstreamError } from '../errors.js';
import { anthropicChatAdapter } from '../providers/anthropic/anthropic.adapter.js';
import type { BridgeReport, CanonicalRequest, CanonicalResponse, CanonicalStreamEvent, CanonicalUsage } from '../providers/canonical.js';
import { generateMock, streamMock } from '../providers/mock/mock.adapter.js';
import { openAIChatAdapter } from '../providers/openai/openai.adapter.js';
import type { ChatProviderAdapter, StreamDecoder, UpstreamHttpRequest } from '../providers/types.js';
import type { Services } from '../services.js';
import { SseParser } from '../sse/sse-parser.js';
import type { StreamItem, StreamResult } from '../streaming.js';
import { countTextTokens, estimateRequestTokens } from '../tokenizer.js';
import { ClientAbortedError, toTransportError, type UpstreamResponse } from '../upstream/upstream-client.js';
import type { AnswerMeta, ClientCodec, ClientStreamEncoder } from './codec.js';

/** Output tokens reserved for a request that sets no cap (the hold is released down to the real cost). */
export const DEFAULT_HOLD_OUTPUT_TOKENS = 4096;
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

const ADAPTERS: Record<'openai' | 'anthropic', ChatProviderAdapter> = {
  openai: openAIChatAdapter,
  anthropic: anthropicChatAdapter,
};

/** Everything one generation request needs, taken from the procedure's context. */
export interface GenerationContext {
  services: Services;
  auth: AuthContext;
  requestId: string;
  signal: AbortSignal;
  headers: Readonly<Record<string, string | undefined>>;
  query: string;
  responseHeaders: Record<string, string>;
  receivedAt: number;
}

export interface GenerationOptions<Body extends Record<string, unknown>> {
  endpoint: Endpoint;
  codec: ClientCodec<Body>;
  body: Body;
  /** Conversation from an earlier answer (Responses `previous_response_id`), prepended by the codec's decode. */
  decoded?: { request: CanonicalRequest; report: BridgeReport };
  /** Never pass through, even to a provider that speaks the client's format (the request was rebuilt). */
  forceBridge?: boolean;
  /** Called with the final canonical answer (non-stream) or the assembled one (stream), e.g. to store it. */
  onComplete?: (request: CanonicalRequest, response: CanonicalResponse, meta: AnswerMeta) => Promise<void> | void;
}

function newAnswerId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('base64url')}`;
}

/** Resolves the model and checks what the account may do with it, before anything is held or sent. */
export function resolveModel(services: Services, auth: AuthContext, modelId: unknown, endpoint: Endpoint): CatalogModel {
  if (typeof modelId !== 'string' || modelId === '') {
    throw new GatewayError('INVALID_REQUEST', "Invalid value for 'model': a model id is required.", { param: 'model' });
  }
  const model = services.catalog.get(modelId);
  if (!model) throw new GatewayError('MODEL_NOT_FOUND', `The model '${modelId}' does not exist.`, { param: 'model' });
  if (!model.endpoints.has(endpoint)) {
    throw new GatewayError('UNSUPPORTED_ENDPOINT', `The model '${modelId}' does not support ${endpoint}.`, { param: 'model' });
  }
  if (model.entry.family === 'restricted' && !auth.account.restrictedAccess) {
    throw new GatewayError('ACCESS_NOT_GRANTED', `The model '${modelId}' needs an access grant for its family.`, { param: 'model' });
  }
  return model;
}

/** Deployments in the order to try: by priority, and weighted-random within one priority. */
export function orderDeployments(deployments: readonly ResolvedDeployment[], random = Math.random): ResolvedDeployment[] {
  if (deployments.length <= 1) return [...deployments];
  const ordered: ResolvedDeployment[] = [];
  const byPriority = new Map<number, ResolvedDeployment[]>();
  for (const deployment of deployments) {
    const group = byPriority.get(deployment.priority);
    if (group) group.push(deployment);
    else byPriority.set(deployment.priority, [deployment]);
  }
  for (const priority of [...byPriority.keys()].sort((a, b) => a - b)) {
    const group = [...byPriority.get(priority)!];
    while (group.length > 0) {
      const total = group.reduce((sum, deployment) => sum + deployment.weight, 0);
      let pick = random() * total;
      let index = 0;
      while (index < group.length - 1 && pick >= group[index]!.weight) {
        pick -= group[index]!.weight;
        index++;
      }
      ordered.push(group.splice(index, 1)[0]!);
    }
  }
  return ordered;
}

function isStrict(context: GenerationContext, model: CatalogModel): boolean {
  const header = context.headers['x-gateway-strict'];
  if (header !== undefined) return header === 'true' || header === '1';
  return model.entry.strict === true;
}

/** Accumulates what a stream delivered, so an aborted or usage-less stream is charged for what was produced. */
class DeliveryTracker {
  usage: CanonicalUsage | undefined;
  private text = '';
  finishReason: CanonicalResponse['finishReason'] | undefined;
  readonly parts: CanonicalResponse['content'] = [];
  private readonly partByIndex = new Map<number, CanonicalResponse['content'][number]>();
  providerInputTokens: number | undefined;

  observe(event: CanonicalStreamEvent): void {
    switch (event.type) {
      case 'start':
        if (event.usage?.inputTokens) this.providerInputTokens = event.usage.inputTokens;
        break;
      case 'text-start':
        this.addPart(event.index, { type: 'text', text: '' });
        break;
      case 'text-delta': {
        this.text += event.text;
        const part = this.partByIndex.get(event.index) ?? this.addPart(event.index, { type: 'text', text: '' });
        if (part.type === 'text') part.text += event.text;
        break;
      }
      case 'thinking-start':
        this.addPart(event.index, { type: 'thinking', text: '', ...(event.redactedData !== undefined ? { redactedData: event.redactedData } : {}) });
        break;
      case 'thinking-delta': {
        this.text += event.text;
        const part = this.partByIndex.get(event.index);
        if (part?.type === 'thinking') part.text += event.text;
        break;
      }
      case 'thinking-signature': {
        const part = this.partByIndex.get(event.index);
        if (part?.type === 'thinking') part.signature = (part.signature ?? '') + event.signature;
        break;
      }
      case 'tool-call-start':
        this.text += event.name;
        this.addPart(event.index, { type: 'tool_call', id: event.id, name: event.name, arguments: '' });
        break;
      case 'tool-call-delta': {
        this.text += event.argumentsDelta;
        const part = this.partByIndex.get(event.index);
        if (part?.type === 'tool_call') part.arguments += event.argumentsDelta;
        break;
      }
      case 'finish':
        this.usage = event.usage;
        this.finishReason = event.finishReason;
        break;
      default:
        break;
    }
  }

  private addPart(index: number, part: CanonicalResponse['content'][number]): CanonicalResponse['content'][number] {
    this.partByIndex.set(index, part);
    this.parts.push(part);
    return part;
  }

  /** Usage as the provider reported it, or counted from what was delivered. */
  finalUsage(estimatedInput: number): CanonicalUsage {
    if (this.usage && (this.usage.outputTokens > 0 || this.usage.inputTokens > 0)) {
      return this.usage.inputTokens > 0 ? this.usage : { ...this.usage, inputTokens: this.providerInputTokens ?? estimatedInput };
    }
    return { inputTokens: this.providerInputTokens ?? estimatedInput, outputTokens: this.text ? countTextTokens(this.text) : 0 };
  }
}

interface Attempt {
  deployment: ResolvedDeployment;
  native: boolean;
  report: BridgeReport;
  adapter: ChatProviderAdapter | undefined;
}

/**
 * One generation on the chat family of endpoints, from a validated client
 * body to a JSON answer or a stream of frames: model checks, strict mode,
 * the credit hold, deployments in order with fallback, same-format
 * pass-through or a bridge through the canonical types, and exactly one
 * usage record however it ends.
 */
export async function runGeneration<Body extends Record<string, unknown>>(
  context: GenerationContext,
  options: GenerationOptions<Body>,
): Promise<unknown | StreamResult> {
  const { services, auth } = context;
  const { codec, body, endpoint } = options;
  const model = resolveModel(services, auth, body.model, endpoint);
  const decoded = options.decoded ?? codec.decode(body);
  const canonical = decoded.request;
  const stream = codec.isStream(body);
  const strict = isStrict(context, model);
  const estimatedInput = estimateRequestTokens(canonical);
  const discountPercentage = services.discounts.percentageFor(auth.account.id, model.id, new Date());
  const maxOutput = canonical.maxOutputTokens ?? DEFAULT_HOLD_OUTPUT_TOKENS;
  const holdAmount = applyDiscount(computeCost(model.price, { inputTokens: estimatedInput, outputTokens: maxOutput }), discountPercentage);
  const meta: AnswerMeta = { id: newAnswerId(codec.idPrefix), model: model.id, created: Math.floor(Date.now() / 1000), inputTokens: estimatedInput };

  let recorded = false;
  const record = (fields: { usage: CanonicalUsage; status: number; errorCode: string | null; aborted: boolean; provider: string | null }) => {
    if (recorded) return;
    recorded = true;
    const cost =
      fields.status === 200 || fields.aborted
        ? applyDiscount(
            computeCost(model.price, {
              inputTokens: fields.usage.inputTokens,
              outputTokens: fields.usage.outputTokens,
              cachedInputTokens: fields.usage.cachedInputTokens,
            }),
            discountPercentage,
          )
        : 0;
    services.billing.record({
      requestId: context.requestId,
      accountId: auth.account.id,
      keyId: auth.key.id,
      model: model.id,
      endpoint,
      provider: fields.provider,
      inputTokens: fields.usage.inputTokens,
      outputTokens: fields.usage.outputTokens,
      cachedInputTokens: fields.usage.cachedInputTokens ?? 0,
      units: 0,
      status: fields.status,
      errorCode: fields.errorCode,
      stream,
      aborted: fields.aborted,
      latencyMs: performance.now() - context.receivedAt,
      cost,
      price: model.price,
      discountPercentage,
      heldAmount: holdAmount,
      createdAt: new Date(),
    });
  };

  await services.billing.hold(auth.account.id, holdAmount);

  const deployments = orderDeployments(model.deployments);
  const plan = (deployment: ResolvedDeployment): Attempt => {
    const kind = deployment.provider.kind;
    if (kind === 'mock') return { deployment, native: false, report: decoded.report, adapter: undefined };
    const adapter = ADAPTERS[kind];
    const native = !options.forceBridge && adapter.nativeFormats.includes(codec.format);
    return { deployment, native, report: native ? { dropped: [], approximated: [] } : decoded.report, adapter };
  };

  let lastError: unknown;
  try {
    for (let index = 0; index < deployments.length; index++) {
      const attempt = plan(deployments[index]!);
      const provider = attempt.deployment.provider;
      const upstreamModel = attempt.deployment.upstreamModel;

      if (!attempt.adapter) {
        applyReport(context, attempt.report, strict);
        const mockRequest = { ...canonical, model: upstreamModel };
        if (!stream) {
          const response = generateMock(mockRequest, { id: meta.id });
          record({ usage: response.usage, status: 200, errorCode: null, aborted: false, provider: provider.id });
          await options.onComplete?.(canonical, response, meta);
          return codec.encodeResponse(response, meta, body);
        }
        return streamFromCanonical(streamMockEvents(streamMock(mockRequest, { id: meta.id }), context.signal), codec.createEncoder(meta, body), {
          record,
          estimatedInput,
          provider: provider.id,
          finish: (tracker) => finishStream(options, canonical, meta, tracker),
        });
      }

      let upstreamRequest: UpstreamHttpRequest;
      let report = attempt.report;
      if (attempt.native) {
        upstreamRequest = codec.buildNativeRequest(provider, body, upstreamModel, { headers: context.headers, query: context.query });
      } else {
        const built = attempt.adapter.buildChatRequest(provider, { ...canonical, model: upstreamModel, stream });
        upstreamRequest = built.request;
        report = mergeReports(decoded.report, built.report);
      }
      applyReport(context, report, strict);

      let response: UpstreamResponse;
      try {
        response = await services.upstream.send(upstreamRequest, {
          providerId: provider.id,
          signal: context.signal,
          timeouts: {
            ...services.config.upstream,
            ...(provider.entry.connectTimeoutMs ? { connectTimeoutMs: provider.entry.connectTimeoutMs } : {}),
            ...(provider.entry.firstByteTimeoutMs ? { firstByteTimeoutMs: provider.entry.firstByteTimeoutMs } : {}),
            ...(provider.entry.idleTimeoutMs ? { idleTimeoutMs: provider.entry.idleTimeoutMs } : {}),
            ...(provider.entry.maxRetries !== undefined ? { maxRetries: provider.entry.maxRetries } : {}),
          },
          parseError: attempt.adapter.parseError,
        });
      } catch (error) {
        lastError = error;
        if (error instanceof UpstreamError && canFallOver(error) && index < deployments.length - 1) {
          services.log.warn('upstream.failover', { requestId: context.requestId, provider: provider.id, status: error.status });
          continue;
        }
        throw error;
      }

      if (!stream) {
        const json = await readJson(response, provider.id);
        const canonicalResponse = attempt.native ? codec.readNativeResponse(json) : attempt.adapter.parseChatResponse(json);
        const usage = canonicalResponse.usage.inputTokens > 0 || canonicalResponse.usage.outputTokens > 0 ? canonicalResponse.usage : { inputTokens: estimatedInput, outputTokens: countTextTokens(textOf(canonicalResponse)) };
        record({ usage, status: 200, errorCode: null, aborted: false, provider: provider.id });
        await options.onComplete?.(canonical, canonicalResponse, meta);
        return attempt.native ? json : codec.encodeResponse(canonicalResponse, meta, body);
      }

      if (attempt.native) {
        return streamNative(response, codec.createNativeDecoder(), codec.nativeFrameFilter?.(body), context, {
          record,
          estimatedInput,
          provider: provider.id,
          failFrames: (error) => codec.createEncoder(meta, body).fail(error),
          finish: (tracker) => finishStream(options, canonical, meta, tracker),
        });
      }
      return streamFromCanonical(decodeUpstream(response, attempt.adapter.createStreamDecoder(), provider.id, context.signal), codec.createEncoder(meta, body), {
        record,
        estimatedInput,
        provider: provider.id,
        finish: (tracker) => finishStream(options, canonical, meta, tracker),
      });
    }
    throw lastError ?? new GatewayError('UPSTREAM_ERROR', 'No deployment could serve the request.');
  } catch (error) {
    const aborted = error instanceof ClientAbortedError;
    const gatewayError = aborted ? new GatewayError('INVALID_REQUEST', 'client closed request', { status: 499 }) : toGatewayError(error);
    record({ usage: { inputTokens: 0, outputTokens: 0 }, status: gatewayError.status, errorCode: aborted ? 'CLIENT_ABORTED' : gatewayError.code, aborted, provider: null });
    throw gatewayError;
  }
}

function canFallOver(error: UpstreamError): boolean {
  return error.retryable || error.timeout || error.status === 0 || error.status >= 500 || error.status === 429;
}

function mergeReports(a: BridgeReport, b: BridgeReport): BridgeReport {
  return { dropped: [...new Set([...a.dropped, ...b.dropped])], approximated: [...new Set([...a.approximated, ...b.approximated])] };
}

/** Fidelity: say what a bridge dropped or approximated; in strict mode refuse instead. */
function applyReport(context: GenerationContext, report: BridgeReport, strict: boolean): void {
  if (strict && report.dropped.length > 0) {
    throw new GatewayError('UNSUPPORTED_FEATURE', `The selected provider cannot carry: ${report.dropped.join(', ')} (strict mode).`, {
      param: report.dropped[0] ?? null,
    });
  }
  if (report.dropped.length > 0) context.responseHeaders['x-gateway-dropped-params'] = report.dropped.join(', ');
  else delete context.responseHeaders['x-gateway-dropped-params'];
  if (report.approximated.length > 0) context.responseHeaders['x-gateway-approximated-params'] = report.approximated.join(', ');
  else delete context.responseHeaders['x-gateway-approximated-params'];
}

function textOf(response: CanonicalResponse): string {
  let text = '';
  for (const part of response.content) {
    if (part.type === 'text' || part.type === 'thinking') text += part.text;
    else if (part.type === 'tool_call') text += part.name + part.arguments;
  }
  return text;
}

async function readJson(response: UpstreamResponse, providerId: string): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body) {
      size += chunk.length;
      if (size > MAX_RESPONSE_BYTES) throw new UpstreamError('the provider answer is too large', { status: 502, provider: providerId, retryable: false });
      chunks.push(Buffer.from(chunk));
    }
  } catch (error) {
    if (error instanceof UpstreamError) throw error;
    if ((error as Error).name === 'AbortError' || (error as { code?: string }).code === 'UND_ERR_ABORTED') throw new ClientAbortedError();
    throw toTransportError(error, providerId, 'stream');
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (error) {
    throw new UpstreamError('the provider answered with invalid JSON', { status: 502, provider: providerId, retryable: false, cause: error });
  }
}

interface StreamHooks {
  record: (fields: { usage: CanonicalUsage; status: number; errorCode: string | null; aborted: boolean; provider: string | null }) => void;
  estimatedInput: number;
  provider: string;
  finish: (tracker: DeliveryTracker) => Promise<void> | void;
}

async function finishStream<Body extends Record<string, unknown>>(
  options: GenerationOptions<Body>,
  request: CanonicalRequest,
  meta: AnswerMeta,
  tracker: DeliveryTracker,
): Promise<void> {
  if (!options.onComplete) return;
  await options.onComplete(
    request,
    { id: meta.id, model: meta.model, content: tracker.parts, finishReason: tracker.finishReason ?? 'stop', usage: tracker.finalUsage(meta.inputTokens) },
    meta,
  );
}

async function* streamMockEvents(events: CanonicalStreamEvent[], signal: AbortSignal): AsyncGenerator<CanonicalStreamEvent> {
  for (const event of events) {
    if (signal.aborted) throw new ClientAbortedError();
    yield event;
    // Let other requests and the socket breathe between chunks, as a real provider's stream would.
    await nextTurn();
  }
}

/** Provider SSE bytes → canonical events, through the adapter's stateful decoder. */
async function* decodeUpstream(response: UpstreamResponse, decoder: StreamDecoder, providerId: string, signal: AbortSignal): AsyncGenerator<CanonicalStreamEvent> {
  const parser = new SseParser();
  try {
    for await (const chunk of response.body) {
      for (const event of parser.push(chunk)) yield* decoder.push(event);
    }
    for (const event of parser.end()) yield* decoder.push(event);
    yield* decoder.end();
  } catch (error) {
    if (signal.aborted) throw new ClientAbortedError();
    if (error instanceof UpstreamError || error instanceof GatewayError) throw error;
    throw toTransportError(error, providerId, 'stream');
  } finally {
    response.body.destroy();
  }
}

/** Canonical events → client frames, with usage accounting however the stream ends. */
async function* streamFromCanonical(events: AsyncIterable<CanonicalStreamEvent>, encoder: ClientStreamEncoder, hooks: StreamHooks): AsyncGenerator<StreamItem> {
  const tracker = new DeliveryTracker();
  let failed: GatewayError | undefined;
  let completed = false;
  try {
    for await (const event of events) {
      tracker.observe(event);
      if (event.type === 'error') failed = new GatewayError('UPSTREAM_ERROR', event.message);
      yield* encoder.push(event);
    }
    if (!failed) yield* encoder.end();
    completed = true;
  } catch (error) {
    if (error instanceof ClientAbortedError) return;
    failed = toGatewayError(error);
    yield* encoder.fail(failed);
    completed = true;
  } finally {
    const usage = tracker.finalUsage(hooks.estimatedInput);
    hooks.record({
      usage,
      status: 200,
      errorCode: failed ? failed.code : completed ? null : 'CLIENT_ABORTED',
      aborted: !completed,
      provider: hooks.provider,
    });
    if (completed && !failed) await hooks.finish(tracker);
  }
}

/**
 * Same-format pass-through: the provider's bytes go to the client as they
 * come (re-framed only when a frame must be withheld), while a decoder reads
 * usage and delivered text off them for billing.
 */
async function* streamNative(
  response: UpstreamResponse,
  decoder: StreamDecoder,
  filter: ((data: string) => boolean) | undefined,
  context: GenerationContext,
  hooks: StreamHooks & { failFrames: (error: GatewayError) => StreamItem[] },
): AsyncGenerator<StreamItem> {
  const parser = new SseParser();
  const tracker = new DeliveryTracker();
  let completed = false;
  let failed: GatewayError | undefined;
  try {
    for await (const chunk of response.body) {
      const events = parser.push(chunk);
      for (const event of events) for (const canonicalEvent of decoder.push(event)) tracker.observe(canonicalEvent);
      if (!filter) {
        yield { kind: 'raw', bytes: chunk };
      } else {
        for (const event of events) {
          if (!filter(event.data)) continue;
          yield { kind: 'event', event: event.event, data: event.data };
        }
      }
    }
    for (const event of parser.end()) {
      for (const canonicalEvent of decoder.push(event)) tracker.observe(canonicalEvent);
      if (filter && filter(event.data)) yield { kind: 'event', event: event.event, data: event.data };
    }
    for (const canonicalEvent of decoder.end()) tracker.observe(canonicalEvent);
    completed = true;
  } catch (error) {
    if (context.signal.aborted || error instanceof ClientAbortedError) return;
    failed = error instanceof UpstreamError || error instanceof GatewayError ? toGatewayError(error) : toTransportError(error, hooks.provider, 'stream').toGatewayError();
    yield* hooks.failFrames(failed);
    completed = true;
  } finally {
    response.body.destroy();
    hooks.record({
      usage: tracker.finalUsage(hooks.estimatedInput),
      status: 200,
      errorCode: failed ? failed.code : completed ? null : 'CLIENT_ABORTED',
      aborted: !completed,
      provider: hooks.provider,
    });
    if (completed && !failed) await hooks.finish(tracker);
  }
}
