/**
 * `POST /v1/responses/compact` where the provider has no native compaction
 * (SPEC.md): a normal generation summarises the supplied context.
 *
 * The request: a system prompt asking for a faithful summary for
 * continuation, and one user message holding the conversation (history of
 * `previous_response_id`, then `input`) rendered as text. Tools are not sent,
 * so the model can only answer with text.
 *
 * The answer is a Responses object (`object: "response"`) whose `output` is
 * exactly one assistant message item:
 *
 * ```json
 * {"id":"resp_…","object":"response","status":"completed","model":"…",
 *  "output":[{"type":"message","id":"msg_…_0","role":"assistant","status":"completed",
 *    "content":[{"type":"output_text","text":"Summary of the conversation so far:\n\n…","annotations":[],"logprobs":[]}]}],
 *  "usage":{…}, …the other Response fields…}
 * ```
 *
 * The caller sends `output` back as the start of the next `input`, as with
 * native compaction; there is no opaque `compaction` item.
 */
import type {
  CanonicalMessage,
  CanonicalRequest,
  CanonicalResponse,
  CanonicalUserPart,
} from '../../providers/canonical.js';
import type { CompactRequest } from './responses.wire.js';
import type { ResponseObject, ResponsesOutputMessage } from './responses-object.wire.js';
import { fromResponsesRequest } from './from-responses-request.js';
import {
  buildResponseObject,
  createResponsesItemId,
  mapFinishReasonToResponsesOutcome,
  toResponsesUsage,
  type ResponseObjectOptions,
} from './to-responses-response.js';
import { isRecord } from './responses-shared.js';

export const COMPACTION_SYSTEM_PROMPT = [
  'You compact conversations. The conversation below between a user and an AI assistant will be',
  'replaced by your summary, and the assistant will continue from the summary alone.',
  'Write a faithful, complete summary for that continuation:',
  "- the user's goals, requests, constraints and preferences;",
  '- decisions made, facts established, and the current state of the work;',
  '- exact names, numbers, identifiers, file paths, URLs and code that later turns may need;',
  '- tool calls that matter, with their results;',
  '- open questions and the next steps.',
  'Do not invent anything, do not answer the conversation, and keep its language.',
  'Reply with the summary only.',
].join('\n');

/** Starts the summary message, so that the model reading it later knows what it is. */
export const COMPACTION_SUMMARY_PREFIX = 'Summary of the conversation so far:\n\n';

export function buildCompactionRequest(body: CompactRequest, history?: CanonicalMessage[]): CanonicalRequest {
  const { request } = fromResponsesRequest(
    { model: body.model, input: body.input, reasoning: body.reasoning },
    history,
  );
  const sections: string[] = [];
  if (body.instructions != null && body.instructions !== '') {
    sections.push(`The assistant's standing instructions (context only; do not summarise them):\n${body.instructions}`);
  }
  sections.push(`The conversation:\n\n${renderConversationAsText(request.messages) || '(empty)'}`);
  sections.push('Write the summary now.');
  return {
    model: body.model,
    system: [{ type: 'text', text: COMPACTION_SYSTEM_PROMPT }],
    messages: [{ role: 'user', content: [{ type: 'text', text: sections.join('\n\n') }] }],
    stream: false,
    ...(request.reasoning !== undefined ? { reasoning: request.reasoning } : {}),
  };
}

export function toCompactionResponse(summary: CanonicalResponse, options: ResponseObjectOptions): ResponseObject {
  const text = summary.content
    .flatMap((part) => (part.type === 'text' ? [part.text] : []))
    .join('')
    .trim();
  const outcome = mapFinishReasonToResponsesOutcome(summary.finishReason === 'tool_calls' ? 'stop' : summary.finishReason);
  const message: ResponsesOutputMessage = {
    type: 'message',
    id: createResponsesItemId('msg', options.id, 0),
    role: 'assistant',
    status: outcome.status === 'incomplete' ? 'incomplete' : 'completed',
    content: [{ type: 'output_text', text: `${COMPACTION_SUMMARY_PREFIX}${text}`, annotations: [], logprobs: [] }],
  };
  return buildResponseObject(options, {
    status: outcome.status,
    output: [message],
    usage: toResponsesUsage(summary.usage),
    incompleteDetails: outcome.incompleteDetails,
    error: outcome.error,
  });
}

// ---------------------------------------------------------------------------

function describeUnknown(part: { origin: string; raw: unknown }): string {
  const type = isRecord(part.raw) && typeof part.raw.type === 'string' ? part.raw.type : part.origin;
  return `[${type} omitted]`;
}

function renderUserParts(parts: CanonicalUserPart[]): string {
  return parts
    .map((part) => {
      if (part.type === 'text') return part.text;
      if (part.type === 'image') {
        // Inline data would only bloat the transcript.
        return part.source.kind === 'url' && !part.source.url.startsWith('data:')
          ? `[image: ${part.source.url}]`
          : '[image]';
      }
      return describeUnknown(part);
    })
    .join('\n');
}

/** The conversation as a plain transcript; reasoning is left out (it is the model's scratch work). */
export function renderConversationAsText(messages: readonly CanonicalMessage[]): string {
  const blocks: string[] = [];
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        blocks.push(`[system]\n${message.content.map((part) => part.text).join('\n')}`);
        break;
      case 'user':
        blocks.push(`[user]\n${renderUserParts(message.content)}`);
        break;
      case 'assistant': {
        const lines = message.content.flatMap((part) => {
          if (part.type === 'text') return [part.text];
          if (part.type === 'tool_call') return [`[tool call ${part.name} (id ${part.id}) with arguments ${part.arguments}]`];
          if (part.type === 'unknown') return [describeUnknown(part)];
          return [];
        });
        if (lines.length > 0) blocks.push(`[assistant]\n${lines.join('\n')}`);
        break;
      }
      case 'tool': {
        const from = message.name === undefined ? '' : ` from ${message.name}`;
        const error = message.isError ? ' (error)' : '';
        blocks.push(`[tool result${from} for call ${message.toolCallId}${error}]\n${renderUserParts(message.content)}`);
        break;
      }
    }
  }
  return blocks.join('\n\n');
}
