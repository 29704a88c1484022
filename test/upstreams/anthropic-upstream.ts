/**
 * Anthropic dialect of the upstream test server: `POST /v1/messages` (JSON and
 * SSE with `event:` lines, PROTOCOLS.md §3), `POST /v1/messages/count_tokens`
 * and `GET /v1/models`. Requests must carry `anthropic-version` (as the real
 * API requires) unless `requireVersionHeader: false`; with `expectedApiKey`,
 * the key must come as `x-api-key` (or `authorization: Bearer`, see options).
 *
 * Default answers are derived from the request only:
 * - text: `Echo: <last user text>` where the last user text is the last `user`
 *   message's text blocks and `tool_result` contents joined with a space;
 *   `stop_sequences` cut it (`stop_sequence`), `max_tokens` truncates it (`max_tokens`).
 * - a `tool_use` block instead when `tools` is non-empty and `tool_choice` is
 *   `{type:"any"}` or `{type:"tool",name}`: the named (else the first) tool,
 *   input `options.toolArguments` or `{"input":"<last user text>"}`.
 * - usage: input tokens = estimateTokens(all string values of system, messages
 *   and tools), the same number count_tokens returns; output tokens =
 *   estimateTokens(answer text, or tool name + JSON input).
 */
import {
  UPSTREAM_CREATED,
  applyStopSequences,
  collectPromptText,
  estimateTokens,
  isRecord,
  namedFrame,
  splitText,
  startUpstreamServer,
  truncateToTokens,
  type RecordedRequest,
  type UpstreamAnswer,
  type UpstreamDialect,
  type UpstreamErrorDetails,
  type UpstreamServer,
  type UpstreamServerOptions,
} from './upstream-server.js';

export interface AnthropicUpstreamOptions extends UpstreamServerOptions {
  /**
   * Also accept the key as `authorization: Bearer <key>` (default true). The
   * installed @anthropic-ai/sdk 1.12 sends `apiKey` that way, not as `x-api-key`.
   */
  acceptBearerAuth?: boolean;
  /** Answer 400 when `anthropic-version` is missing (default true, like the real API). */
  requireVersionHeader?: boolean;
}

export const ANTHROPIC_UPSTREAM_MODELS = ['claude-sonnet-4-5', 'claude-haiku-4-5'];

export function startAnthropicUpstream(options: AnthropicUpstreamOptions = {}): Promise<UpstreamServer> {
  return startUpstreamServer(createAnthropicDialect(options), options);
}

/**
 * Status → `error.type`.
 * @see https://docs.claude.com/en/api/errors
 */
function anthropicErrorType(status: number): string {
  switch (status) {
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 504:
      return 'timeout_error';
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/** `{ type: "error", error: { type, message }, request_id }`. */
export function toAnthropicErrorBody(status: number, details: UpstreamErrorDetails = {}, requestId?: string): unknown {
  return {
    type: 'error',
    error: {
      type: details.errorType ?? anthropicErrorType(status),
      message: details.message ?? `Upstream test server answered ${status}.`,
    },
    ...(requestId === undefined ? {} : { request_id: requestId }),
  };
}

type Plan =
  | { kind: 'text'; text: string; stopReason: 'end_turn' | 'stop_sequence' | 'max_tokens'; stopSequence: string | null }
  | { kind: 'tool'; name: string; input: Record<string, unknown> };

function createAnthropicDialect(options: AnthropicUpstreamOptions): UpstreamDialect {
  const chunkSize = options.streamChunkSize ?? 4;
  const models = options.models ?? ANTHROPIC_UPSTREAM_MODELS;
  const requireVersion = options.requireVersionHeader ?? true;

  const error = (request: RecordedRequest, status: number, details: UpstreamErrorDetails): UpstreamAnswer => ({
    kind: 'json',
    status,
    body: toAnthropicErrorBody(status, details, `req_${request.sequence}`),
  });

  /** The body when it has what the endpoint requires, else the 400 to send. */
  function validate(
    request: RecordedRequest,
    needsMaxTokens: boolean,
  ): { body: Record<string, unknown>; refusal?: undefined } | { refusal: UpstreamAnswer } {
    const body = request.body;
    const refuse = (message: string): { refusal: UpstreamAnswer } => ({ refusal: error(request, 400, { message }) });
    if (!isRecord(body)) return refuse('There was an issue with the request body: invalid JSON.');
    if (typeof body.model !== 'string' || body.model.length === 0) return refuse('model: Field required');
    if (needsMaxTokens && typeof body.max_tokens !== 'number') return refuse('max_tokens: Field required');
    if (!Array.isArray(body.messages) || body.messages.length === 0) return refuse('messages: Field required');
    return { body };
  }

  function inputTokens(body: Record<string, unknown>): number {
    return estimateTokens(collectPromptText([body.system ?? '', body.messages, body.tools ?? []]));
  }

  function plan(body: Record<string, unknown>): Plan {
    const lastText = lastUserText(body.messages as unknown[]);
    const tools = Array.isArray(body.tools) ? body.tools : [];
    const choice = body.tool_choice;
    const forced = isRecord(choice) && choice.type === 'tool' && typeof choice.name === 'string' ? choice.name : undefined;
    if (tools.length > 0 && isRecord(choice) && (choice.type === 'any' || forced !== undefined)) {
      const first = tools[0];
      const name = forced ?? (isRecord(first) && typeof first.name === 'string' ? first.name : 'tool');
      return { kind: 'tool', name, input: options.toolArguments ?? { input: lastText } };
    }
    const stops = Array.isArray(body.stop_sequences) ? body.stop_sequences.filter((s): s is string => typeof s === 'string') : [];
    const stopped = applyStopSequences(`Echo: ${lastText}`, stops);
    const maxTokens = body.max_tokens as number;
    if (estimateTokens(stopped.text) > maxTokens) {
      return { kind: 'text', text: truncateToTokens(stopped.text, maxTokens), stopReason: 'max_tokens', stopSequence: null };
    }
    return stopped.matched === undefined
      ? { kind: 'text', text: stopped.text, stopReason: 'end_turn', stopSequence: null }
      : { kind: 'text', text: stopped.text, stopReason: 'stop_sequence', stopSequence: stopped.matched };
  }

  function answerMessages(request: RecordedRequest): UpstreamAnswer {
    const validated = validate(request, true);
    if (validated.refusal) return validated.refusal;
    const { body } = validated;
    const answer = plan(body);
    const n = request.sequence;
    const id = `msg_${n}`;
    const toolId = `toolu_${n}`;
    const promptTokens = inputTokens(body);
    const toolJson = answer.kind === 'tool' ? JSON.stringify(answer.input) : '';
    const outputTokens = answer.kind === 'text' ? estimateTokens(answer.text) : estimateTokens(answer.name + toolJson);
    const stopReason = answer.kind === 'tool' ? 'tool_use' : answer.stopReason;
    const stopSequence = answer.kind === 'tool' ? null : answer.stopSequence;
    const usage = { input_tokens: promptTokens, output_tokens: outputTokens, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };

    if (body.stream !== true) {
      const block =
        answer.kind === 'tool'
          ? { type: 'tool_use', id: toolId, name: answer.name, input: answer.input }
          : { type: 'text', text: answer.text };
      return {
        kind: 'json',
        status: 200,
        body: {
          id,
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [block],
          stop_reason: stopReason,
          stop_sequence: stopSequence,
          usage,
        },
      };
    }

    const frames: string[] = [];
    const emit = (type: string, payload: Record<string, unknown> = {}): void => {
      frames.push(namedFrame(type, { type, ...payload }));
    };
    emit('message_start', {
      message: {
        id,
        type: 'message',
        role: 'assistant',
        model: body.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 1 },
      },
    });
    if (answer.kind === 'text') {
      emit('content_block_start', { index: 0, content_block: { type: 'text', text: '' } });
      emit('ping');
      for (const piece of splitText(answer.text, chunkSize)) {
        emit('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } });
      }
    } else {
      emit('content_block_start', { index: 0, content_block: { type: 'tool_use', id: toolId, name: answer.name, input: {} } });
      emit('ping');
      // The real API opens tool input with an empty piece; consumers must cope.
      for (const piece of ['', ...splitText(toolJson, chunkSize)]) {
        emit('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: piece } });
      }
    }
    emit('content_block_stop', { index: 0 });
    emit('message_delta', { delta: { stop_reason: stopReason, stop_sequence: stopSequence }, usage: { output_tokens: outputTokens } });
    emit('message_stop');
    return { kind: 'sse', frames };
  }

  function answerCountTokens(request: RecordedRequest): UpstreamAnswer {
    const validated = validate(request, false);
    if (validated.refusal) return validated.refusal;
    return { kind: 'json', status: 200, body: { input_tokens: inputTokens(validated.body) } };
  }

  function modelObject(id: string): Record<string, unknown> {
    return { type: 'model', id, display_name: id, created_at: new Date(UPSTREAM_CREATED * 1000).toISOString() };
  }

  return {
    requestIdHeader: 'request-id',
    check(request) {
      if (options.expectedApiKey !== undefined && !hasKey(request, options.expectedApiKey, options.acceptBearerAuth ?? true)) {
        return error(request, 401, { message: 'invalid x-api-key' });
      }
      if (requireVersion && request.headers['anthropic-version'] === undefined) {
        return error(request, 400, { message: 'anthropic-version: header is required' });
      }
      return undefined;
    },
    answer(request) {
      const route = `${request.method} ${request.path}`;
      if (route === 'POST /v1/messages') return answerMessages(request);
      if (route === 'POST /v1/messages/count_tokens') return answerCountTokens(request);
      if (route === 'GET /v1/models') {
        const data = models.map(modelObject);
        return { kind: 'json', status: 200, body: { data, has_more: false, first_id: models[0] ?? null, last_id: models.at(-1) ?? null } };
      }
      const modelMatch = /^\/v1\/models\/([^/]+)$/.exec(request.path);
      if (request.method === 'GET' && modelMatch) {
        const id = decodeURIComponent(modelMatch[1]);
        if (models.includes(id)) return { kind: 'json', status: 200, body: modelObject(id) };
        return error(request, 404, { message: `model: ${id}` });
      }
      return error(request, 404, { message: 'Not found' });
    },
    errorBody(status, details, request) {
      return toAnthropicErrorBody(status, details, `req_${request.sequence}`);
    },
    errorEventFrame(_request, details) {
      return namedFrame('error', {
        type: 'error',
        error: { type: details.errorType ?? 'overloaded_error', message: details.message ?? 'Overloaded' },
      });
    },
    malformedSseFrame() {
      return 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,\n\n';
    },
  };
}

function hasKey(request: RecordedRequest, key: string, acceptBearer: boolean): boolean {
  if (request.headers['x-api-key'] === key) return true;
  return acceptBearer && request.headers.authorization === `Bearer ${key}`;
}

/** Text of the last user turn: string content, or text blocks and tool_result contents joined with a space. */
function lastUserText(messages: unknown[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (isRecord(message) && message.role === 'user') return blocksText(message.content);
  }
  return '';
}

function blocksText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    if (block.type === 'tool_result') texts.push(blocksText(block.content));
  }
  return texts.join(' ');
}
