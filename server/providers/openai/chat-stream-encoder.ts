/**
 * Canonical stream events → the chat completion chunks a client receives
 * (PROTOCOLS.md §2). The caller writes each returned object as one
 * `data: <json>\n\n` frame, then `data: [DONE]` unless the stream failed.
 *
 * Frame sequence: a first chunk with `delta:{role:"assistant",content:""}`,
 * content and tool-call deltas, a `delta:{}` chunk with `finish_reason`, and
 * with `includeUsage` a last `choices:[]` chunk with the totals. Thinking is
 * dropped unless `includeReasoning` asks for `reasoning_content` deltas.
 */
import type { CanonicalStreamEvent, CanonicalUsage } from '../canonical.js';
import { toOpenAIFinishReason } from './map-openai-finish-reason.js';
import { toOpenAIUsage } from './map-openai-usage.js';
import type {
  ChatCompletionChunk,
  ChatCompletionChunkChoice,
  ChatCompletionChunkDelta,
  ChatFinishReason,
  ChatStreamErrorPayload,
} from './openai.wire.js';

export interface ChatStreamEncoderOptions {
  /** `chatcmpl-…` id shared by every chunk. */
  id: string;
  /** The model id the client asked for. */
  model: string;
  /** Unix seconds, shared by every chunk. */
  created: number;
  /** The client's `stream_options.include_usage`. */
  includeUsage: boolean;
  /**
   * Send thinking as non-standard `delta.reasoning_content` (DeepSeek's
   * convention, shown by many chat UIs). Off by default: OpenAI never sends it.
   */
  includeReasoning?: boolean;
}

/** One frame to send: a chunk, or the in-band error payload that ends the stream. */
export type ChatStreamFrame = ChatCompletionChunk | ChatStreamErrorPayload;

export class ChatStreamEncoder {
  private readonly options: ChatStreamEncoderOptions;
  private state: 'waiting' | 'streaming' | 'finished' | 'failed' = 'waiting';
  /** Canonical part index → `tool_calls[].index` (chat counts tool calls only). */
  private readonly toolCallIndexes = new Map<number, number>();
  private currentUsage: CanonicalUsage = { inputTokens: 0, outputTokens: 0 };

  constructor(options: ChatStreamEncoderOptions) {
    this.options = options;
  }

  /** Totals so far; final once the stream finished. */
  get usage(): CanonicalUsage {
    return this.currentUsage;
  }

  /** True after the finish chunk: the caller sends `data: [DONE]`. */
  get finished(): boolean {
    return this.state === 'finished';
  }

  /** True after an error payload: the caller closes the stream without `[DONE]`. */
  get failed(): boolean {
    return this.state === 'failed';
  }

  push(event: CanonicalStreamEvent): ChatStreamFrame[] {
    if (this.state === 'finished' || this.state === 'failed') return [];
    switch (event.type) {
      case 'start':
        this.currentUsage = { ...this.currentUsage, ...event.usage };
        return this.open();
      case 'text-start':
      case 'thinking-start':
      case 'thinking-signature':
      case 'part-end':
        return this.open();
      case 'text-delta':
        return event.text === '' ? this.open() : [...this.open(), this.createDeltaChunk({ content: event.text })];
      case 'thinking-delta':
        if (!this.options.includeReasoning || event.text === '') return this.open();
        return [...this.open(), this.createDeltaChunk({ reasoning_content: event.text })];
      case 'tool-call-start': {
        const toolCallIndex = this.toolCallIndexes.size;
        this.toolCallIndexes.set(event.index, toolCallIndex);
        // The first fragment carries everything openai-node's stream helper requires of a tool call.
        return [
          ...this.open(),
          this.createDeltaChunk({
            tool_calls: [
              { index: toolCallIndex, id: event.id, type: 'function', function: { name: event.name, arguments: '' } },
            ],
          }),
        ];
      }
      case 'tool-call-delta': {
        const toolCallIndex = this.toolCallIndexes.get(event.index);
        if (toolCallIndex === undefined || event.argumentsDelta === '') return this.open();
        return [
          ...this.open(),
          this.createDeltaChunk({ tool_calls: [{ index: toolCallIndex, function: { arguments: event.argumentsDelta } }] }),
        ];
      }
      case 'finish':
        this.currentUsage = event.usage;
        return this.finish(toOpenAIFinishReason(event.finishReason));
      case 'error':
        this.state = 'failed';
        return [{ error: { message: event.message, type: 'server_error', param: null, code: null } }];
    }
  }

  /**
   * End of the canonical stream. A stream that ended without `finish` still
   * gets a finish chunk: openai-node's stream helper throws on a choice
   * without `finish_reason`.
   */
  end(): ChatStreamFrame[] {
    if (this.state === 'finished' || this.state === 'failed') return [];
    return this.finish('stop');
  }

  private open(): ChatCompletionChunk[] {
    if (this.state !== 'waiting') return [];
    this.state = 'streaming';
    return [this.createDeltaChunk({ role: 'assistant', content: '' })];
  }

  private finish(finishReason: ChatFinishReason): ChatCompletionChunk[] {
    const chunks = this.open();
    chunks.push(this.createChunk([{ index: 0, delta: {}, logprobs: null, finish_reason: finishReason }]));
    if (this.options.includeUsage) chunks.push(this.createChunk([], toOpenAIUsage(this.currentUsage)));
    this.state = 'finished';
    return chunks;
  }

  private createDeltaChunk(delta: ChatCompletionChunkDelta): ChatCompletionChunk {
    return this.createChunk([{ index: 0, delta, logprobs: null, finish_reason: null }]);
  }

  private createChunk(choices: ChatCompletionChunkChoice[], usage: ChatCompletionChunk['usage'] = null): ChatCompletionChunk {
    const chunk: ChatCompletionChunk = {
      id: this.options.id,
      object: 'chat.completion.chunk',
      created: this.options.created,
      model: this.options.model,
      choices,
    };
    // `"usage": null` on every chunk only when the client asked for usage, as OpenAI does.
    if (this.options.includeUsage) chunk.usage = usage;
    return chunk;
  }
}
