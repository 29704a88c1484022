import { nextId } from '../ids.js';
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
import { describeHostedTool } from '../providers/openai/to-openai-request.js';
import type { ChatProviderAdapter, StreamDecoder, UpstreamHttpRequest } from '../providers/types.js';
import type { Services } from '../services.js';
import { SseParser, type SseEvent } from '../sse/sse-parser.js';
import { RawJson, type StreamItem, type StreamResult } from '../streaming.js';
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
  return nextId(prefix);
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
    if (this.usage && this.finishReason === 'error') {
      // Cut off before the provider's final count: its figures so far (Anthropic's message_start says 1) are provisional.
      const delivered = this.text ? countTextTokens(this.text) : 0;
      return {
        ...this.usage,
        inputTokens: this.usage.inputTokens || (this.providerInputTokens ?? estimatedInput),
        outputTokens: Math.max(this.usage.outputTokens, delivered),
      };
    }
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
  const secrets = model.secrets;

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
        applyReport(context, mergeReports(attempt.report, reportUnusedByMock(canonical)), strict);
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
          secrets,
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
        const { value: json, text } = await readJson(response, provider.id);
        const canonicalResponse = attempt.native ? codec.readNativeResponse(json) : attempt.adapter.parseChatResponse(json);
        const usage = canonicalResponse.usage.inputTokens > 0 || canonicalResponse.usage.outputTokens > 0 ? canonicalResponse.usage : { inputTokens: estimatedInput, outputTokens: countTextTokens(textOf(canonicalResponse)) };
        record({ usage, status: 200, errorCode: null, aborted: false, provider: provider.id });
        await options.onComplete?.(canonical, canonicalResponse, meta);
        // A same-format answer goes back as the provider wrote it, not re-serialised.
        return attempt.native ? new RawJson(text) : codec.encodeResponse(canonicalResponse, meta, body);
      }

      if (attempt.native) {
        return streamNative(response, codec.createNativeDecoder(), codec.nativeFrameFilter?.(body), context, {
          record,
          estimatedInput,
          provider: provider.id,
          secrets,
          failFrames: (error) => codec.createEncoder(meta, body).fail(error),
          finish: (tracker) => finishStream(options, canonical, meta, tracker),
        });
      }
      return streamFromCanonical(decodeUpstream(response, attempt.adapter.createStreamDecoder(), provider.id, context.signal), codec.createEncoder(meta, body), {
        record,
        estimatedInput,
        provider: provider.id,
        secrets,
        finish: (tracker) => finishStream(options, canonical, meta, tracker),
      });
    }
    throw lastError ?? new GatewayError('UPSTREAM_ERROR', 'No deployment could serve the request.');
  } catch (error) {
    const aborted = error instanceof ClientAbortedError;
    const gatewayError = aborted ? new GatewayError('INVALID_REQUEST', 'client closed request', { status: 499 }) : redactError(toGatewayError(error), secrets);
    record({ usage: { inputTokens: 0, outputTokens: 0 }, status: gatewayError.status, errorCode: aborted ? 'CLIENT_ABORTED' : gatewayError.code, aborted, provider: null });
    throw gatewayError;
  }
}

function redactText(text: string, secrets: readonly string[]): string {
  let redacted = text;
  for (const secret of secrets) if (redacted.includes(secret)) redacted = redacted.split(secret).join('[redacted]');
  return redacted;
}

function redactError(error: GatewayError, secrets: readonly string[]): GatewayError {
  const message = redactText(error.message, secrets);
  if (message === error.message) return error;
  return new GatewayError(error.code, message, { status: error.status, param: error.param, retryAfter: error.retryAfter, cause: error.cause });
}

/** The mock reads only the canonical fields: everything else the client sent is dropped, and said so. */
function reportUnusedByMock(request: CanonicalRequest): BridgeReport {
  const dropped: string[] = [];
  for (const [key, value] of Object.entries(request.extra ?? {})) {
    if (key === 'tools' && Array.isArray(value)) dropped.push(...value.map((tool) => `tools.${describeHostedTool(tool)}`));
    else dropped.push(key);
  }
  return { dropped, approximated: [] };
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

/** The provider's JSON answer, parsed, and its text (passed through to same-format clients as is). */
async function readJson(response: UpstreamResponse, providerId: string): Promise<{ value: unknown; text: string }> {
  const declared = Number(response.headers['content-length']);
  if (Number.isFinite(declared) && declared > MAX_RESPONSE_BYTES) {
    response.body.destroy();
    throw new UpstreamError('the provider answer is too large', { status: 502, provider: providerId, retryable: false });
  }
  let text: string;
  try {
    text = await response.body.text();
  } catch (error) {
    if ((error as Error).name === 'AbortError' || (error as { code?: string }).code === 'UND_ERR_ABORTED') throw new ClientAbortedError();
    throw toTransportError(error, providerId, 'stream');
  }
  if (text.length > MAX_RESPONSE_BYTES) throw new UpstreamError('the provider answer is too large', { status: 502, provider: providerId, retryable: false });
  try {
    return { value: JSON.parse(text), text };
  } catch (error) {
    throw new UpstreamError('the provider answered with invalid JSON', { status: 502, provider: providerId, retryable: false, cause: error });
  }
}

interface StreamHooks {
  record: (fields: { usage: CanonicalUsage; status: number; errorCode: string | null; aborted: boolean; provider: string | null }) => void;
  estimatedInput: number;
  provider: string;
  /** Provider secrets to keep out of error messages (see providerSecrets). */
  secrets: readonly string[];
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

/** What a client is told when a provider's stream ends without its closing event (no `[DONE]`, no `message_stop`). */
const INCOMPLETE_STREAM_MESSAGE = 'The provider ended the stream before the answer was complete.';

/** A failure while reading a provider's stream, as the client will see it. */
function toStreamFailure(error: unknown, providerId: string): GatewayError {
  return error instanceof UpstreamError || error instanceof GatewayError ? toGatewayError(error) : toTransportError(error, providerId, 'stream').toGatewayError();
}

/** Canonical events → client frames, with usage accounting however the stream ends. */
async function* streamFromCanonical(events: AsyncIterable<CanonicalStreamEvent>, encoder: ClientStreamEncoder, hooks: StreamHooks): AsyncGenerator<StreamItem> {
  const tracker = new DeliveryTracker();
  let failed: GatewayError | undefined;
  let completed = false;
  try {
    for await (const event of events) {
      tracker.observe(event);
      if (failed) continue;
      if (event.type === 'error') {
        const message = redactText(event.message, hooks.secrets);
        failed = new GatewayError('UPSTREAM_ERROR', message);
        yield* encoder.push({ ...event, message });
      } else if (event.type === 'finish' && event.finishReason === 'error') {
        // The decoders' verdict on a stream cut off before its end: a client must not take it for a whole answer.
        failed = new GatewayError('UPSTREAM_ERROR', INCOMPLETE_STREAM_MESSAGE);
        yield* encoder.fail(failed);
      } else {
        yield* encoder.push(event);
      }
    }
    if (!failed) yield* encoder.end();
    completed = true;
  } catch (error) {
    if (error instanceof ClientAbortedError) return;
    if (!failed) {
      failed = redactError(toGatewayError(error), hooks.secrets);
      yield* encoder.fail(failed);
    }
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

/** An error event every SDK throws on: JSON with a truthy `error` (OpenAI `{error:{…}}`, Anthropic `{type:"error",error:{…}}`). */
function isProviderErrorPayload(data: string): boolean {
  try {
    const payload: unknown = JSON.parse(data);
    return typeof payload === 'object' && payload !== null && Boolean((payload as { error?: unknown }).error);
  } catch {
    return false;
  }
}

/**
 * Where the last complete SSE frame ends in `bytes` (just after a blank line:
 * two line breaks, each `\n`, `\r` or `\r\n`), or 0 when no frame is complete.
 */
function endOfLastFrame(bytes: Uint8Array): number {
  let i = bytes.length - 1;
  while (i >= 0) {
    if (bytes[i] !== 10 && bytes[i] !== 13) {
      i--;
      continue;
    }
    const end = i + 1;
    let breaks = 0;
    while (i >= 0 && (bytes[i] === 10 || bytes[i] === 13)) {
      if (bytes[i] === 10 && i > 0 && bytes[i - 1] === 13) i--;
      breaks++;
      i--;
    }
    if (breaks >= 2) return end;
  }
  return 0;
}

/**
 * Same-format pass-through: the provider's bytes go to the client as they
 * come, whole frames at a time (re-framed only when a frame must be
 * withheld), while a decoder reads usage and delivered text off them for
 * billing. When the provider fails mid-stream (an error event, a frame that
 * is not its format, a stream cut off), the frames before the failure go out
 * and then the gateway's own in-format error: never a half frame, never an
 * end that looks complete.
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
  /** Raw bytes after the last complete frame, held back so that an error frame never lands inside a half-sent one. */
  let pending: Uint8Array = new Uint8Array(0);
  /** Feeds frames to the decoder; answers the first one that is, or reports, a provider failure. */
  const decode = (events: SseEvent[]): { index: number; error: GatewayError } | undefined => {
    for (let index = 0; index < events.length; index++) {
      let decoded: CanonicalStreamEvent[];
      try {
        decoded = decoder.push(events[index]!);
      } catch (error) {
        return { index, error: toStreamFailure(error, hooks.provider) };
      }
      for (const event of decoded) {
        tracker.observe(event);
        if (event.type === 'error') return { index, error: new GatewayError('UPSTREAM_ERROR', event.message) };
      }
    }
    return undefined;
  };
  function* reframe(events: SseEvent[]): Generator<StreamItem> {
    for (const event of events) if (!filter || filter(event.data)) yield { kind: 'event', event: event.event, data: event.data };
  }
  /** The frames before a failure, then the provider's own error event when it sent one (its type means something to an SDK), else ours. */
  function* fail(events: SseEvent[], failure: { index: number; error: GatewayError }): Generator<StreamItem> {
    yield* reframe(events.slice(0, failure.index));
    failed = redactError(failure.error, hooks.secrets);
    const frame = events[failure.index];
    if (frame && isProviderErrorPayload(frame.data)) yield { kind: 'event', event: frame.event, data: redactText(frame.data, hooks.secrets) };
    else yield* hooks.failFrames(failed);
  }
  try {
    for await (const chunk of response.body) {
      const events = parser.push(chunk);
      const failure = decode(events);
      if (failure) {
        yield* fail(events, failure);
        completed = true;
        return;
      }
      if (filter) {
        yield* reframe(events);
        continue;
      }
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      const cut = endOfLastFrame(pending);
      if (cut > 0) {
        yield { kind: 'raw', bytes: pending.subarray(0, cut) };
        pending = pending.subarray(cut);
      }
    }
    const tail = parser.end();
    const failure = decode(tail);
    if (!failure) for (const event of decoder.end()) tracker.observe(event);
    if (failure) {
      yield* fail(tail, failure);
    } else if (tracker.finishReason === 'error') {
      yield* reframe(tail);
      failed = new GatewayError('UPSTREAM_ERROR', INCOMPLETE_STREAM_MESSAGE);
      yield* hooks.failFrames(failed);
    } else if (filter) {
      yield* reframe(tail);
    } else if (pending.length > 0) {
      yield { kind: 'raw', bytes: pending };
    }
    completed = true;
  } catch (error) {
    if (context.signal.aborted || error instanceof ClientAbortedError) return;
    failed = redactError(toStreamFailure(error, hooks.provider), hooks.secrets);
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
