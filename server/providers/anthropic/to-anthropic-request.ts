/**
 * Canonical request → Anthropic messages body, for Anthropic-format upstreams
 * serving a client of another format (chat completions, responses).
 *
 * Choices, each reported in the BridgeReport when it changes the request:
 * - `max_tokens` is required by Anthropic: `maxOutputTokens`, else 4096
 *   (approximated), raised above a thinking budget derived from an effort.
 * - System messages before the first turn join the top-level `system`.
 *   System messages later in the conversation stay in place as
 *   `{role:"system"}` messages, which the Messages API accepts since 2026
 *   (PROTOCOLS.md §3): a same-format client could send exactly that, and
 *   neither merging them into `system` (moves them) nor into a user turn
 *   (demotes them) keeps their meaning.
 * - Tool messages become `tool_result` blocks; consecutive tool and user
 *   messages form one user turn with the tool results first, and consecutive
 *   assistant messages one assistant turn (Anthropic alternates roles).
 * - Thinking parts without a signature (from other providers) are dropped:
 *   Anthropic rejects unsigned thinking. Empty text parts are left out
 *   silently (Anthropic rejects empty text blocks; nothing is lost), and a
 *   message left without content is skipped.
 * - Tool call ids are made to match Anthropic's `^[a-zA-Z0-9_-]+$` (other
 *   characters become `_`, the same way in `tool_use` and `tool_result`).
 * - `reasoning.effort` becomes a thinking budget (approximated). Such derived
 *   thinking is left out when Anthropic would refuse it (forced tool choice,
 *   a pending tool call without a thinking block, no room under
 *   `max_tokens`), and sampling parameters thinking does not allow are
 *   dropped. An explicit `budgetTokens` (an Anthropic client) is sent as given.
 * - `json_schema` → `output_config.format`; `json_object` → an instruction at
 *   the end of `system`. Both approximated.
 * - Report names are the Anthropic field when one exists (`max_tokens`,
 *   `thinking.budget_tokens`), otherwise the request field in chat wire
 *   spelling (`seed`, `response_format`, `reasoning.effort`), and
 *   `messages[i].content[j]` for parts, indexed as in the canonical request.
 */
import { emptyBridgeReport, type BridgeReport, type CanonicalRequest, type CanonicalToolChoice } from '../canonical.js';
import { collapseText, toAnthropicMessages, toTextBlocks } from './to-anthropic-messages.js';

export const DEFAULT_ANTHROPIC_MAX_TOKENS = 4096;

/** Anthropic's smallest thinking budget. */
export const MIN_THINKING_BUDGET = 1024;

/** Thinking budget per reasoning effort (OpenAI's levels; `medium` is their default). */
export const THINKING_BUDGET_BY_EFFORT = {
  minimal: 1024,
  low: 2048,
  medium: 8192,
  high: 16384,
} as const;

export const JSON_OBJECT_INSTRUCTION =
  'Respond with a single valid JSON object and nothing else: no prose, no code fences.';

type Block = Record<string, unknown>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Fields of `extra` (a client's unmodelled fields) that Anthropic accepts,
 * with a check that the value is Anthropic's and not a same-named field of
 * another format (OpenAI's `service_tier: "flex"`, a `context_management` list).
 */
const CARRIED_EXTRA: Record<string, (value: unknown) => boolean> = {
  service_tier: (value) => value === 'auto' || value === 'standard_only',
  container: (value) => typeof value === 'string' || isRecord(value),
  mcp_servers: Array.isArray,
  context_management: isRecord,
  cache_control: isRecord,
  inference_geo: (value) => typeof value === 'string',
  speed: (value) => typeof value === 'string',
  diagnostics: isRecord,
  output_format: isRecord,
  user_profile_id: (value) => typeof value === 'string',
  workspace_id: (value) => typeof value === 'string',
};

/** Anthropic server tools have a dated type (`web_search_20250305`); OpenAI's hosted tools do not match. */
const ANTHROPIC_HOSTED_TOOL_TYPE = /^[a-z][a-z0-9_]*_\d{8}$/;

function isAnthropicHostedTool(tool: unknown): tool is Block {
  return isRecord(tool) && typeof tool.type === 'string' && (ANTHROPIC_HOSTED_TOOL_TYPE.test(tool.type) || tool.type === 'mcp_toolset');
}

export function toAnthropicRequest(request: CanonicalRequest): { body: Record<string, unknown>; report: BridgeReport } {
  const report = emptyBridgeReport();
  const extra = request.extra ?? {};

  const system: Block[] = toTextBlocks(request.system ?? []);
  let start = 0;
  for (const message of request.messages) {
    if (message.role !== 'system') break;
    system.push(...toTextBlocks(message.content));
    start++;
  }
  const messages = toAnthropicMessages(request.messages, start, report);

  const format = request.responseFormat;
  if (format?.type === 'json_object') {
    system.push({ type: 'text', text: JSON_OBJECT_INSTRUCTION });
    report.approximated.push('response_format');
  }

  const maxTokens = request.maxOutputTokens;
  if (maxTokens === undefined) report.approximated.push('max_tokens');

  const body: Record<string, unknown> = { model: request.model, max_tokens: maxTokens ?? DEFAULT_ANTHROPIC_MAX_TOKENS };
  if (system.length > 0) body.system = collapseText(system);
  body.messages = messages;

  let temperature = request.temperature;
  if (temperature !== undefined && temperature > 1) {
    temperature = 1;
    report.approximated.push('temperature');
  }
  let topP = request.topP;
  let topK = request.topK;

  // ---- thinking
  const reasoning = request.reasoning;
  let thinking: Block | undefined;
  if (reasoning?.disabled) {
    thinking = { type: 'disabled' };
  } else if (reasoning?.budgetTokens !== undefined) {
    let budget = reasoning.budgetTokens;
    if (budget < MIN_THINKING_BUDGET) {
      budget = MIN_THINKING_BUDGET;
      report.approximated.push('thinking.budget_tokens');
    }
    thinking = { type: 'enabled', budget_tokens: budget };
    // The budget must stay under max_tokens; only a defaulted max_tokens is ours to raise.
    if (maxTokens === undefined && budget >= DEFAULT_ANTHROPIC_MAX_TOKENS) {
      body.max_tokens = budget + DEFAULT_ANTHROPIC_MAX_TOKENS;
    }
    if (reasoning.effort !== undefined) report.dropped.push('reasoning.effort');
  } else if (reasoning?.effort !== undefined) {
    const budget = effortBudget(request, maxTokens, messages);
    if (budget === undefined) {
      report.dropped.push('reasoning.effort');
    } else {
      thinking = { type: 'enabled', budget_tokens: budget };
      report.approximated.push('reasoning.effort');
      if (maxTokens === undefined) body.max_tokens = budget + DEFAULT_ANTHROPIC_MAX_TOKENS;
      // Extended thinking allows neither temperature nor top_k changes, and top_p only from 0.95.
      // @see https://platform.claude.com/docs/en/build-with-claude/extended-thinking#feature-compatibility
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
  } else if (extra.thinking !== undefined && isRecord(extra.thinking) && typeof extra.thinking.type === 'string') {
    // `adaptive` and later kinds, from an Anthropic client.
    thinking = extra.thinking;
  }
  if (reasoning?.summary !== undefined) report.dropped.push('reasoning.summary');

  if (temperature !== undefined) body.temperature = temperature;
  if (topP !== undefined) body.top_p = topP;
  if (topK !== undefined) body.top_k = topK;

  if (request.stop !== undefined) {
    // Anthropic rejects stop sequences made of whitespace only.
    const stop = request.stop.filter((sequence) => sequence.trim().length > 0);
    if (stop.length < request.stop.length) report.dropped.push('stop');
    if (stop.length > 0) body.stop_sequences = stop;
  }
  if (request.stream) body.stream = true;
  if (request.user !== undefined) body.metadata = { user_id: request.user };

  // ---- tools
  const tools: Block[] = (request.tools ?? []).map((tool) => {
    const inputSchema = tool.parameters.type === undefined ? { type: 'object', ...tool.parameters } : tool.parameters;
    const block: Block = { name: tool.name };
    if (tool.description !== undefined) block.description = tool.description;
    block.input_schema = inputSchema;
    if (tool.strict !== undefined) block.strict = tool.strict;
    return block;
  });
  if (Array.isArray(extra.tools)) {
    extra.tools.forEach((tool: unknown) => {
      if (isAnthropicHostedTool(tool)) tools.push(tool);
      else report.dropped.push(`tools.${isRecord(tool) && typeof tool.type === 'string' ? tool.type : 'unknown'}`);
    });
  }
  if (request.tools !== undefined || tools.length > 0) body.tools = tools;

  const toolChoice = toAnthropicToolChoice(request.toolChoice, request.parallelToolCalls);
  if (toolChoice !== undefined) body.tool_choice = toolChoice;
  if (thinking !== undefined) body.thinking = thinking;

  // ---- output_config: the structured-output schema plus whatever an Anthropic client sent
  const outputConfig: Block = isRecord(extra.output_config) ? { ...extra.output_config } : {};
  if (format?.type === 'json_schema') {
    outputConfig.format = { type: 'json_schema', schema: format.schema };
    report.approximated.push('response_format');
  }
  if (Object.keys(outputConfig).length > 0) body.output_config = outputConfig;

  if (request.presencePenalty !== undefined) report.dropped.push('presence_penalty');
  if (request.frequencyPenalty !== undefined) report.dropped.push('frequency_penalty');
  if (request.seed !== undefined) report.dropped.push('seed');

  for (const [key, value] of Object.entries(extra)) {
    if (key === 'tools' || key === 'thinking' || key === 'output_config') continue;
    const carried = CARRIED_EXTRA[key];
    if (carried !== undefined && carried(value) && !(key in body)) body[key] = value;
    else report.dropped.push(key);
  }
  if (extra.output_config !== undefined && !isRecord(extra.output_config)) report.dropped.push('output_config');
  if (extra.thinking !== undefined && thinking !== extra.thinking) report.dropped.push('thinking');

  return { body, report };
}

/**
 * The thinking budget for an effort, or undefined when Anthropic would refuse
 * thinking for this request.
 */
function effortBudget(request: CanonicalRequest, maxTokens: number | undefined, messages: Block[]): number | undefined {
  const effort = request.reasoning?.effort;
  if (effort === undefined) return undefined;
  // Forced tool use is not compatible with thinking.
  const choice = request.toolChoice?.type;
  if (choice === 'required' || choice === 'tool') return undefined;
  // A tool loop in progress must echo the thinking of the assistant turn that called the tool.
  const lastAssistant = [...messages].reverse().find((message) => message.role === 'assistant');
  if (lastAssistant !== undefined && Array.isArray(lastAssistant.content)) {
    const blocks = lastAssistant.content as Block[];
    const callsTool = blocks.some((block) => block.type === 'tool_use');
    const first = blocks[0]?.type;
    if (callsTool && first !== 'thinking' && first !== 'redacted_thinking') return undefined;
  }
  let budget: number = THINKING_BUDGET_BY_EFFORT[effort];
  if (maxTokens !== undefined) budget = Math.min(budget, maxTokens - 1);
  return budget >= MIN_THINKING_BUDGET ? budget : undefined;
}

function toAnthropicToolChoice(
  choice: CanonicalToolChoice | undefined,
  parallelToolCalls: boolean | undefined,
): Block | undefined {
  const disableParallel = parallelToolCalls === false;
  if (choice === undefined) return disableParallel ? { type: 'auto', disable_parallel_tool_use: true } : undefined;
  let block: Block;
  switch (choice.type) {
    case 'auto':
      block = { type: 'auto' };
      break;
    case 'none':
      // No tool may be called, so there is no parallelism to disable (Anthropic allows the flag on the others only).
      return { type: 'none' };
    case 'required':
      block = { type: 'any' };
      break;
    case 'tool':
      block = { type: 'tool', name: choice.name };
      break;
  }
  if (disableParallel) block.disable_parallel_tool_use = true;
  return block;
}
