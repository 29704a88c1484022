/**
 * OpenAI dialect of the upstream test server: `POST /v1/chat/completions`
 * (JSON and SSE, PROTOCOLS.md §2), `POST /v1/responses` (JSON and named-event
 * SSE, §4) and `GET /v1/models`.
 *
 * Default answers are derived from the request only:
 * - text: `Echo: <last user text>` where the last user text is the last `user`
 *   or `tool` message (Responses: last user message or `function_call_output`),
 *   its text parts joined with a space; `stop` cuts it, and
 *   `max_completion_tokens`/`max_tokens`/`max_output_tokens` truncate it (finish `length`).
 * - a tool call instead when `tools` is non-empty and `tool_choice` is
 *   `"required"` or names a function: the named (else the first) function,
 *   arguments `options.toolArguments` or `{"input":"<last user text>"}`.
 * - usage: prompt tokens = estimateTokens(all string values of the messages
 *   (Responses: instructions + input) and tools); completion tokens =
 *   estimateTokens(answer text, or tool name + arguments).
 */
import {
  UPSTREAM_CREATED,
  applyStopSequences,
  collectPromptText,
  dataFrame,
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

export type OpenAIUpstreamOptions = UpstreamServerOptions;

export const OPENAI_UPSTREAM_MODELS = ['gpt-4o-mini', 'gpt-4o'];

export function startOpenAIUpstream(options: OpenAIUpstreamOptions = {}): Promise<UpstreamServer> {
  return startUpstreamServer(createOpenAIDialect(options), options);
}

/** OpenAI's error `type` for a status (the SDK picks its class from the status alone). */
function openAIErrorType(status: number): string {
  if (status === 401) return 'invalid_request_error';
  if (status === 403) return 'permission_error';
  // OpenAI types rate limits by what ran out (`requests`/`tokens`); the code says why.
  if (status === 429) return 'requests';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** `{ error: { message, type, param, code } }`, all four keys present (§5). */
export function toOpenAIErrorBody(status: number, details: UpstreamErrorDetails = {}): unknown {
  return {
    error: {
      message: details.message ?? `Upstream test server answered ${status}.`,
      type: details.errorType ?? openAIErrorType(status),
      param: details.param ?? null,
      code: details.code !== undefined ? details.code : status === 429 ? 'rate_limit_exceeded' : null,
    },
  };
}

function openAIError(status: number, details: UpstreamErrorDetails): UpstreamAnswer {
  return { kind: 'json', status, body: toOpenAIErrorBody(status, details) };
}

type Plan =
  | { kind: 'text'; text: string; finishReason: 'stop' | 'length' }
  | { kind: 'tool'; name: string; arguments: string };

interface PlanInput {
  lastUserText: string;
  tools: unknown;
  toolChoice: unknown;
  /** Function name of a tool definition (chat nests it under `function`, Responses is flat). */
  toolName: (tool: unknown) => string | undefined;
  /** Function name forced by `tool_choice`, if it names one. */
  forcedName: (choice: unknown) => string | undefined;
  stops: string[];
  maxTokens: number | undefined;
}

/** The dialect itself, for servers that speak OpenAI's format under other paths (Azure OpenAI). */
export function createOpenAIDialect(options: OpenAIUpstreamOptions): UpstreamDialect {
  const chunkSize = options.streamChunkSize ?? 4;
  const models = options.models ?? OPENAI_UPSTREAM_MODELS;

  function plan(input: PlanInput): Plan {
    const tools = Array.isArray(input.tools) ? input.tools : [];
    const forced = input.forcedName(input.toolChoice);
    if (tools.length > 0 && (input.toolChoice === 'required' || forced !== undefined)) {
      const name = forced ?? input.toolName(tools[0]) ?? 'tool';
      const args = options.toolArguments ?? { input: input.lastUserText };
      return { kind: 'tool', name, arguments: JSON.stringify(args) };
    }
    let { text } = applyStopSequences(`Echo: ${input.lastUserText}`, input.stops);
    let finishReason: 'stop' | 'length' = 'stop';
    if (input.maxTokens !== undefined && estimateTokens(text) > input.maxTokens) {
      text = truncateToTokens(text, input.maxTokens);
      finishReason = 'length';
    }
    return { kind: 'text', text, finishReason };
  }

  function completionTokens(answer: Plan): number {
    return answer.kind === 'text' ? estimateTokens(answer.text) : estimateTokens(answer.name + answer.arguments);
  }

  // ----- chat completions -----

  function answerChat(request: RecordedRequest): UpstreamAnswer {
    const body = request.body;
    if (!isRecord(body)) {
      return openAIError(400, { message: 'We could not parse the JSON body of your request.' });
    }
    if (typeof body.model !== 'string' || body.model.length === 0) {
      return openAIError(400, { message: 'you must provide a model parameter', param: 'model' });
    }
    if (!Array.isArray(body.messages) || body.messages.length === 0) {
      return openAIError(400, { message: "Missing required parameter: 'messages'.", param: 'messages' });
    }
    const model = body.model;
    const answer = plan({
      lastUserText: lastChatUserText(body.messages),
      tools: body.tools,
      toolChoice: body.tool_choice,
      toolName: (tool) => (isRecord(tool) && isRecord(tool.function) && typeof tool.function.name === 'string' ? tool.function.name : undefined),
      forcedName: (choice) =>
        isRecord(choice) && choice.type === 'function' && isRecord(choice.function) && typeof choice.function.name === 'string'
          ? choice.function.name
          : undefined,
      stops: toStringList(body.stop),
      maxTokens: toNumber(body.max_completion_tokens) ?? toNumber(body.max_tokens),
    });
    const promptTokens = estimateTokens(collectPromptText([body.messages, body.tools ?? []]));
    const outputTokens = completionTokens(answer);
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: outputTokens,
      total_tokens: promptTokens + outputTokens,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    };
    const id = `chatcmpl-${request.sequence}`;
    const callId = `call_${request.sequence}`;
    const finishReason = answer.kind === 'tool' ? 'tool_calls' : answer.finishReason;

    if (body.stream !== true) {
      const message =
        answer.kind === 'tool'
          ? {
              role: 'assistant',
              content: null,
              refusal: null,
              tool_calls: [{ id: callId, type: 'function', function: { name: answer.name, arguments: answer.arguments } }],
            }
          : { role: 'assistant', content: answer.text, refusal: null };
      return {
        kind: 'json',
        status: 200,
        body: {
          id,
          object: 'chat.completion',
          created: UPSTREAM_CREATED,
          model,
          choices: [{ index: 0, message, logprobs: null, finish_reason: finishReason }],
          usage,
        },
      };
    }

    const includeUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
    const chunk = (choices: unknown[], usageValue: unknown = null): string =>
      dataFrame({
        id,
        object: 'chat.completion.chunk',
        created: UPSTREAM_CREATED,
        model,
        choices,
        ...(includeUsage ? { usage: usageValue } : {}),
      });
    const delta = (value: Record<string, unknown>, finish: string | null = null): unknown => ({
      index: 0,
      delta: value,
      logprobs: null,
      finish_reason: finish,
    });

    const frames = [chunk([delta({ role: 'assistant', content: '' })])];
    if (answer.kind === 'text') {
      for (const piece of splitText(answer.text, chunkSize)) frames.push(chunk([delta({ content: piece })]));
    } else {
      frames.push(
        chunk([delta({ tool_calls: [{ index: 0, id: callId, type: 'function', function: { name: answer.name, arguments: '' } }] })]),
      );
      for (const piece of splitText(answer.arguments, chunkSize)) {
        frames.push(chunk([delta({ tool_calls: [{ index: 0, function: { arguments: piece } }] })]));
      }
    }
    frames.push(chunk([delta({}, finishReason)]));
    if (includeUsage) frames.push(chunk([], usage));
    frames.push(dataFrame('[DONE]'));
    return { kind: 'sse', frames };
  }

  // ----- responses -----

  function answerResponses(request: RecordedRequest): UpstreamAnswer {
    const body = request.body;
    if (!isRecord(body)) {
      return openAIError(400, { message: 'We could not parse the JSON body of your request.' });
    }
    if (typeof body.model !== 'string' || body.model.length === 0) {
      return openAIError(400, { message: "Missing required parameter: 'model'.", param: 'model' });
    }
    if (body.input === undefined) {
      return openAIError(400, { message: "Missing required parameter: 'input'.", param: 'input' });
    }
    const answer = plan({
      lastUserText: lastResponsesUserText(body.input),
      tools: body.tools,
      toolChoice: body.tool_choice,
      toolName: (tool) => (isRecord(tool) && tool.type === 'function' && typeof tool.name === 'string' ? tool.name : undefined),
      forcedName: (choice) => (isRecord(choice) && choice.type === 'function' && typeof choice.name === 'string' ? choice.name : undefined),
      stops: [],
      maxTokens: toNumber(body.max_output_tokens),
    });
    const inputTokens = estimateTokens(collectPromptText([body.instructions ?? '', body.input, body.tools ?? []]));
    const outputTokens = completionTokens(answer);
    const n = request.sequence;
    const incomplete = answer.kind === 'text' && answer.finishReason === 'length';
    const base = {
      id: `resp_${n}`,
      object: 'response',
      created_at: UPSTREAM_CREATED,
      model: body.model,
      error: null,
      incomplete_details: null,
      instructions: body.instructions ?? null,
      metadata: body.metadata ?? {},
      tools: body.tools ?? [],
      tool_choice: body.tool_choice ?? 'auto',
      temperature: body.temperature ?? 1,
      top_p: body.top_p ?? 1,
      parallel_tool_calls: body.parallel_tool_calls ?? true,
    };
    const messageItem = (text: string, status: string): Record<string, unknown> => ({
      type: 'message',
      id: `msg_${n}`,
      role: 'assistant',
      status,
      content: text === '' && status === 'in_progress' ? [] : [outputText(text)],
    });
    const functionItem = (args: string, status: string): Record<string, unknown> => ({
      type: 'function_call',
      id: `fc_${n}`,
      call_id: `call_${n}`,
      name: answer.kind === 'tool' ? answer.name : '',
      arguments: args,
      status,
    });
    const finalItem = answer.kind === 'tool' ? functionItem(answer.arguments, 'completed') : messageItem(answer.text, incomplete ? 'incomplete' : 'completed');
    const finalResponse = {
      ...base,
      status: incomplete ? 'incomplete' : 'completed',
      incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
      output: [finalItem],
      usage: {
        input_tokens: inputTokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: outputTokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: inputTokens + outputTokens,
      },
    };

    if (body.stream !== true) return { kind: 'json', status: 200, body: finalResponse };

    const frames: string[] = [];
    const emit = (type: string, payload: Record<string, unknown>): void => {
      frames.push(namedFrame(type, { type, sequence_number: frames.length, ...payload }));
    };
    const inProgress = { ...base, status: 'in_progress', output: [], usage: null };
    emit('response.created', { response: inProgress });
    emit('response.in_progress', { response: inProgress });
    if (answer.kind === 'text') {
      const itemId = `msg_${n}`;
      const where = { item_id: itemId, output_index: 0, content_index: 0 };
      emit('response.output_item.added', { output_index: 0, item: messageItem('', 'in_progress') });
      emit('response.content_part.added', { ...where, part: outputText('') });
      for (const piece of splitText(answer.text, chunkSize)) emit('response.output_text.delta', { ...where, delta: piece, logprobs: [] });
      emit('response.output_text.done', { ...where, text: answer.text, logprobs: [] });
      emit('response.content_part.done', { ...where, part: outputText(answer.text) });
    } else {
      const where = { item_id: `fc_${n}`, output_index: 0 };
      emit('response.output_item.added', { output_index: 0, item: functionItem('', 'in_progress') });
      for (const piece of splitText(answer.arguments, chunkSize)) emit('response.function_call_arguments.delta', { ...where, delta: piece });
      emit('response.function_call_arguments.done', { ...where, name: answer.name, arguments: answer.arguments });
    }
    emit('response.output_item.done', { output_index: 0, item: finalItem });
    emit(incomplete ? 'response.incomplete' : 'response.completed', { response: finalResponse });
    return { kind: 'sse', frames };
  }

  // ----- models -----

  function modelObject(id: string): Record<string, unknown> {
    return { id, object: 'model', created: UPSTREAM_CREATED, owned_by: 'upstream-test' };
  }

  return {
    requestIdHeader: 'x-request-id',
    check(request) {
      if (options.expectedApiKey === undefined) return undefined;
      if (request.headers.authorization === `Bearer ${options.expectedApiKey}`) return undefined;
      // Like OpenAI, never echo the key that was sent.
      return openAIError(401, {
        message: 'Incorrect API key provided. You can find your API key at https://platform.openai.com/account/api-keys.',
        code: 'invalid_api_key',
      });
    },
    answer(request) {
      const route = `${request.method} ${request.path}`;
      if (route === 'POST /v1/chat/completions') return answerChat(request);
      if (route === 'POST /v1/responses') return answerResponses(request);
      if (route === 'GET /v1/models') return { kind: 'json', status: 200, body: { object: 'list', data: models.map(modelObject) } };
      const modelMatch = /^\/v1\/models\/([^/]+)$/.exec(request.path);
      if (request.method === 'GET' && modelMatch) {
        const id = decodeURIComponent(modelMatch[1]);
        if (models.includes(id)) return { kind: 'json', status: 200, body: modelObject(id) };
        return openAIError(404, { message: `The model '${id}' does not exist`, param: 'model', code: 'model_not_found' });
      }
      return openAIError(404, { message: `Invalid URL (${request.method} ${request.path})` });
    },
    errorBody(status, details) {
      return toOpenAIErrorBody(status, details);
    },
    errorEventFrame(request, details, frameIndex) {
      const message = details.message ?? 'Upstream test server error';
      if (request.path === '/v1/responses') {
        return namedFrame('error', { type: 'error', sequence_number: frameIndex, code: details.errorType ?? 'server_error', message, param: null });
      }
      return dataFrame({ error: { message, type: details.errorType ?? 'server_error', param: null, code: null } });
    },
    malformedSseFrame(request) {
      if (request.path === '/v1/responses') return 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",\n\n';
      return 'data: {"id":"chatcmpl-broken","choices":[{\n\n';
    },
  };
}

function outputText(text: string): Record<string, unknown> {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

/** Text of a message `content`: a string, or its `text`/`input_text` parts joined with a space. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((part): part is Record<string, unknown> => isRecord(part) && typeof part.text === 'string')
    .map((part) => part.text as string)
    .join(' ');
}

function lastChatUserText(messages: unknown[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (isRecord(message) && (message.role === 'user' || message.role === 'tool')) return contentText(message.content);
  }
  return '';
}

function lastResponsesUserText(input: unknown): string {
  if (typeof input === 'string') return input;
  if (!Array.isArray(input)) return '';
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i];
    if (!isRecord(item)) continue;
    if (item.type === 'function_call_output') return contentText(item.output);
    if (item.role === 'user' && (item.type === undefined || item.type === 'message')) return contentText(item.content);
  }
  return '';
}

function toStringList(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return [];
}

function toNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}
