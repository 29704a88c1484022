/**
 * Canonical response ⇄ Responses object (PROTOCOLS.md §4).
 *
 * `toResponsesResponse` builds the object the gateway answers with; the stream
 * encoder builds its final object with the same helpers, so a streamed and a
 * non-streamed answer of the same content are the same object.
 * `fromResponsesResponse` reads a Responses-speaking upstream's answer.
 *
 * Output items: each thinking part is a `reasoning` item (`rs_…`, its text as
 * one summary entry), consecutive text parts share one `message` item (`msg_…`,
 * one output_text part each), each tool call is a `function_call` item
 * (`fc_…`, the canonical tool-call id as `call_id`). Item ids are derived from
 * the response id and the output index, so they are stable and unique.
 */
import type {
  CanonicalAssistantPart,
  CanonicalFinishReason,
  CanonicalResponse,
  CanonicalUsage,
} from '../../providers/canonical.js';
import { UpstreamError } from '../../errors.js';
import type { ResponsesEchoFields } from './responses.wire.js';
import { responsesResponseBodySchema, type ResponseObject, type ResponsesOutputItem, type ResponsesOutputMessage, type ResponsesStatus, type ResponsesUsage, type ResponsesUsageWire } from './responses-object.wire.js';
import { RESPONSES_ITEM_ORIGIN, isRecord, responsesPartOrigin } from './responses-shared.js';

export interface ResponseObjectOptions {
  /** The gateway's response id (`resp_…`). */
  id: string;
  /** The model as the client named it. */
  model: string;
  /** Unix seconds. */
  createdAt: number;
  /** The request's fields the object echoes (a parsed ResponsesRequest fits). */
  request?: ResponsesEchoFields;
}

export type ResponsesItemPrefix = 'msg' | 'fc' | 'rs';

/** `msg_<response id without resp_>_<output index>`. */
export function createResponsesItemId(prefix: ResponsesItemPrefix, responseId: string, outputIndex: number): string {
  return `${prefix}_${responseId.replace(/^resp_/, '')}_${outputIndex}`;
}

export interface ResponsesOutcome {
  status: ResponsesStatus;
  incompleteDetails: ResponseObject['incomplete_details'];
  error: ResponseObject['error'];
}

/** Finish reason → status (PROTOCOLS.md §7 "finish" table). */
export function mapFinishReasonToResponsesOutcome(finishReason: CanonicalFinishReason): ResponsesOutcome {
  switch (finishReason) {
    case 'length':
      return { status: 'incomplete', incompleteDetails: { reason: 'max_output_tokens' }, error: null };
    case 'content_filter':
      return { status: 'incomplete', incompleteDetails: { reason: 'content_filter' }, error: null };
    case 'error':
      return {
        status: 'failed',
        incompleteDetails: null,
        error: { code: 'server_error', message: 'The provider failed to complete the response.' },
      };
    default:
      return { status: 'completed', incompleteDetails: null, error: null };
  }
}

export function toResponsesUsage(usage: CanonicalUsage): ResponsesUsage {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: {
      cached_tokens: usage.cachedInputTokens ?? 0,
      cache_write_tokens: usage.cacheWriteInputTokens ?? 0,
    },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

export function fromResponsesUsage(usage: ResponsesUsageWire | null | undefined): CanonicalUsage {
  const out: CanonicalUsage = { inputTokens: usage?.input_tokens ?? 0, outputTokens: usage?.output_tokens ?? 0 };
  const cached = usage?.input_tokens_details?.cached_tokens;
  if (cached != null) out.cachedInputTokens = cached;
  const cacheWrite = usage?.input_tokens_details?.cache_write_tokens;
  if (cacheWrite != null) out.cacheWriteInputTokens = cacheWrite;
  const reasoning = usage?.output_tokens_details?.reasoning_tokens;
  if (reasoning != null) out.reasoningTokens = reasoning;
  return out;
}

/** The object around an output list; unset echo fields get the values OpenAI reports for defaults. */
export function buildResponseObject(
  options: ResponseObjectOptions,
  state: {
    status: ResponsesStatus;
    output: ResponsesOutputItem[];
    usage: ResponsesUsage | null;
    incompleteDetails?: ResponseObject['incomplete_details'];
    error?: ResponseObject['error'];
  },
): ResponseObject {
  const request = options.request ?? {};
  const text = isRecord(request.text) ? { ...request.text } : {};
  if (text.format == null) text.format = { type: 'text' };
  return {
    id: options.id,
    object: 'response',
    created_at: options.createdAt,
    status: state.status,
    error: state.error ?? null,
    incomplete_details: state.incompleteDetails ?? null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: options.model,
    output: state.output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: request.previous_response_id ?? null,
    reasoning: request.reasoning ?? { effort: null, summary: null },
    temperature: request.temperature ?? 1,
    text,
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ? [...request.tools] : [],
    top_p: request.top_p ?? 1,
    metadata: request.metadata ?? {},
    usage: state.usage,
  };
}

/** A message the response was cut in the middle of is itself incomplete. */
export function markLastMessageIncomplete(output: ResponsesOutputItem[], status: ResponsesStatus): void {
  const last = output[output.length - 1];
  if (status === 'incomplete' && last?.type === 'message') (last as ResponsesOutputMessage).status = 'incomplete';
}

export function toResponsesResponse(response: CanonicalResponse, options: ResponseObjectOptions): ResponseObject {
  const output: ResponsesOutputItem[] = [];
  let message: ResponsesOutputMessage | undefined;
  for (const part of response.content) {
    if (part.type === 'text') {
      if (!message) {
        message = {
          type: 'message',
          id: createResponsesItemId('msg', options.id, output.length),
          role: 'assistant',
          status: 'completed',
          content: [],
        };
        output.push(message);
      }
      message.content.push({ type: 'output_text', text: part.text, annotations: [], logprobs: [] });
      continue;
    }
    message = undefined;
    if (part.type === 'thinking') {
      output.push({
        type: 'reasoning',
        id: createResponsesItemId('rs', options.id, output.length),
        summary: part.text === '' ? [] : [{ type: 'summary_text', text: part.text }],
      });
    } else if (part.type === 'tool_call') {
      output.push({
        type: 'function_call',
        id: createResponsesItemId('fc', options.id, output.length),
        call_id: part.id,
        name: part.name,
        arguments: part.arguments,
        status: 'completed',
      });
    } else if (part.origin === RESPONSES_ITEM_ORIGIN && isRecord(part.raw) && typeof part.raw.type === 'string') {
      // An item a Responses upstream produced that we do not model (web_search_call, …).
      output.push(structuredClone(part.raw) as ResponsesOutputItem);
    }
  }
  const outcome = mapFinishReasonToResponsesOutcome(response.finishReason);
  markLastMessageIncomplete(output, outcome.status);
  return buildResponseObject(options, {
    status: outcome.status,
    output,
    usage: toResponsesUsage(response.usage),
    incompleteDetails: outcome.incompleteDetails,
    error: outcome.error,
  });
}

// ---------------------------------------------------------------------------
// Upstream → canonical

function stringField(record: Record<string, unknown>, key: string): string | undefined {
  const value = record[key];
  return typeof value === 'string' ? value : undefined;
}

function textsOf(entries: unknown): string[] {
  if (!Array.isArray(entries)) return [];
  return entries.flatMap((entry) => (isRecord(entry) && typeof entry.text === 'string' ? [entry.text] : []));
}

/** One output item → canonical parts; exported for the stream decoder's `output_item.done` fallback. */
export function fromResponsesOutputItem(item: unknown): CanonicalAssistantPart[] {
  if (!isRecord(item)) return [];
  switch (item.type) {
    case 'message': {
      if (!Array.isArray(item.content)) return [];
      return item.content.flatMap((part): CanonicalAssistantPart[] => {
        if (!isRecord(part)) return [];
        if (part.type === 'output_text') return [{ type: 'text', text: stringField(part, 'text') ?? '' }];
        if (part.type === 'refusal') return [{ type: 'text', text: stringField(part, 'refusal') ?? '' }];
        return [{ type: 'unknown', origin: responsesPartOrigin(String(part.type)), raw: part }];
      });
    }
    case 'function_call': {
      const callId = stringField(item, 'call_id') ?? stringField(item, 'id') ?? '';
      const args = stringField(item, 'arguments') ?? '';
      return [{ type: 'tool_call', id: callId, name: stringField(item, 'name') ?? '', arguments: args === '' ? '{}' : args }];
    }
    case 'reasoning': {
      const summary = textsOf(item.summary);
      const texts = summary.length > 0 ? summary : textsOf(item.content);
      return texts.map((text) => ({ type: 'thinking', text }));
    }
    default:
      return typeof item.type === 'string' ? [{ type: 'unknown', origin: RESPONSES_ITEM_ORIGIN, raw: item }] : [];
  }
}

/** Status and parts → finish reason; a completed turn that called tools finished on them. */
export function mapResponsesStatusToFinishReason(
  status: string | null | undefined,
  incompleteReason: string | null | undefined,
  calledTools: boolean,
): CanonicalFinishReason {
  if (status === 'incomplete') return incompleteReason === 'content_filter' ? 'content_filter' : 'length';
  if (status === 'failed' || status === 'cancelled') return 'error';
  return calledTools ? 'tool_calls' : 'stop';
}

/** A Responses upstream's JSON body → canonical. Throws UpstreamError (502) on garbage or a failed response. */
export function fromResponsesResponse(body: unknown, provider = 'responses'): CanonicalResponse {
  const parsed = responsesResponseBodySchema.safeParse(body);
  if (!parsed.success) {
    throw new UpstreamError('The provider answered with a body that is not a Responses object.', {
      status: 502,
      provider,
      retryable: false,
      cause: parsed.error,
    });
  }
  const response = parsed.data;
  if (response.status === 'failed') {
    throw new UpstreamError(response.error?.message ?? 'The provider reported a failed response.', {
      status: 502,
      provider,
      retryable: response.error?.code === 'server_error',
      upstreamType: response.error?.code ?? null,
    });
  }
  const content = response.output.flatMap(fromResponsesOutputItem);
  return {
    id: response.id ?? '',
    model: response.model ?? '',
    content,
    finishReason: mapResponsesStatusToFinishReason(
      response.status,
      response.incomplete_details?.reason,
      content.some((part) => part.type === 'tool_call'),
    ),
    usage: fromResponsesUsage(response.usage),
  };
}
