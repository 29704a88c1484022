/**
 * `generateContent` answer → canonical response, and the usage and part
 * readers the stream decoder shares.
 *
 * @see https://ai.google.dev/api/generate-content#generatecontentresponse
 */
import { randomBytes } from 'node:crypto';
import type { CanonicalAssistantPart, CanonicalResponse, CanonicalUsage } from '../canonical.js';
import { UpstreamError } from '../../errors.js';
import { geminiResponseWireSchema, type GeminiPartWire, type GeminiResponseWire, type GeminiUsageWire } from './gemini.wire.js';
import { mapGeminiFinishReason } from './map-gemini-finish-reason.js';
import { GEMINI_SIGNATURE_PREFIX } from './to-gemini-request.js';
import { upstreamErrorOfGeminiStatus } from './gemini-errors.js';

export const GEMINI_PROVIDER = 'gemini';

/**
 * Gemini usage → canonical usage. `promptTokenCount` includes the cached
 * part (`cachedContentTokenCount`); thoughts are billed as output but
 * counted apart from `candidatesTokenCount`; a tool's own prompt
 * (`toolUsePromptTokenCount`) is input.
 *
 * @see https://ai.google.dev/api/generate-content#UsageMetadata
 */
export function fromGeminiUsage(usage: GeminiUsageWire | null | undefined): CanonicalUsage {
  const thoughts = usage?.thoughtsTokenCount ?? 0;
  const result: CanonicalUsage = {
    inputTokens: (usage?.promptTokenCount ?? 0) + (usage?.toolUsePromptTokenCount ?? 0),
    outputTokens: (usage?.candidatesTokenCount ?? 0) + thoughts,
    cachedInputTokens: usage?.cachedContentTokenCount ?? 0,
  };
  if (thoughts > 0) result.reasoningTokens = thoughts;
  return result;
}

/**
 * The id of the n-th function call of an answer when Gemini gave it none
 * (Gemini matches results by name; clients match them by id, so ids must
 * differ across the turns of a conversation). Built on the answer's
 * `responseId`, or on a random one when the answer has none.
 */
export function geminiToolCallId(responseId: string, position: number): string {
  const base = responseId.replace(/[^A-Za-z0-9_-]/g, '') || randomBytes(9).toString('base64url');
  return `call_${base}_${position}`;
}

/**
 * One Gemini part → canonical parts. A signature on a part that is not a
 * thought comes first as a thinking part without text, so that clients keep
 * it and send it back in front of the part it belongs to.
 */
export function fromGeminiPart(part: GeminiPartWire, toolCallId: () => string): CanonicalAssistantPart[] {
  const signature = part.thoughtSignature ? `${GEMINI_SIGNATURE_PREFIX}${part.thoughtSignature}` : undefined;
  if (part.thought === true) {
    return [{ type: 'thinking', text: part.text ?? '', ...(signature !== undefined ? { signature } : {}) }];
  }
  const parts: CanonicalAssistantPart[] = signature !== undefined ? [{ type: 'thinking', text: '', signature }] : [];
  if (part.functionCall) {
    const call = part.functionCall;
    parts.push({ type: 'tool_call', id: call.id || toolCallId(), name: call.name ?? '', arguments: JSON.stringify(call.args ?? {}) });
  } else if (typeof part.text === 'string') {
    parts.push({ type: 'text', text: part.text });
  } else if (signature === undefined) {
    // Inline images, executable code and later kinds.
    parts.push({ type: 'unknown', origin: `gemini:${Object.keys(part)[0] ?? 'part'}`, raw: part });
  }
  return parts;
}

/** The answer's parts in order, adjacent text parts joined (Gemini splits text at will). */
function mergeText(parts: CanonicalAssistantPart[]): CanonicalAssistantPart[] {
  const merged: CanonicalAssistantPart[] = [];
  for (const part of parts) {
    const last = merged.at(-1);
    if (part.type === 'text' && last?.type === 'text') last.text += part.text;
    else merged.push(part.type === 'text' ? { ...part } : part);
  }
  return merged;
}

export function readGeminiResponse(body: unknown): GeminiResponseWire {
  const parsed = geminiResponseWireSchema.safeParse(body);
  if (!parsed.success) {
    throw new UpstreamError('The provider answered with a body that is not a generateContent response.', {
      status: 502,
      provider: GEMINI_PROVIDER,
      retryable: false,
      cause: parsed.error,
    });
  }
  if (parsed.data.error) throw upstreamErrorOfGeminiStatus(parsed.data.error.code ?? 500, parsed.data.error, {});
  return parsed.data;
}

export function fromGeminiResponse(body: unknown): CanonicalResponse {
  const response = readGeminiResponse(body);
  const id = response.responseId ?? '';
  const callBase = id || randomBytes(9).toString('base64url');
  const candidate = response.candidates?.[0];
  let calls = 0;
  const content = mergeText((candidate?.content?.parts ?? []).flatMap((part) => fromGeminiPart(part, () => geminiToolCallId(callBase, calls++))));
  const calledTool = content.some((part) => part.type === 'tool_call');
  // A prompt blocked before any candidate: nothing was generated, for a safety reason.
  const finishReason = !candidate && response.promptFeedback?.blockReason ? 'content_filter' : mapGeminiFinishReason(candidate?.finishReason, calledTool);
  return {
    id,
    model: response.modelVersion ?? '',
    content,
    finishReason,
    stopSequence: null,
    usage: fromGeminiUsage(response.usageMetadata),
  };
}
