/**
 * Canonical request → chat completions body for an OpenAI-format upstream.
 * The inverse of from-openai-request.ts: for whatever chat can carry,
 * `fromOpenAIChatRequest(toOpenAIChatRequest(r).body)` gives back `r`.
 * Whatever it cannot carry is named in the report.
 */
import {
  describeHostedTool,
  emptyBridgeReport,
  type BridgeReport,
  type CanonicalImagePart,
  type CanonicalMessage,
  type CanonicalReasoning,
  type CanonicalRequest,
  type CanonicalResponseFormat,
  type CanonicalTextPart,
  type CanonicalToolChoice,
  type CanonicalUnknownPart,
  type CanonicalUserPart,
} from '../canonical.js';
import { isRecord } from './json-values.js';
import { isChoiceCount } from '../../validation.js';

export interface ToOpenAIChatRequestOptions {
  /**
   * Where the output limit goes. OpenAI's reasoning models accept only
   * `max_completion_tokens` (the default); some OpenAI-compatible servers
   * still know only `max_tokens`.
   */
  maxTokensField?: 'max_completion_tokens' | 'max_tokens';
}

type ReasoningEffort = NonNullable<CanonicalReasoning['effort']>;

const OPENAI_SERVICE_TIERS = new Set(['auto', 'default', 'flex', 'scale', 'priority']);

/**
 * `extra` fields carried to the upstream, each with a check of its value.
 * `extra` holds the client's fields by their own wire name, and another format
 * may use the same name differently (Anthropic's `service_tier` takes
 * `standard_only`), so a field is carried only when its value reads as chat's.
 */
const CARRIED_EXTRA_FIELDS = new Map<string, (value: unknown) => boolean>([
  ['logit_bias', isRecord],
  ['logprobs', (value) => typeof value === 'boolean'],
  ['top_logprobs', (value) => typeof value === 'number'],
  ['n', isChoiceCount],
  ['service_tier', (value) => typeof value === 'string' && OPENAI_SERVICE_TIERS.has(value)],
  ['metadata', isRecord],
  ['store', (value) => typeof value === 'boolean'],
  ['prediction', isRecord],
  ['audio', isRecord],
  ['modalities', Array.isArray],
  ['prompt_cache_key', (value) => typeof value === 'string'],
  ['prompt_cache_retention', (value) => typeof value === 'string'],
  ['verbosity', (value) => typeof value === 'string'],
  ['web_search_options', isRecord],
]);

/** Chat accepts at most this many stop sequences (SPEC.md "Limits"). */
const MAX_STOP_SEQUENCES = 4;

export function toOpenAIChatRequest(
  request: CanonicalRequest,
  options: ToOpenAIChatRequestOptions = {},
): { body: Record<string, unknown>; report: BridgeReport } {
  const report = emptyBridgeReport();
  const body: Record<string, unknown> = {
    model: request.model,
    messages: convertMessages(request, report),
  };

  if (request.maxOutputTokens !== undefined) body[options.maxTokensField ?? 'max_completion_tokens'] = request.maxOutputTokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.topP !== undefined) body.top_p = request.topP;
  if (request.topK !== undefined) report.dropped.push('top_k');
  if (request.stop !== undefined && request.stop.length > 0) {
    if (request.stop.length > MAX_STOP_SEQUENCES) report.approximated.push('stop');
    body.stop = request.stop.slice(0, MAX_STOP_SEQUENCES);
  }
  if (request.presencePenalty !== undefined) body.presence_penalty = request.presencePenalty;
  if (request.frequencyPenalty !== undefined) body.frequency_penalty = request.frequencyPenalty;
  if (request.seed !== undefined) body.seed = request.seed;

  // OpenAI rejects an empty `tools` array, and `tool_choice`/`parallel_tool_calls` without tools.
  const hasTools = request.tools !== undefined && request.tools.length > 0;
  if (hasTools) {
    body.tools = request.tools?.map((tool) => {
      const definition: Record<string, unknown> = { name: tool.name };
      if (tool.description !== undefined) definition.description = tool.description;
      definition.parameters = tool.parameters;
      if (tool.strict !== undefined) definition.strict = tool.strict;
      return { type: 'function', function: definition };
    });
    if (request.toolChoice !== undefined) body.tool_choice = convertToolChoice(request.toolChoice);
    if (request.parallelToolCalls !== undefined) body.parallel_tool_calls = request.parallelToolCalls;
  } else if (request.toolChoice?.type === 'required' || request.toolChoice?.type === 'tool') {
    report.dropped.push('tool_choice');
  }
  if (request.responseFormat !== undefined) body.response_format = convertResponseFormat(request.responseFormat);
  if (request.reasoning !== undefined) {
    const effort = convertReasoning(request.reasoning, report);
    if (effort !== undefined) body.reasoning_effort = effort;
  }
  // `user` rather than its successor `safety_identifier`: OpenAI-compatible servers know only the older name.
  if (request.user !== undefined) body.user = request.user;
  if (request.stream) {
    body.stream = true;
    // Always ask for the usage chunk: billing needs the totals whatever the client asked for.
    body.stream_options = { include_usage: true };
  }

  for (const [key, value] of Object.entries(request.extra ?? {})) {
    // Hosted tools of another format (web search, bash…) cannot run here: name each one as dropped.
    if (key === 'tools' && Array.isArray(value)) {
      for (const tool of value) report.dropped.push(`tools.${describeHostedTool(tool)}`);
      continue;
    }
    if (Object.hasOwn(body, key)) continue;
    if (CARRIED_EXTRA_FIELDS.get(key)?.(value)) body[key] = value;
    else report.dropped.push(key);
  }

  return { body, report: deduplicate(report) };
}

function convertMessages(request: CanonicalRequest, report: BridgeReport): Record<string, unknown>[] {
  const messages: Record<string, unknown>[] = [];
  if (request.system !== undefined && request.system.length > 0) {
    messages.push({ role: 'system', content: convertTextContent(request.system, report) });
  }
  // Chat tool messages carry text only. Images returned by tools follow in a
  // user message, after the whole run of tool messages, because OpenAI wants
  // every tool answer right after the assistant message that called it.
  let toolImages: Record<string, unknown>[] = [];
  for (const message of request.messages) {
    if (message.role !== 'tool' && toolImages.length > 0) {
      messages.push({ role: 'user', content: toolImages });
      toolImages = [];
    }
    if (message.role === 'tool') {
      const { content, images } = convertToolContent(message.content, report);
      toolImages.push(...images);
      if (message.isError) report.dropped.push('is_error');
      messages.push({ role: 'tool', tool_call_id: message.toolCallId, content });
    } else {
      messages.push(convertMessage(message, report));
    }
  }
  if (toolImages.length > 0) messages.push({ role: 'user', content: toolImages });
  return messages;
}

function convertMessage(message: Exclude<CanonicalMessage, { role: 'tool' }>, report: BridgeReport): Record<string, unknown> {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: convertTextContent(message.content, report) };
    case 'user': {
      const parts: unknown[] = [];
      for (const part of message.content) {
        const converted = convertUserPart(part, report);
        if (converted !== undefined) parts.push(converted);
      }
      const converted: Record<string, unknown> = { role: 'user', content: collapseTextParts(parts) };
      if (message.name !== undefined) converted.name = message.name;
      return converted;
    }
    case 'assistant': {
      const parts: unknown[] = [];
      const toolCalls: Record<string, unknown>[] = [];
      for (const part of message.content) {
        switch (part.type) {
          case 'text':
            if (part.cacheControl !== undefined) report.dropped.push('cache_control');
            parts.push({ type: 'text', text: part.text });
            break;
          case 'tool_call':
            toolCalls.push({ id: part.id, type: 'function', function: { name: part.name, arguments: part.arguments } });
            break;
          case 'thinking':
            // Chat has no reasoning input; another format's reasoning (and its signature) cannot be replayed.
            report.dropped.push('thinking');
            break;
          case 'unknown': {
            const raw = carryUnknownPart(part, report);
            if (raw !== undefined) parts.push(raw);
            break;
          }
        }
      }
      // OpenAI wants `content: null` beside tool calls with no text, and a string otherwise.
      const content = parts.length === 0 ? (toolCalls.length > 0 ? null : '') : collapseTextParts(parts);
      const converted: Record<string, unknown> = { role: 'assistant', content };
      if (message.name !== undefined) converted.name = message.name;
      if (toolCalls.length > 0) converted.tool_calls = toolCalls;
      return converted;
    }
  }
}

function convertUserPart(part: CanonicalUserPart, report: BridgeReport): unknown {
  switch (part.type) {
    case 'text':
      if (part.cacheControl !== undefined) report.dropped.push('cache_control');
      return { type: 'text', text: part.text };
    case 'image':
      return convertImagePart(part);
    case 'unknown':
      return carryUnknownPart(part, report);
  }
}

function convertToolContent(
  content: CanonicalUserPart[],
  report: BridgeReport,
): { content: string | unknown[]; images: Record<string, unknown>[] } {
  const parts: unknown[] = [];
  const images: Record<string, unknown>[] = [];
  for (const part of content) {
    if (part.type === 'image') {
      report.approximated.push('tool_result.image');
      images.push(convertImagePart(part));
      continue;
    }
    const converted = convertUserPart(part, report);
    if (converted !== undefined) parts.push(converted);
  }
  return { content: parts.length === 0 ? '' : collapseTextParts(parts), images };
}

function convertImagePart(part: CanonicalImagePart): Record<string, unknown> {
  const url = part.source.kind === 'url' ? part.source.url : `data:${part.source.mediaType};base64,${part.source.data}`;
  const imageUrl: Record<string, unknown> = { url };
  if (part.detail !== undefined) imageUrl.detail = part.detail;
  return { type: 'image_url', image_url: imageUrl };
}

/** A part that came from chat goes back as it was; one from another format cannot be read by chat. */
function carryUnknownPart(part: CanonicalUnknownPart, report: BridgeReport): unknown {
  if (part.origin.startsWith('chat:')) return part.raw;
  report.dropped.push(part.origin);
  return undefined;
}

function convertTextContent(parts: CanonicalTextPart[], report: BridgeReport): string | unknown[] {
  for (const part of parts) if (part.cacheControl !== undefined) report.dropped.push('cache_control');
  return collapseTextParts(parts.map((part) => ({ type: 'text', text: part.text })));
}

/** A single text part is written as a plain string, which every OpenAI-compatible server reads. */
function collapseTextParts(parts: unknown[]): string | unknown[] {
  if (parts.length === 1 && isRecord(parts[0]) && parts[0].type === 'text' && typeof parts[0].text === 'string') {
    return parts[0].text;
  }
  return parts;
}

function convertToolChoice(choice: CanonicalToolChoice): unknown {
  return choice.type === 'tool' ? { type: 'function', function: { name: choice.name } } : choice.type;
}

function convertResponseFormat(format: CanonicalResponseFormat): Record<string, unknown> {
  if (format.type !== 'json_schema') return { type: format.type };
  // Chat requires a name; formats without one (Anthropic's output_config.format) leave it empty.
  const jsonSchema: Record<string, unknown> = { name: format.name || 'response', schema: format.schema };
  if (format.strict !== undefined) jsonSchema.strict = format.strict;
  return { type: 'json_schema', json_schema: jsonSchema };
}

function convertReasoning(reasoning: CanonicalReasoning, report: BridgeReport): ReasoningEffort | undefined {
  if (reasoning.summary !== undefined) report.dropped.push('reasoning.summary');
  if (reasoning.disabled) {
    // Chat cannot switch reasoning off; leaving out `reasoning_effort` is the nearest request.
    report.approximated.push('reasoning.disabled');
    return undefined;
  }
  if (reasoning.effort !== undefined) {
    if (reasoning.budgetTokens !== undefined) report.dropped.push('reasoning.budget_tokens');
    return reasoning.effort;
  }
  if (reasoning.budgetTokens === undefined) return undefined;
  report.approximated.push('reasoning.budget_tokens');
  return mapBudgetToEffort(reasoning.budgetTokens);
}

/**
 * A thinking budget (Anthropic allows 1,024 and up) → the nearest effort.
 * The bounds are a judgement: small budgets are quick answers, budgets of
 * tens of thousands are deep reasoning.
 */
export function mapBudgetToEffort(budgetTokens: number): ReasoningEffort {
  if (budgetTokens < 4096) return 'low';
  if (budgetTokens < 16384) return 'medium';
  return 'high';
}

function deduplicate(report: BridgeReport): BridgeReport {
  return { dropped: [...new Set(report.dropped)], approximated: [...new Set(report.approximated)] };
}
