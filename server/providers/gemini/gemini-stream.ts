/**
 * `streamGenerateContent?alt=sse` → canonical stream events. Each event's
 * data is a whole `GenerateContentResponse` holding the next parts: text and
 * thought text arrive in pieces, a function call arrives whole, the last
 * chunk carries `finishReason`, and `usageMetadata` holds running totals.
 * Byte splitting is the SSE parser's business; this translator sees whole events.
 *
 * @see https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent
 */
import { randomBytes } from 'node:crypto';
import type { CanonicalFinishReason, CanonicalStreamEvent } from '../canonical.js';
import type { StreamDecoder } from '../types.js';
import type { SseEvent } from '../../sse/sse-parser.js';
import { UpstreamError } from '../../errors.js';
import { geminiResponseWireSchema, type GeminiPartWire, type GeminiUsageWire } from './gemini.wire.js';
import { GEMINI_PROVIDER, fromGeminiUsage, geminiToolCallId } from './from-gemini-response.js';
import { mapGeminiFinishReason } from './map-gemini-finish-reason.js';
import { GEMINI_SIGNATURE_PREFIX } from './to-gemini-request.js';
import { redactGoogleCredentials } from './gemini-errors.js';

export class GeminiStreamDecoder implements StreamDecoder {
  private started = false;
  private responseId = '';
  /** What tool call ids are built on: the response id, or a random one when Gemini sent none. */
  private callBase = '';
  /** The part being streamed (text or thought text), if any. */
  private open: { kind: 'text' | 'thinking'; index: number } | undefined;
  private nextIndex = 0;
  private toolCalls = 0;
  private usage: GeminiUsageWire | null | undefined;
  private finishReason: string | undefined;
  private blocked = false;
  /** An `error` went out, or the input ended: later events are ignored. */
  private done = false;

  push(event: SseEvent): CanonicalStreamEvent[] {
    if (this.done || event.data.trim() === '') return [];
    let json: unknown;
    try {
      json = JSON.parse(event.data);
    } catch (error) {
      throw this.unreadable(error);
    }
    const parsed = geminiResponseWireSchema.safeParse(Array.isArray(json) ? json[0] : json);
    if (!parsed.success) throw this.unreadable(parsed.error);
    const chunk = parsed.data;
    const events: CanonicalStreamEvent[] = [];
    if (chunk.error) {
      this.done = true;
      events.push(...this.closeOpen());
      events.push({ type: 'error', message: redactGoogleCredentials(chunk.error.message ?? 'Gemini failed during the answer.'), errorType: chunk.error.status ?? undefined });
      return events;
    }
    if (!this.started) {
      this.started = true;
      this.responseId = chunk.responseId ?? '';
      this.callBase = this.responseId || randomBytes(9).toString('base64url');
      events.push({ type: 'start', id: this.responseId, model: chunk.modelVersion ?? '' });
    }
    if (chunk.usageMetadata) this.usage = chunk.usageMetadata;
    if (chunk.promptFeedback?.blockReason && !chunk.candidates?.length) this.blocked = true;
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) events.push(...this.pushPart(part));
    if (candidate?.finishReason) this.finishReason = candidate.finishReason;
    return events;
  }

  end(): CanonicalStreamEvent[] {
    if (this.done) return [];
    this.done = true;
    const events = this.closeOpen();
    // No finishReason: the provider stopped before the end of the answer.
    let reason: CanonicalFinishReason = 'error';
    if (this.blocked) reason = 'content_filter';
    else if (this.finishReason !== undefined) reason = mapGeminiFinishReason(this.finishReason, this.toolCalls > 0);
    events.push({ type: 'finish', finishReason: reason, stopSequence: null, usage: fromGeminiUsage(this.usage) });
    return events;
  }

  private pushPart(part: GeminiPartWire): CanonicalStreamEvent[] {
    const events: CanonicalStreamEvent[] = [];
    const signature = part.thoughtSignature ? `${GEMINI_SIGNATURE_PREFIX}${part.thoughtSignature}` : undefined;
    if (part.thought === true) {
      const index = this.openPart('thinking', events);
      if (part.text) events.push({ type: 'thinking-delta', index, text: part.text });
      if (signature !== undefined) events.push({ type: 'thinking-signature', index, signature });
      return events;
    }
    if (signature !== undefined) {
      // A signature on an answer part travels as a thinking part of its own, in front of it.
      events.push(...this.closeOpen());
      const index = this.nextIndex++;
      events.push({ type: 'thinking-start', index }, { type: 'thinking-signature', index, signature }, { type: 'part-end', index });
    }
    if (part.functionCall) {
      events.push(...this.closeOpen());
      const index = this.nextIndex++;
      const id = part.functionCall.id || geminiToolCallId(this.callBase, this.toolCalls);
      this.toolCalls++;
      events.push(
        { type: 'tool-call-start', index, id, name: part.functionCall.name ?? '' },
        { type: 'tool-call-delta', index, argumentsDelta: JSON.stringify(part.functionCall.args ?? {}) },
        { type: 'part-end', index },
      );
    } else if (part.text) {
      const index = this.openPart('text', events);
      events.push({ type: 'text-delta', index, text: part.text });
    }
    return events;
  }

  /** The open part of this kind, or a new one (closing the other kind's). */
  private openPart(kind: 'text' | 'thinking', events: CanonicalStreamEvent[]): number {
    if (this.open?.kind === kind) return this.open.index;
    events.push(...this.closeOpen());
    const index = this.nextIndex++;
    this.open = { kind, index };
    events.push(kind === 'text' ? { type: 'text-start', index } : { type: 'thinking-start', index });
    return index;
  }

  private closeOpen(): CanonicalStreamEvent[] {
    if (!this.open) return [];
    const { index } = this.open;
    this.open = undefined;
    return [{ type: 'part-end', index }];
  }

  private unreadable(cause: unknown): UpstreamError {
    this.done = true;
    return new UpstreamError('The provider sent a stream event that is not a generateContent chunk.', { status: 502, provider: GEMINI_PROVIDER, retryable: false, cause });
  }
}
