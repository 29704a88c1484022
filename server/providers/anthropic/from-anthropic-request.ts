/**
 * Anthropic messages request (as a client sends it) → canonical request.
 *
 * Used when a messages client is served by a provider of another format; a
 * messages client in front of an Anthropic provider is passed through instead.
 * Fields the canonical request does not model go to `request.extra` under
 * their wire name, so the target bridge maps or reports them.
 */
import {
  emptyBridgeReport,
  type BridgeReport,
  type CanonicalAssistantPart,
  type CanonicalImagePart,
  type CanonicalMessage,
  type CanonicalReasoning,
  type CanonicalRequest,
  type CanonicalResponseFormat,
  type CanonicalTextPart,
  type CanonicalTool,
  type CanonicalToolChoice,
  type CanonicalUnknownPart,
  type CanonicalUserPart,
} from '../canonical.js';
import {
  asKnownBlock,
  isAnthropicCustomTool,
  type AnthropicContentBlock,
  type AnthropicImageBlock,
  type AnthropicTextBlock,
  type AnthropicThinkingConfig,
  type AnthropicToolChoice,
  type AnthropicToolResultBlock,
  type AnthropicToolResultContentBlock,
  type MessagesRequest,
} from './anthropic.wire.js';

/** Top-level fields read below; any other field goes to `extra` as sent. */
const MODELLED_FIELDS = new Set([
  'model',
  'messages',
  'max_tokens',
  'system',
  'stream',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'tools',
  'tool_choice',
  'metadata',
  'thinking',
  'output_config',
]);

/**
 * Name given to an `output_config.format` schema, which has none on the
 * Anthropic wire while formats that need one (chat, responses) require it.
 */
export const ANTHROPIC_OUTPUT_SCHEMA_NAME = 'output';

export function fromAnthropicRequest(body: MessagesRequest): { request: CanonicalRequest; report: BridgeReport } {
  const report = emptyBridgeReport();
  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    // `null` reads as "not given", as for the modelled fields.
    if (!MODELLED_FIELDS.has(key) && value != null) extra[key] = value;
  }

  const system = body.system == null ? [] : toTextParts(body.system);
  const messages: CanonicalMessage[] = [];
  body.messages.forEach((message, i) => {
    const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    if (message.role === 'system') {
      const parts = systemMessageParts(blocks, i, report);
      // Before the conversation starts a system message is the system prompt.
      if (messages.length === 0) system.push(...parts);
      else messages.push({ role: 'system', content: parts });
    } else if (message.role === 'user') {
      messages.push(...fromUserBlocks(blocks));
    } else {
      messages.push({ role: 'assistant', content: blocks.map(fromAssistantBlock) });
    }
  });

  const request: CanonicalRequest = {
    model: body.model,
    messages,
    maxOutputTokens: body.max_tokens,
    stream: body.stream ?? false,
  };
  if (system.length > 0) request.system = system;
  if (body.temperature != null) request.temperature = body.temperature;
  if (body.top_p != null) request.topP = body.top_p;
  if (body.top_k != null) request.topK = body.top_k;
  if (body.stop_sequences != null) request.stop = [...body.stop_sequences];
  if (body.metadata?.user_id != null) request.user = body.metadata.user_id;

  if (body.tools != null) {
    const tools: CanonicalTool[] = [];
    const hostedTools: unknown[] = [];
    for (const tool of body.tools) {
      if (!isAnthropicCustomTool(tool)) {
        hostedTools.push(tool);
        continue;
      }
      const canonical: CanonicalTool = { name: tool.name, parameters: tool.input_schema };
      if (tool.description !== undefined) canonical.description = tool.description;
      if (tool.strict !== undefined) canonical.strict = tool.strict;
      tools.push(canonical);
    }
    if (tools.length > 0 || hostedTools.length === 0) request.tools = tools;
    if (hostedTools.length > 0) extra.tools = hostedTools;
  }

  if (body.tool_choice != null) {
    request.toolChoice = fromAnthropicToolChoice(body.tool_choice);
    const disable = body.tool_choice.disable_parallel_tool_use;
    if (disable !== undefined) request.parallelToolCalls = !disable;
  }

  const reasoning: CanonicalReasoning = {};
  if (body.thinking != null) fromAnthropicThinking(body.thinking, reasoning, extra, report);
  const outputConfig = body.output_config;
  if (outputConfig != null) {
    const rest = fromAnthropicOutputConfig(outputConfig, request, reasoning, report);
    if (rest !== undefined) extra.output_config = rest;
  }
  if (Object.keys(reasoning).length > 0) request.reasoning = reasoning;

  if (Object.keys(extra).length > 0) request.extra = extra;
  return { request, report };
}

function toTextPart(block: AnthropicTextBlock): CanonicalTextPart {
  const part: CanonicalTextPart = { type: 'text', text: block.text };
  if (block.cache_control != null) part.cacheControl = { ...block.cache_control };
  return part;
}

function toTextParts(system: string | AnthropicTextBlock[]): CanonicalTextPart[] {
  if (typeof system === 'string') return [{ type: 'text', text: system }];
  return system.map(toTextPart);
}

function unknownPart(block: { type: string }): CanonicalUnknownPart {
  return { type: 'unknown', origin: `messages:${block.type}`, raw: block };
}

/** A mid-conversation system message carries text only; other blocks cannot be expressed canonically. */
function systemMessageParts(blocks: AnthropicContentBlock[], index: number, report: BridgeReport): CanonicalTextPart[] {
  const parts: CanonicalTextPart[] = [];
  blocks.forEach((block, j) => {
    const known = asKnownBlock(block);
    if (known?.type === 'text') parts.push(toTextPart(known));
    else report.dropped.push(`messages[${index}].content[${j}]`);
  });
  return parts;
}

function fromImageBlock(block: AnthropicImageBlock): CanonicalImagePart | CanonicalUnknownPart {
  const source = block.source;
  switch (source.type) {
    case 'base64':
      return { type: 'image', source: { kind: 'base64', mediaType: source.media_type, data: source.data } };
    case 'url':
      return { type: 'image', source: { kind: 'url', url: source.url } };
    default:
      // A Files API id has no canonical form; only an Anthropic target can use it.
      return unknownPart(block);
  }
}

function fromUserPart(block: AnthropicContentBlock | AnthropicToolResultContentBlock): CanonicalUserPart {
  const known = asKnownBlock(block as AnthropicContentBlock);
  if (known?.type === 'text') return toTextPart(known);
  if (known?.type === 'image') return fromImageBlock(known);
  return unknownPart(block);
}

function fromToolResult(block: AnthropicToolResultBlock): CanonicalMessage {
  const content = block.content;
  const message: CanonicalMessage = {
    role: 'tool',
    toolCallId: block.tool_use_id,
    content:
      content === undefined ? [] : typeof content === 'string' ? [{ type: 'text', text: content }] : content.map(fromUserPart),
  };
  if (block.is_error !== undefined) message.isError = block.is_error;
  return message;
}

/**
 * One user turn → tool messages (its `tool_result` blocks, in order) followed
 * by a user message with the rest, when there is any. Anthropic puts tool
 * results first in the turn that follows the tool calls, so the order holds.
 */
function fromUserBlocks(blocks: AnthropicContentBlock[]): CanonicalMessage[] {
  const toolMessages: CanonicalMessage[] = [];
  const parts: CanonicalUserPart[] = [];
  for (const block of blocks) {
    const known = asKnownBlock(block);
    if (known?.type === 'tool_result') toolMessages.push(fromToolResult(known));
    else parts.push(fromUserPart(block));
  }
  if (parts.length === 0 && toolMessages.length > 0) return toolMessages;
  return [...toolMessages, { role: 'user', content: parts }];
}

function fromAssistantBlock(block: AnthropicContentBlock): CanonicalAssistantPart {
  const known = asKnownBlock(block);
  switch (known?.type) {
    case 'text':
      return toTextPart(known);
    case 'thinking':
      return { type: 'thinking', text: known.thinking, signature: known.signature };
    case 'redacted_thinking':
      return { type: 'thinking', text: '', redactedData: known.data };
    case 'tool_use':
      return { type: 'tool_call', id: known.id, name: known.name, arguments: JSON.stringify(known.input) };
    default:
      return unknownPart(block);
  }
}

function fromAnthropicToolChoice(choice: AnthropicToolChoice): CanonicalToolChoice {
  switch (choice.type) {
    case 'auto':
      return { type: 'auto' };
    case 'none':
      return { type: 'none' };
    case 'any':
      return { type: 'required' };
    case 'tool':
      return { type: 'tool', name: choice.name };
  }
}

function fromAnthropicThinking(
  thinking: AnthropicThinkingConfig,
  reasoning: CanonicalReasoning,
  extra: Record<string, unknown>,
  report: BridgeReport,
): void {
  if (thinking.type === 'enabled' && typeof thinking.budget_tokens === 'number') {
    reasoning.budgetTokens = thinking.budget_tokens;
    if (thinking.display != null) report.dropped.push('thinking.display');
  } else if (thinking.type === 'disabled') {
    reasoning.disabled = true;
  } else {
    // `adaptive` and later kinds have no canonical form: only an Anthropic target can carry them.
    extra.thinking = thinking;
  }
}

const EFFORTS: Record<string, CanonicalReasoning['effort']> = {
  low: 'low',
  medium: 'medium',
  high: 'high',
  xhigh: 'high',
  max: 'high',
};

/**
 * `output_config.format` (a JSON schema) → response format, `output_config.effort`
 * → reasoning effort. Returns what is left of `output_config` for `extra`.
 */
function fromAnthropicOutputConfig(
  outputConfig: unknown,
  request: CanonicalRequest,
  reasoning: CanonicalReasoning,
  report: BridgeReport,
): unknown {
  if (typeof outputConfig !== 'object' || outputConfig === null || Array.isArray(outputConfig)) return outputConfig;
  const rest: Record<string, unknown> = { ...outputConfig };
  const format = rest.format as { type?: unknown; schema?: unknown } | null | undefined;
  if (
    format != null &&
    format.type === 'json_schema' &&
    typeof format.schema === 'object' &&
    format.schema !== null &&
    !Array.isArray(format.schema)
  ) {
    const responseFormat: CanonicalResponseFormat = {
      type: 'json_schema',
      name: ANTHROPIC_OUTPUT_SCHEMA_NAME,
      schema: format.schema as Record<string, unknown>,
    };
    request.responseFormat = responseFormat;
    delete rest.format;
  } else if (format === null) {
    delete rest.format;
  }
  const effort = rest.effort;
  if (typeof effort === 'string' && EFFORTS[effort] !== undefined) {
    reasoning.effort = EFFORTS[effort];
    if (effort !== reasoning.effort) report.approximated.push('output_config.effort');
    delete rest.effort;
  } else if (effort === null) {
    delete rest.effort;
  }
  return Object.keys(rest).length > 0 ? rest : undefined;
}
