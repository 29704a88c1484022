/**
 * What the gateway stores per response so that `previous_response_id` works on
 * a provider that keeps no state: the whole conversation as canonical
 * messages, the assistant's answer included. Answers passed through from a
 * provider that keeps its own state are stored too (`nativeProvider`): the
 * record says which account owns the provider's id, and lets the
 * conversation continue on another provider.
 *
 * The request's `instructions` are stored beside the messages but are not
 * replayed: OpenAI applies only the instructions of the current request
 * ("instructions from a previous response will not be carried over").
 * System or developer *items* of the input are part of the conversation and
 * are replayed.
 * @see https://platform.openai.com/docs/api-reference/responses/create#responses-create-instructions
 */
import type { CanonicalMessage, CanonicalRequest, CanonicalResponse } from '../../providers/canonical.js';

export interface StoredConversation {
  /** Layout of this record, for later migrations. */
  version: 1;
  /** The request's `instructions` (system prompt), kept for inspection only. */
  instructions: string | null;
  /** Every message of the request, then the assistant's answer (when it had content). */
  messages: CanonicalMessage[];
  /**
   * Set when the answer was passed through from a provider that speaks
   * Responses and keeps its own state: the catalog id of that provider. The
   * record's id is then the provider's response id, and a continuation on the
   * same provider passes `previous_response_id` through instead of replaying
   * `messages`. The record still proves which account owns the id.
   */
  nativeProvider?: string;
}

/**
 * @param request the full conversation as sent to the provider (history of the
 *   previous response already prepended)
 * @param response the provider's answer
 * @param nativeProvider the provider that answered natively (see StoredConversation)
 */
export function toStoredConversation(request: CanonicalRequest, response: CanonicalResponse, nativeProvider?: string): StoredConversation {
  const messages = structuredClone(request.messages);
  // An empty assistant turn is rejected by several providers when replayed.
  if (response.content.length > 0) messages.push({ role: 'assistant', content: structuredClone(response.content) });
  return {
    version: 1,
    instructions: request.system === undefined ? null : request.system.map((part) => part.text).join('\n\n'),
    messages,
    ...(nativeProvider === undefined ? {} : { nativeProvider }),
  };
}

/** The conversation to prepend to the next request's input; the stored instructions are left out. */
export function fromStoredConversation(stored: StoredConversation): CanonicalMessage[] {
  return structuredClone(stored.messages);
}
