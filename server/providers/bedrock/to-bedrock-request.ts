/**
 * Canonical request → Bedrock Converse body (the model id goes in the URL,
 * not the body). Every client format crosses to Bedrock through here.
 *
 * Choices, each reported in the BridgeReport when it changes the request:
 * - System parts and the system messages before the first turn become
 *   `system`; a system message later in the conversation has no place in
 *   Converse's user/assistant turns and joins `system` too (approximated).
 * - Tool messages become `toolResult` blocks at the start of a user turn;
 *   consecutive messages of one role form one turn (Converse alternates).
 * - A text part with `cache_control` is followed by a `cachePoint` block,
 *   Bedrock's prompt-caching marker (the TTL is Bedrock's default).
 * - Images travel as bytes (base64 or `data:` URLs) or as `s3://` locations;
 *   an http(s) image URL cannot be fetched by Converse and is dropped.
 * - Unsigned thinking (from another provider) is dropped: Bedrock rejects it.
 * - Claude models receive what only they understand through
 *   `additionalModelRequestFields` (`top_k`, `thinking`); for other models
 *   those are dropped. With stop sequences, Claude is asked for its own
 *   `stop_sequence` field (Converse names only the reason).
 * - `json_object` and `json_schema` become an instruction in `system`
 *   (approximated); `tool_choice: none` keeps the tools with Bedrock's
 *   automatic choice (approximated), since Converse has no "none".
 * - Report names follow the other bridges: the client's field name
 *   (`seed`, `top_k`, `reasoning.effort`), a content part's origin
 *   (`messages:document`), `tools.<name>` for hosted tools.
 */
import type {
  BridgeReport,
  CanonicalAssistantPart,
  CanonicalImageSource,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalTextPart,
  CanonicalUserPart,
} from '../canonical.js';
import { describeHostedTool, emptyBridgeReport } from '../canonical.js';

type Block = Record<string, unknown>;

/** Smallest thinking budget Claude accepts, and a budget per reasoning effort. */
const MIN_THINKING_BUDGET = 1024;
const THINKING_BUDGET_BY_EFFORT = { minimal: 1024, low: 2048, medium: 8192, high: 16384 } as const;
/** `maxTokens` sent with thinking when the client set none (Converse needs room above the budget). */
const DEFAULT_MAX_TOKENS_WITH_THINKING = 4096;

export const BEDROCK_JSON_OBJECT_INSTRUCTION = 'Respond with a single valid JSON object and nothing else: no prose, no code fences.';

const IMAGE_FORMATS: Record<string, string> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

/** Anthropic's Claude models, also behind an inference profile (`us.anthropic.claude…`, an ARN naming one). */
export function isBedrockClaudeModel(modelId: string): boolean {
  return /anthropic\.claude/i.test(modelId);
}

/** Tool use ids allow letters, digits, `_` and `-` only (other providers use `.` or `:`). */
export function toBedrockToolUseId(id: string): string {
  return (id.replace(/[^a-zA-Z0-9_-]/g, '_') || 'tool').slice(0, 64);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

export function toBedrockRequest(request: CanonicalRequest): { body: Record<string, unknown>; report: BridgeReport } {
  const report = emptyBridgeReport();
  const claude = isBedrockClaudeModel(request.model);
  const extra = request.extra ?? {};

  const system: Block[] = toTextBlocks(request.system ?? []);
  let start = 0;
  for (const message of request.messages) {
    if (message.role !== 'system') break;
    system.push(...toTextBlocks(message.content));
    start++;
  }
  const messages = toBedrockMessages(request.messages, start, system, report);

  const format = request.responseFormat;
  if (format?.type === 'json_object') {
    system.push({ text: BEDROCK_JSON_OBJECT_INSTRUCTION });
    report.approximated.push('response_format');
  } else if (format?.type === 'json_schema') {
    system.push({ text: `Respond with a single JSON value that matches this JSON schema, and nothing else: ${JSON.stringify(format.schema)}` });
    report.approximated.push('response_format');
  }

  const body: Record<string, unknown> = { messages };
  if (system.length > 0) body.system = system;

  const inference: Record<string, unknown> = {};
  const additional: Record<string, unknown> = {};
  let maxTokens = request.maxOutputTokens;
  let temperature = request.temperature;
  let topP = request.topP;
  let topK = request.topK;

  const thinking = claude ? thinkingOf(request, messages, report) : undefined;
  if (!claude) {
    if (request.reasoning?.effort !== undefined) report.dropped.push('reasoning.effort');
    if (request.reasoning?.budgetTokens !== undefined) report.dropped.push('thinking');
    if (extra.thinking !== undefined) report.dropped.push('thinking');
  }
  if (request.reasoning?.summary !== undefined) report.dropped.push('reasoning.summary');
  if (thinking !== undefined && thinking.type === 'enabled') {
    const budget = thinking.budget_tokens as number;
    if (maxTokens === undefined) {
      maxTokens = budget + DEFAULT_MAX_TOKENS_WITH_THINKING;
      report.approximated.push('max_tokens');
    }
    // Claude's extended thinking allows neither temperature nor top_k changes, and top_p only from 0.95.
    if (temperature !== undefined && temperature !== 1) {
      temperature = undefined;
      report.dropped.push('temperature');
    }
    if (topK !== undefined) {
      topK = undefined;
      report.dropped.push('top_k');
    }
    if (topP !== undefined && topP < 0.95) {
      topP = undefined;
      report.dropped.push('top_p');
    }
  }
  if (thinking !== undefined) additional.thinking = thinking;

  if (maxTokens !== undefined) inference.maxTokens = maxTokens;
  if (temperature !== undefined) inference.temperature = temperature;
  if (topP !== undefined) inference.topP = topP;
  if (request.stop !== undefined && request.stop.length > 0) {
    inference.stopSequences = request.stop;
    // Converse says that a sequence stopped, not which; Claude names it in its own answer, asked for by path.
    if (claude) body.additionalModelResponseFieldPaths = ['/stop_sequence'];
  }
  if (topK !== undefined) {
    if (claude) additional.top_k = topK;
    else report.dropped.push('top_k');
  }
  if (Object.keys(inference).length > 0) body.inferenceConfig = inference;

  const toolConfig = toToolConfig(request, report);
  if (toolConfig !== undefined) body.toolConfig = toolConfig;
  if (Object.keys(additional).length > 0) body.additionalModelRequestFields = additional;

  if (request.presencePenalty !== undefined) report.dropped.push('presence_penalty');
  if (request.frequencyPenalty !== undefined) report.dropped.push('frequency_penalty');
  if (request.seed !== undefined) report.dropped.push('seed');
  if (request.user !== undefined) report.dropped.push('user');

  for (const [key, value] of Object.entries(extra)) {
    if (key === 'thinking') continue;
    if (key === 'tools' && Array.isArray(value)) {
      for (const tool of value) report.dropped.push(`tools.${describeHostedTool(tool)}`);
      continue;
    }
    report.dropped.push(key);
  }

  return { body, report: { dropped: unique(report.dropped), approximated: unique(report.approximated) } };
}

/**
 * Whether the conversation is inside a tool loop whose assistant turn did not
 * start with reasoning: Claude then refuses thinking (the turn that called the
 * tool must echo its thinking), so thinking derived from an effort is left out.
 *
 * @see https://docs.claude.com/en/docs/build-with-claude/extended-thinking#extended-thinking-with-tool-use
 */
function toolLoopWithoutReasoning(messages: readonly Block[]): boolean {
  const lastAssistant = [...messages].reverse().find((message) => message.role === 'assistant');
  const blocks = (lastAssistant?.content ?? []) as Block[];
  return blocks.some((block) => block.toolUse !== undefined) && blocks[0]?.reasoningContent === undefined;
}

/** Claude's `thinking` field for this request, or undefined when none is asked for (or Claude would refuse it). */
function thinkingOf(request: CanonicalRequest, messages: readonly Block[], report: BridgeReport): Block | undefined {
  const reasoning = request.reasoning;
  const extra = request.extra ?? {};
  if (reasoning?.disabled) return { type: 'disabled' };
  const forcedTool = request.toolChoice?.type === 'required' || request.toolChoice?.type === 'tool';
  let budget: number | undefined;
  if (reasoning?.budgetTokens !== undefined) {
    budget = reasoning.budgetTokens;
    if (reasoning.effort !== undefined) report.dropped.push('reasoning.effort');
  } else if (reasoning?.effort !== undefined) {
    if (toolLoopWithoutReasoning(messages) || forcedTool) {
      report.dropped.push('reasoning.effort');
      return undefined;
    }
    budget = THINKING_BUDGET_BY_EFFORT[reasoning.effort];
    report.approximated.push('reasoning.effort');
  } else if (isRecord(extra.thinking) && typeof extra.thinking.type === 'string') {
    // `adaptive` and later kinds, from an Anthropic client.
    return extra.thinking;
  } else {
    return undefined;
  }
  const maxTokens = request.maxOutputTokens;
  if (maxTokens !== undefined && budget >= maxTokens) budget = maxTokens - 1;
  if (budget < MIN_THINKING_BUDGET) {
    if (maxTokens !== undefined && maxTokens <= MIN_THINKING_BUDGET) {
      report.dropped.push('thinking');
      return undefined;
    }
    budget = MIN_THINKING_BUDGET;
  }
  if (forcedTool) {
    // Claude refuses thinking together with a forced tool choice.
    report.dropped.push('thinking');
    return undefined;
  }
  if (budget !== reasoning?.budgetTokens && reasoning?.budgetTokens !== undefined) report.approximated.push('thinking.budget_tokens');
  return { type: 'enabled', budget_tokens: budget };
}

function toToolConfig(request: CanonicalRequest, report: BridgeReport): Block | undefined {
  const tools = request.tools ?? [];
  if (tools.length === 0) {
    if (request.toolChoice !== undefined && request.toolChoice.type !== 'auto' && request.toolChoice.type !== 'none') report.dropped.push('tool_choice');
    return undefined;
  }
  const specs = tools.map((tool) => {
    const schema = tool.parameters.type === undefined ? { type: 'object', ...tool.parameters } : tool.parameters;
    const spec: Block = { name: tool.name };
    if (tool.description !== undefined && tool.description !== '') spec.description = tool.description;
    spec.inputSchema = { json: schema };
    if (tool.strict) report.dropped.push('strict');
    return { toolSpec: spec };
  });
  const config: Block = { tools: specs };
  switch (request.toolChoice?.type) {
    case undefined:
    case 'auto':
      break;
    case 'none':
      report.approximated.push('tool_choice');
      break;
    case 'required':
      config.toolChoice = { any: {} };
      break;
    case 'tool':
      config.toolChoice = { tool: { name: request.toolChoice.name } };
      break;
  }
  if (request.parallelToolCalls === false) report.dropped.push('parallel_tool_calls');
  return config;
}

function toTextBlocks(parts: readonly CanonicalTextPart[]): Block[] {
  const blocks: Block[] = [];
  for (const part of parts) {
    // Converse refuses empty text blocks; nothing is lost by leaving them out.
    if (part.text !== '') blocks.push({ text: part.text });
    if (part.cacheControl !== undefined) blocks.push({ cachePoint: { type: 'default' } });
  }
  return blocks;
}

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*?)(;base64)?,(.*)$/s;

/** An image block, or undefined when Converse cannot take the source. */
function toImageBlock(source: CanonicalImageSource): Block | undefined {
  let mediaType: string;
  let data: string;
  if (source.kind === 'base64') {
    mediaType = source.mediaType;
    data = source.data;
  } else if (source.url.startsWith('s3://')) {
    const extension = /\.([a-z]+)$/i.exec(source.url)?.[1]?.toLowerCase();
    const format = extension === 'jpg' ? 'jpeg' : extension;
    if (format === undefined || !Object.values(IMAGE_FORMATS).includes(format)) return undefined;
    return { image: { format, source: { s3Location: { uri: source.url } } } };
  } else {
    const match = DATA_URL.exec(source.url);
    if (match === null) return undefined;
    mediaType = match[1] || '';
    data = match[3] ? match[4]! : Buffer.from(decodeURIComponent(match[4]!), 'utf8').toString('base64');
  }
  const format = IMAGE_FORMATS[mediaType.toLowerCase()];
  return format === undefined ? undefined : { image: { format, source: { bytes: data } } };
}

function toUserBlocks(parts: readonly CanonicalUserPart[], report: BridgeReport): Block[] {
  const blocks: Block[] = [];
  for (const part of parts) {
    switch (part.type) {
      case 'text':
        blocks.push(...toTextBlocks([part]));
        break;
      case 'image': {
        const block = toImageBlock(part.source);
        if (block === undefined) report.dropped.push(part.source.kind === 'url' && !part.source.url.startsWith('data:') ? 'image_url' : 'image');
        else blocks.push(block);
        if (part.detail !== undefined && part.detail !== 'auto') report.dropped.push('detail');
        break;
      }
      case 'unknown':
        report.dropped.push(part.origin);
        break;
    }
  }
  return blocks;
}

function toToolInput(text: string, report: BridgeReport): Block {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (isRecord(value)) return value;
  } catch {
    // Reported below: Converse needs an object.
  }
  report.approximated.push('arguments');
  return {};
}

function toAssistantBlocks(parts: readonly CanonicalAssistantPart[], report: BridgeReport): Block[] {
  const blocks: Block[] = [];
  for (const part of parts) {
    switch (part.type) {
      case 'text':
        blocks.push(...toTextBlocks([part]));
        break;
      case 'thinking':
        if (part.redactedData !== undefined) blocks.push({ reasoningContent: { redactedContent: part.redactedData } });
        else if (part.signature) blocks.push({ reasoningContent: { reasoningText: { text: part.text, signature: part.signature } } });
        else report.dropped.push('thinking');
        break;
      case 'tool_call':
        blocks.push({ toolUse: { toolUseId: toBedrockToolUseId(part.id), name: part.name, input: toToolInput(part.arguments, report) } });
        break;
      case 'unknown':
        report.dropped.push(part.origin);
        break;
    }
  }
  return blocks;
}

function toToolResultBlock(message: Extract<CanonicalMessage, { role: 'tool' }>, report: BridgeReport): Block {
  const content: Block[] = [];
  for (const block of toUserBlocks(message.content, report)) {
    // A tool result holds text, images and documents, not cache points.
    if (block.cachePoint === undefined) content.push(block);
  }
  const result: Block = { toolUseId: toBedrockToolUseId(message.toolCallId), content };
  if (message.isError) result.status = 'error';
  return { toolResult: result };
}

interface Turn {
  role: 'user' | 'assistant';
  /** `toolResult` blocks, which go first in a user turn. */
  results: Block[];
  blocks: Block[];
}

function toBedrockMessages(messages: readonly CanonicalMessage[], start: number, system: Block[], report: BridgeReport): Block[] {
  const turns: Turn[] = [];
  const turnFor = (role: Turn['role']): Turn => {
    const last = turns[turns.length - 1];
    if (last !== undefined && last.role === role) return last;
    const turn: Turn = { role, results: [], blocks: [] };
    turns.push(turn);
    return turn;
  };
  for (let i = start; i < messages.length; i++) {
    const message = messages[i]!;
    switch (message.role) {
      case 'system': {
        const blocks = toTextBlocks(message.content);
        if (blocks.length > 0) {
          system.push(...blocks);
          report.approximated.push('system');
        }
        break;
      }
      case 'tool':
        turnFor('user').results.push(toToolResultBlock(message, report));
        break;
      case 'user': {
        if (message.name !== undefined) report.dropped.push('name');
        const blocks = toUserBlocks(message.content, report);
        if (blocks.length > 0) turnFor('user').blocks.push(...blocks);
        break;
      }
      case 'assistant': {
        if (message.name !== undefined) report.dropped.push('name');
        const blocks = toAssistantBlocks(message.content, report);
        if (blocks.length > 0) turnFor('assistant').blocks.push(...blocks);
        break;
      }
    }
  }
  return turns.map((turn) => ({ role: turn.role, content: [...turn.results, ...turn.blocks] }));
}
