/**
 * Canonical stream events → Responses named SSE events (PROTOCOLS.md §4).
 *
 * Sequence: `response.created` → `response.in_progress` → per output item
 * `response.output_item.added` … `response.output_item.done` → one terminal
 * event (`response.completed`, `response.incomplete`, or `response.failed`
 * followed by `error`). Every payload carries `sequence_number` from 0.
 *
 * openai-node's accumulator (`lib/responses/ResponseAccumulator.ts`) needs
 * `response.created` first, `output_item.added` before any event at its
 * `output_index` (it pushes items in arrival order, so output indexes are
 * allocated in the order items are added) and `content_part.added` before
 * deltas at its `content_index`. Interleaved tool-call parts (parallel OpenAI
 * tool calls) each own an output index from their start, so their deltas may
 * arrive in any order.
 *
 * Consecutive text parts share one message item: a text part's end closes its
 * content part, and the message item is closed by the next non-text part or
 * the finish. The final object is the one toResponsesResponse would build
 * from the same content.
 */
import type { CanonicalStreamEvent, CanonicalUsage } from '../../providers/canonical.js';
import type { ResponseObject, ResponsesOutputFunctionCall, ResponsesOutputItem, ResponsesOutputMessage, ResponsesOutputReasoning, ResponsesOutputText, ResponsesStreamEvent, ResponsesStreamFrame } from './responses-object.wire.js';
import {
  buildResponseObject,
  createResponsesItemId,
  mapFinishReasonToResponsesOutcome,
  toResponsesUsage,
  type ResponseObjectOptions,
} from './to-responses-response.js';

export interface ResponsesStreamEncoderOptions extends ResponseObjectOptions {
  /**
   * Continue a stream another writer started (a provider's own, passed
   * through): no `response.created`/`response.in_progress`, and numbering
   * from this sequence number + 1.
   */
  continueAfter?: number;
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
type UnsequencedEvent = DistributiveOmit<ResponsesStreamEvent, 'sequence_number'>;

interface MessageState {
  outputIndex: number;
  item: ResponsesOutputMessage;
}

type PartState =
  | { kind: 'text'; message: MessageState; contentIndex: number; part: ResponsesOutputText; ended: boolean }
  | { kind: 'thinking'; outputIndex: number; item: ResponsesOutputReasoning; summaryOpen: boolean; ended: boolean }
  | { kind: 'tool'; outputIndex: number; item: ResponsesOutputFunctionCall; ended: boolean };

/** Canonical error type → Responses error code (openai-node `ResponseError['code']`). */
function mapErrorTypeToResponsesCode(errorType: string | undefined): string {
  if (errorType === undefined) return 'server_error';
  if (errorType.includes('rate_limit')) return 'rate_limit_exceeded';
  if (errorType === 'invalid_request_error' || errorType === 'invalid_prompt') return 'invalid_prompt';
  return 'server_error';
}

/** The OpenAI error `type` that goes with a Responses error code. */
function mapErrorCodeToType(code: string): string {
  if (code === 'rate_limit_exceeded') return 'rate_limit_error';
  if (code === 'invalid_prompt') return 'invalid_request_error';
  return 'server_error';
}

export class ResponsesStreamEncoder {
  private readonly options: ResponseObjectOptions;
  private sequenceNumber = 0;
  private started = false;
  private terminated = false;
  private readonly output: ResponsesOutputItem[] = [];
  private readonly parts = new Map<number, PartState>();
  /** The message item text parts are appended to; closed by any other item. */
  private message: MessageState | undefined;
  private startUsage: Partial<CanonicalUsage> = {};
  private finalResponse: ResponseObject | undefined;

  constructor(options: ResponsesStreamEncoderOptions) {
    const { continueAfter, ...objectOptions } = options;
    this.options = objectOptions;
    if (continueAfter !== undefined) {
      this.started = true;
      this.sequenceNumber = continueAfter + 1;
    }
  }

  /** The final Response object, once a terminal event was produced (for storing it). */
  get response(): ResponseObject | undefined {
    return this.finalResponse;
  }

  push(event: CanonicalStreamEvent): ResponsesStreamFrame[] {
    if (this.terminated) return [];
    const frames: ResponsesStreamFrame[] = [];
    this.begin(frames);
    switch (event.type) {
      case 'start':
        if (event.usage) this.startUsage = { ...event.usage };
        break;
      case 'text-start':
        this.startText(frames, event.index);
        break;
      case 'text-delta':
        this.appendText(frames, event.index, event.text);
        break;
      case 'thinking-start':
        this.startThinking(frames, event.index);
        break;
      case 'thinking-delta':
        this.appendThinking(frames, event.index, event.text);
        break;
      case 'thinking-signature':
        // Anthropic signatures have no Responses counterpart (encrypted_content is OpenAI's own).
        break;
      case 'tool-call-start':
        this.startToolCall(frames, event.index, event.id, event.name);
        break;
      case 'tool-call-delta':
        this.appendToolArguments(frames, event.index, event.argumentsDelta);
        break;
      case 'part-end':
        this.endPart(frames, event.index);
        break;
      case 'finish':
        this.finish(frames, event.finishReason, event.usage);
        break;
      case 'error':
        this.fail(frames, event.message, event.errorType);
        break;
    }
    return frames;
  }

  /** End of the canonical stream; a stream that never finished is reported as failed. */
  end(): ResponsesStreamFrame[] {
    if (this.terminated) return [];
    const frames: ResponsesStreamFrame[] = [];
    this.begin(frames);
    this.fail(frames, 'The response stream ended before the response was complete.', undefined);
    return frames;
  }

  // -------------------------------------------------------------------------

  private emit(frames: ResponsesStreamFrame[], event: UnsequencedEvent): void {
    const { type, ...rest } = event;
    const data = { type, sequence_number: this.sequenceNumber++, ...rest } as ResponsesStreamEvent;
    frames.push({ event: data.type, data });
  }

  private snapshot(state: Parameters<typeof buildResponseObject>[1]): ResponseObject {
    return buildResponseObject(this.options, { ...state, output: structuredClone(state.output) });
  }

  private begin(frames: ResponsesStreamFrame[]): void {
    if (this.started) return;
    this.started = true;
    const response = this.snapshot({ status: 'in_progress', output: [], usage: null });
    this.emit(frames, { type: 'response.created', response });
    this.emit(frames, { type: 'response.in_progress', response: structuredClone(response) });
  }

  private addItem(frames: ResponsesStreamFrame[], item: ResponsesOutputItem): number {
    const outputIndex = this.output.length;
    this.output.push(item);
    this.emit(frames, { type: 'response.output_item.added', output_index: outputIndex, item: structuredClone(item) });
    return outputIndex;
  }

  private itemId(prefix: 'msg' | 'fc' | 'rs'): string {
    return createResponsesItemId(prefix, this.options.id, this.output.length);
  }

  /** Parts other than tool calls end before the next part starts; close any a provider left open. */
  private closeOpenSequentialParts(frames: ResponsesStreamFrame[]): void {
    for (const [index, state] of this.parts) {
      if (!state.ended && state.kind !== 'tool') this.endPart(frames, index);
    }
  }

  private closeMessage(frames: ResponsesStreamFrame[], status: 'completed' | 'incomplete' = 'completed'): void {
    const message = this.message;
    if (!message) return;
    for (const [index, state] of this.parts) {
      if (state.kind === 'text' && state.message === message && !state.ended) this.endPart(frames, index);
    }
    this.message = undefined;
    message.item.status = status;
    this.emit(frames, {
      type: 'response.output_item.done',
      output_index: message.outputIndex,
      item: structuredClone(message.item),
    });
  }

  private startText(frames: ResponsesStreamFrame[], index: number): PartState {
    this.closeOpenSequentialParts(frames);
    if (!this.message) {
      const item: ResponsesOutputMessage = {
        type: 'message',
        id: this.itemId('msg'),
        role: 'assistant',
        status: 'in_progress',
        content: [],
      };
      this.message = { outputIndex: this.addItem(frames, item), item };
    }
    const message = this.message;
    const part: ResponsesOutputText = { type: 'output_text', text: '', annotations: [], logprobs: [] };
    const contentIndex = message.item.content.length;
    message.item.content.push(part);
    const state: PartState = { kind: 'text', message, contentIndex, part, ended: false };
    this.parts.set(index, state);
    this.emit(frames, {
      type: 'response.content_part.added',
      item_id: message.item.id,
      output_index: message.outputIndex,
      content_index: contentIndex,
      part: structuredClone(part),
    });
    return state;
  }

  private appendText(frames: ResponsesStreamFrame[], index: number, text: string): void {
    let state = this.parts.get(index);
    if (state === undefined) state = this.startText(frames, index);
    if (state.kind !== 'text' || state.ended) return;
    state.part.text += text;
    this.emit(frames, {
      type: 'response.output_text.delta',
      item_id: state.message.item.id,
      output_index: state.message.outputIndex,
      content_index: state.contentIndex,
      delta: text,
      logprobs: [],
    });
  }

  private startThinking(frames: ResponsesStreamFrame[], index: number): PartState {
    this.closeOpenSequentialParts(frames);
    this.closeMessage(frames);
    const item: ResponsesOutputReasoning = { type: 'reasoning', id: this.itemId('rs'), summary: [] };
    const state: PartState = { kind: 'thinking', outputIndex: this.addItem(frames, item), item, summaryOpen: false, ended: false };
    this.parts.set(index, state);
    return state;
  }

  private appendThinking(frames: ResponsesStreamFrame[], index: number, text: string): void {
    let state = this.parts.get(index);
    if (state === undefined) state = this.startThinking(frames, index);
    if (state.kind !== 'thinking' || state.ended) return;
    // The summary part opens with the first text, so redacted thinking yields `summary: []`.
    if (!state.summaryOpen) {
      state.summaryOpen = true;
      state.item.summary.push({ type: 'summary_text', text: '' });
      this.emit(frames, {
        type: 'response.reasoning_summary_part.added',
        item_id: state.item.id,
        output_index: state.outputIndex,
        summary_index: 0,
        part: { type: 'summary_text', text: '' },
      });
    }
    state.item.summary[0].text += text;
    this.emit(frames, {
      type: 'response.reasoning_summary_text.delta',
      item_id: state.item.id,
      output_index: state.outputIndex,
      summary_index: 0,
      delta: text,
    });
  }

  private startToolCall(frames: ResponsesStreamFrame[], index: number, callId: string, name: string): void {
    this.closeOpenSequentialParts(frames);
    this.closeMessage(frames);
    const item: ResponsesOutputFunctionCall = {
      type: 'function_call',
      id: this.itemId('fc'),
      call_id: callId,
      name,
      arguments: '',
      status: 'in_progress',
    };
    this.parts.set(index, { kind: 'tool', outputIndex: this.addItem(frames, item), item, ended: false });
  }

  private appendToolArguments(frames: ResponsesStreamFrame[], index: number, delta: string): void {
    const state = this.parts.get(index);
    if (state?.kind !== 'tool' || state.ended) return;
    state.item.arguments += delta;
    this.emit(frames, {
      type: 'response.function_call_arguments.delta',
      item_id: state.item.id,
      output_index: state.outputIndex,
      delta,
    });
  }

  private endPart(frames: ResponsesStreamFrame[], index: number): void {
    const state = this.parts.get(index);
    if (state === undefined || state.ended) return;
    state.ended = true;
    switch (state.kind) {
      case 'text': {
        const at = { item_id: state.message.item.id, output_index: state.message.outputIndex, content_index: state.contentIndex };
        this.emit(frames, { type: 'response.output_text.done', ...at, text: state.part.text, logprobs: [] });
        this.emit(frames, { type: 'response.content_part.done', ...at, part: structuredClone(state.part) });
        break;
      }
      case 'thinking': {
        const at = { item_id: state.item.id, output_index: state.outputIndex, summary_index: 0 };
        if (state.summaryOpen) {
          const text = state.item.summary[0].text;
          this.emit(frames, { type: 'response.reasoning_summary_text.done', ...at, text });
          this.emit(frames, { type: 'response.reasoning_summary_part.done', ...at, part: { type: 'summary_text', text } });
        }
        this.emit(frames, {
          type: 'response.output_item.done',
          output_index: state.outputIndex,
          item: structuredClone(state.item),
        });
        break;
      }
      case 'tool': {
        // Canonical arguments are `{}` when empty.
        if (state.item.arguments === '') state.item.arguments = '{}';
        state.item.status = 'completed';
        this.emit(frames, {
          type: 'response.function_call_arguments.done',
          item_id: state.item.id,
          output_index: state.outputIndex,
          name: state.item.name,
          arguments: state.item.arguments,
        });
        this.emit(frames, {
          type: 'response.output_item.done',
          output_index: state.outputIndex,
          item: structuredClone(state.item),
        });
        break;
      }
    }
  }

  private finish(
    frames: ResponsesStreamFrame[],
    finishReason: Parameters<typeof mapFinishReasonToResponsesOutcome>[0],
    usage: CanonicalUsage,
  ): void {
    const outcome = mapFinishReasonToResponsesOutcome(finishReason);
    if (outcome.status === 'failed') {
      this.fail(frames, outcome.error?.message ?? 'The provider failed.', undefined);
      return;
    }
    for (const index of this.parts.keys()) this.endPart(frames, index);
    this.closeMessage(frames, outcome.status === 'incomplete' ? 'incomplete' : 'completed');
    this.terminated = true;
    const response = this.snapshot({
      status: outcome.status,
      output: this.output,
      usage: toResponsesUsage({ ...this.startUsage, ...usage }),
      incompleteDetails: outcome.incompleteDetails,
    });
    this.finalResponse = response;
    const type = outcome.status === 'incomplete' ? 'response.incomplete' : 'response.completed';
    this.emit(frames, { type, response: structuredClone(response) });
  }

  private fail(frames: ResponsesStreamFrame[], message: string, errorType: string | undefined): void {
    this.terminated = true;
    this.message = undefined;
    // Items cut off by the failure keep no `in_progress` status in the final object.
    for (const item of this.output) {
      if ('status' in item && item.status === 'in_progress') item.status = 'incomplete';
    }
    const code = mapErrorTypeToResponsesCode(errorType);
    const usage = this.startUsage.inputTokens !== undefined
      ? toResponsesUsage({ outputTokens: 0, ...this.startUsage, inputTokens: this.startUsage.inputTokens })
      : null;
    const response = this.snapshot({ status: 'failed', output: this.output, usage, error: { code, message } });
    this.finalResponse = response;
    this.emit(frames, { type: 'response.failed', response: structuredClone(response) });
    // The spec's flat fields, and the same under `error`: openai-node v6 and openai-python
    // raise on a payload with an `error` key only (v7 raises on any `event: error`).
    this.emit(frames, { type: 'error', code, message, param: null, error: { type: mapErrorCodeToType(code), code, message, param: null } });
  }
}
