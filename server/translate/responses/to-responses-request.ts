/**
 * Canonical request → Responses request body, for providers that speak the
 * Responses format, with a report of what Responses cannot carry.
 *
 * The inverse of fromResponsesRequest: each assistant message becomes the
 * items of one model turn (reasoning, message with output_text parts,
 * function_call), each tool message a function_call_output. Unknown parts that
 * came from Responses (`responses:item`, `responses:<part type>`) are put back
 * as sent; unknown parts of other origins are dropped and reported by origin.
 * Report names: canonical concepts in wire style (`stop`, `top_k`,
 * `cache_control`, `messages[2].name`, …) or the origin of a dropped part.
 */
import {
  emptyBridgeReport,
  type BridgeReport,
  type CanonicalAssistantPart,
  type CanonicalMessage,
  type CanonicalReasoning,
  type CanonicalRequest,
  type CanonicalTextPart,
  type CanonicalUserPart,
} from '../../providers/canonical.js';
import type { ResponsesContentPart, ResponsesInputItem, ResponsesRequest, ResponsesTool, ResponsesToolChoice } from './responses.wire.js';
import {
  RESPONSES_ITEM_ORIGIN,
  imageSourceToUrl,
  isRecord,
  reportApproximated,
  reportDropped,
} from './responses-shared.js';

/** PROTOCOLS.md §4: `max_output_tokens` ≥ 16. */
const MIN_MAX_OUTPUT_TOKENS = 16;

const SERVICE_TIERS = new Set(['auto', 'default', 'flex', 'scale', 'priority']);

/**
 * `extra` fields forwarded to a Responses upstream, each with the check its
 * value must pass: `extra` may come from another format whose field of the
 * same name means something else (Anthropic `service_tier: "standard_only"`).
 */
const FORWARDED_EXTRA: Record<string, (value: unknown) => boolean> = {
  store: (value) => typeof value === 'boolean',
  include: (value) => Array.isArray(value) && value.every((entry) => typeof entry === 'string'),
  metadata: (value) => isRecord(value) && Object.values(value).every((entry) => typeof entry === 'string'),
  truncation: (value) => value === 'auto' || value === 'disabled',
  service_tier: (value) => typeof value === 'string' && SERVICE_TIERS.has(value),
  prompt_cache_key: (value) => typeof value === 'string',
  prompt_cache_retention: (value) => typeof value === 'string',
  top_logprobs: (value) => Number.isInteger(value),
  max_tool_calls: (value) => Number.isInteger(value),
  prompt: isRecord,
  user: (value) => typeof value === 'string',
};

/** Extra fields merged into the body elsewhere in this file. */
const MERGED_EXTRA = new Set(['tools', 'tool_choice', 'text']);

export interface ToResponsesRequestOptions {
  /**
   * Drop thinking parts instead of sending them as reasoning items (for an
   * upstream that only accepts reasoning items it produced itself).
   */
  dropThinking?: boolean;
}

export interface ToResponsesRequestResult {
  body: ResponsesRequest;
  report: BridgeReport;
}

export function toResponsesRequest(
  request: CanonicalRequest,
  options: ToResponsesRequestOptions = {},
): ToResponsesRequestResult {
  const report = emptyBridgeReport();
  const extra = request.extra ?? {};
  const body: ResponsesRequest = { model: request.model };

  if (request.system !== undefined) {
    if (request.system.length > 1) reportApproximated(report, 'system');
    body.instructions = request.system.map((part) => textWithoutCache(part, report)).join('\n\n');
  }
  body.input = request.messages.flatMap((message, index) => convertMessage(message, index, options, report));

  const tools: ResponsesTool[] = (request.tools ?? []).map((tool) => ({
    type: 'function' as const,
    name: tool.name,
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    parameters: tool.parameters,
    ...(tool.strict !== undefined ? { strict: tool.strict } : {}),
  }));
  // Hosted tools a Responses client sent (extra.tools) are Responses' own: put them back.
  if (Array.isArray(extra.tools)) tools.push(...(extra.tools as ResponsesTool[]));
  if (tools.length > 0) body.tools = tools;

  const toolChoice = convertToolChoice(request, extra);
  if (toolChoice !== undefined) body.tool_choice = toolChoice;
  if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;

  const text = isRecord(extra.text) ? { ...extra.text } : {};
  if (request.responseFormat !== undefined) text.format = { ...request.responseFormat };
  if (Object.keys(text).length > 0) body.text = text;

  if (request.reasoning !== undefined) {
    const reasoning = convertReasoning(request.reasoning, report);
    if (Object.keys(reasoning).length > 0) body.reasoning = reasoning;
  }

  if (request.maxOutputTokens !== undefined) {
    if (request.maxOutputTokens < MIN_MAX_OUTPUT_TOKENS) reportApproximated(report, 'max_output_tokens');
    body.max_output_tokens = Math.max(request.maxOutputTokens, MIN_MAX_OUTPUT_TOKENS);
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.user !== undefined) body.safety_identifier = request.user;
  body.stream = request.stream;

  // Responses has no stop sequences, top_k, penalties or seed (PROTOCOLS.md §4).
  if (request.stop !== undefined && request.stop.length > 0) reportDropped(report, 'stop');
  if (request.topK !== undefined) reportDropped(report, 'top_k');
  if (request.presencePenalty !== undefined) reportDropped(report, 'presence_penalty');
  if (request.frequencyPenalty !== undefined) reportDropped(report, 'frequency_penalty');
  if (request.seed !== undefined) reportDropped(report, 'seed');

  for (const [key, value] of Object.entries(extra)) {
    if (MERGED_EXTRA.has(key)) continue;
    const accepts = Object.prototype.hasOwnProperty.call(FORWARDED_EXTRA, key) ? FORWARDED_EXTRA[key] : undefined;
    if (accepts?.(value)) body[key] = value;
    else reportDropped(report, key);
  }
  return { body, report };
}

function textWithoutCache(part: CanonicalTextPart, report: BridgeReport): string {
  if (part.cacheControl !== undefined) reportDropped(report, 'cache_control');
  return part.text;
}

// ---------------------------------------------------------------------------
// Messages

function isResponsesItemPart(part: CanonicalUserPart | CanonicalAssistantPart): boolean {
  return part.type === 'unknown' && part.origin === RESPONSES_ITEM_ORIGIN && isRecord(part.raw);
}

/** A raw Responses content part carried in an unknown part, or undefined when the part came from elsewhere. */
function rawResponsesPart(part: { origin: string; raw: unknown }): ResponsesContentPart | undefined {
  if (!part.origin.startsWith('responses:') || part.origin === RESPONSES_ITEM_ORIGIN) return undefined;
  return isRecord(part.raw) && typeof part.raw.type === 'string' ? (part.raw as ResponsesContentPart) : undefined;
}

function convertMessage(
  message: CanonicalMessage,
  index: number,
  options: ToResponsesRequestOptions,
  report: BridgeReport,
): ResponsesInputItem[] {
  const path = `messages[${index}]`;
  switch (message.role) {
    case 'system':
      return [
        {
          type: 'message',
          role: 'system',
          content: message.content.map((part) => ({ type: 'input_text' as const, text: textWithoutCache(part, report) })),
        },
      ];
    case 'user':
      if (message.name !== undefined) reportDropped(report, `${path}.name`);
      return convertUserMessage(message.content, report);
    case 'assistant':
      if (message.name !== undefined) reportDropped(report, `${path}.name`);
      return convertAssistantMessage(message.content, options, report);
    case 'tool':
      if (message.isError !== undefined) reportDropped(report, `${path}.is_error`);
      return [{ type: 'function_call_output', call_id: message.toolCallId, output: convertToolOutput(message.content, report) }];
  }
}

function convertUserPart(part: CanonicalUserPart, report: BridgeReport): ResponsesContentPart | undefined {
  switch (part.type) {
    case 'text':
      return { type: 'input_text', text: textWithoutCache(part, report) };
    case 'image':
      return {
        type: 'input_image',
        image_url: imageSourceToUrl(part.source),
        ...(part.detail !== undefined ? { detail: part.detail } : {}),
      };
    case 'unknown': {
      const raw = rawResponsesPart(part);
      if (raw === undefined) reportDropped(report, part.origin);
      return raw;
    }
  }
}

/** User content; Responses items carried in unknown parts split the message around them. */
function convertUserMessage(content: CanonicalUserPart[], report: BridgeReport): ResponsesInputItem[] {
  const items: ResponsesInputItem[] = [];
  let parts: ResponsesContentPart[] | undefined;
  for (const part of content) {
    if (isResponsesItemPart(part)) {
      parts = undefined;
      items.push((part as { raw: ResponsesInputItem }).raw);
      continue;
    }
    const converted = convertUserPart(part, report);
    if (converted === undefined) continue;
    if (!parts) {
      parts = [];
      items.push({ type: 'message', role: 'user', content: parts });
    }
    parts.push(converted);
  }
  if (items.length === 0) items.push({ type: 'message', role: 'user', content: [] });
  return items;
}

function convertAssistantMessage(
  content: CanonicalAssistantPart[],
  options: ToResponsesRequestOptions,
  report: BridgeReport,
): ResponsesInputItem[] {
  const items: ResponsesInputItem[] = [];
  // Consecutive text parts share one message item, as a model's answer does.
  let parts: ResponsesContentPart[] | undefined;
  const messageParts = () => {
    if (!parts) {
      parts = [];
      items.push({ type: 'message', role: 'assistant', content: parts });
    }
    return parts;
  };
  for (const part of content) {
    switch (part.type) {
      case 'text':
        messageParts().push({ type: 'output_text', text: textWithoutCache(part, report), annotations: [] });
        break;
      case 'tool_call':
        parts = undefined;
        items.push({ type: 'function_call', call_id: part.id, name: part.name, arguments: part.arguments });
        break;
      case 'thinking':
        parts = undefined;
        if (options.dropThinking) {
          reportDropped(report, 'thinking');
          break;
        }
        if (part.signature !== undefined) reportDropped(report, 'thinking.signature');
        if (part.redactedData !== undefined && part.text === '') {
          reportDropped(report, 'redacted_thinking');
          break;
        }
        items.push({ type: 'reasoning', summary: [{ type: 'summary_text', text: part.text }] });
        break;
      case 'unknown': {
        if (isResponsesItemPart(part)) {
          parts = undefined;
          items.push(part.raw as ResponsesInputItem);
          break;
        }
        const raw = rawResponsesPart(part);
        if (raw === undefined) reportDropped(report, part.origin);
        else messageParts().push(raw);
        break;
      }
    }
  }
  return items;
}

/** A single text answer goes as a string (what every server accepts); anything else as parts. */
function convertToolOutput(content: CanonicalUserPart[], report: BridgeReport): string | ResponsesContentPart[] {
  const [first] = content;
  if (content.length === 1 && first.type === 'text') return textWithoutCache(first, report);
  return content.flatMap((part) => convertUserPart(part, report) ?? []);
}

// ---------------------------------------------------------------------------
// Tool choice, reasoning

function convertToolChoice(request: CanonicalRequest, extra: Record<string, unknown>): ResponsesToolChoice | undefined {
  const choice = request.toolChoice;
  if (choice === undefined) {
    // A hosted-tool choice a Responses client sent (extra.tool_choice).
    return isRecord(extra.tool_choice) ? (extra.tool_choice as ResponsesToolChoice) : undefined;
  }
  return choice.type === 'tool' ? { type: 'function', name: choice.name } : choice.type;
}

/** Budget → effort when only a budget is known (Anthropic `thinking.budget_tokens`). */
function effortForBudget(budgetTokens: number): 'low' | 'medium' | 'high' {
  if (budgetTokens < 4096) return 'low';
  if (budgetTokens < 16_384) return 'medium';
  return 'high';
}

function convertReasoning(reasoning: CanonicalReasoning, report: BridgeReport): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (reasoning.effort !== undefined) out.effort = reasoning.effort;
  else if (reasoning.disabled) out.effort = 'none';
  else if (reasoning.budgetTokens !== undefined) {
    out.effort = effortForBudget(reasoning.budgetTokens);
    reportApproximated(report, 'reasoning.budget_tokens');
  }
  if (reasoning.summary !== undefined) out.summary = reasoning.summary;
  return out;
}
