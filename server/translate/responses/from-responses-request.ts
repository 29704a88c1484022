/**
 * Responses request (public `POST /v1/responses` body) → canonical request.
 *
 * Items become canonical messages as OpenAI's own models see them: the items
 * the model produced in one turn (assistant messages, reasoning, function
 * calls) form one assistant message, so a turn of `[reasoning, message,
 * function_call, function_call]` is one assistant message with a thinking
 * part, a text part and two tool calls. Item and part types we do not model
 * are kept as `unknown` parts (origin `responses:item` for whole items,
 * `responses:<part type>` for content parts): a Responses-speaking target
 * carries them, any other target reports them. Hosted tools go to
 * `extra.tools`, every unmodelled top-level field to `extra` by wire name.
 */
import {
  emptyBridgeReport,
  type BridgeReport,
  type CanonicalAssistantPart,
  type CanonicalMessage,
  type CanonicalReasoning,
  type CanonicalRequest,
  type CanonicalResponseFormat,
  type CanonicalTextPart,
  type CanonicalTool,
  type CanonicalToolChoice,
  type CanonicalUserPart,
} from '../../providers/canonical.js';
import type { ResponsesContentPart, ResponsesFunctionCallItem, ResponsesFunctionCallOutputItem, ResponsesFunctionTool, ResponsesInputImagePart, ResponsesInputItem, ResponsesMessageItem, ResponsesReasoningItem, ResponsesRequest, ResponsesTextFormat, ResponsesTool, ResponsesToolChoice } from './responses.wire.js';
import type { ResponsesOpaqueObject } from './responses-object.wire.js';
import {
  RESPONSES_ITEM_ORIGIN,
  imageSourceFromUrl,
  isAssistantSideItemType,
  isCanonicalEffort,
  reportApproximated,
  reportDropped,
  responsesPartOrigin,
} from './responses-shared.js';

/** Top-level fields mapped to canonical fields; every other field goes to `extra`. */
const MODELLED_FIELDS = new Set([
  'model',
  'input',
  'instructions',
  'stream',
  'max_output_tokens',
  'temperature',
  'top_p',
  'previous_response_id',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'text',
  'reasoning',
  'user',
  'safety_identifier',
]);

export interface FromResponsesRequestResult {
  request: CanonicalRequest;
  report: BridgeReport;
}

/**
 * @param history the conversation rebuilt from `previous_response_id` (see
 *   history.ts); prepended before the new input. Its instructions are not
 *   carried over: OpenAI applies only the current request's `instructions`.
 */
export function fromResponsesRequest(body: ResponsesRequest, history?: CanonicalMessage[]): FromResponsesRequestResult {
  const report = emptyBridgeReport();
  const extra: Record<string, unknown> = {};
  const prior = history ?? [];
  const request: CanonicalRequest = {
    model: body.model,
    messages: [...prior, ...convertInput(body.input, prior, report)],
    stream: body.stream === true,
  };

  // OpenAI treats "" as no instructions; an empty system text would be rejected by some providers.
  if (body.instructions != null && body.instructions !== '') request.system = [{ type: 'text', text: body.instructions }];
  if (body.max_output_tokens != null) request.maxOutputTokens = body.max_output_tokens;
  if (body.temperature != null) request.temperature = body.temperature;
  if (body.top_p != null) request.topP = body.top_p;
  if (body.parallel_tool_calls != null) request.parallelToolCalls = body.parallel_tool_calls;

  if (body.tools != null) {
    const { tools, hosted } = convertTools(body.tools);
    if (tools.length > 0) request.tools = tools;
    if (hosted.length > 0) extra.tools = hosted;
  }
  if (body.tool_choice != null) {
    const choice = convertToolChoice(body.tool_choice, report);
    if ('canonical' in choice) request.toolChoice = choice.canonical;
    else extra.tool_choice = choice.raw;
  }

  if (body.text != null) {
    const { format, ...rest } = body.text;
    if (format != null) request.responseFormat = convertTextFormat(format, report);
    const kept = withoutNullish(rest);
    if (Object.keys(kept).length > 0) extra.text = kept;
  }

  if (body.reasoning != null) {
    const reasoning = convertReasoning(body.reasoning, report);
    if (reasoning) request.reasoning = reasoning;
  }

  // `user` is deprecated in favour of `safety_identifier`; both name the end user.
  const user = body.safety_identifier ?? body.user;
  if (user != null) request.user = user;
  if (body.safety_identifier != null && body.user != null) extra.user = body.user;

  // The id is the gateway's own; the upstream cannot resolve it, so it is never forwarded.
  if (body.previous_response_id != null && history === undefined) reportDropped(report, 'previous_response_id');

  for (const [key, value] of Object.entries(body)) {
    if (MODELLED_FIELDS.has(key) || value === undefined || value === null) continue;
    extra[key] = value;
  }
  if (Object.keys(extra).length > 0) request.extra = extra;
  return { request, report };
}

function withoutNullish(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined && value !== null));
}

// ---------------------------------------------------------------------------
// Input items

function isMessageItem(item: ResponsesInputItem): item is ResponsesMessageItem {
  return item.type === undefined || item.type === 'message';
}

function itemOfType<T extends ResponsesInputItem>(item: ResponsesInputItem, type: string): item is T {
  return item.type === type;
}

function convertInput(
  input: ResponsesRequest['input'],
  prior: readonly CanonicalMessage[],
  report: BridgeReport,
): CanonicalMessage[] {
  if (input == null) return [];
  if (typeof input === 'string') return [{ role: 'user', content: [{ type: 'text', text: input }] }];

  const messages: CanonicalMessage[] = [];
  const toolNames = new Map<string, string>();
  for (const message of prior) collectToolNames(message, toolNames);

  // The assistant turn being assembled; closed by any item of the caller's side.
  let turn: Extract<CanonicalMessage, { role: 'assistant' }> | undefined;
  const assistantTurn = () => {
    if (!turn) {
      turn = { role: 'assistant', content: [] };
      messages.push(turn);
    }
    return turn;
  };

  input.forEach((item, index) => {
    const path = `input[${index}]`;
    if (isMessageItem(item)) {
      if (item.role === 'assistant') {
        assistantTurn().content.push(...convertAssistantContent(item.content, path, report));
        return;
      }
      turn = undefined;
      if (item.role === 'user') {
        messages.push({ role: 'user', content: convertUserContent(item.content) });
      } else {
        messages.push({ role: 'system', content: convertSystemContent(item.content, path, report) });
      }
      return;
    }
    if (itemOfType<ResponsesFunctionCallItem>(item, 'function_call')) {
      toolNames.set(item.call_id, item.name);
      assistantTurn().content.push({
        type: 'tool_call',
        id: item.call_id,
        name: item.name,
        arguments: item.arguments === '' ? '{}' : item.arguments,
      });
      return;
    }
    if (itemOfType<ResponsesFunctionCallOutputItem>(item, 'function_call_output')) {
      turn = undefined;
      const name = toolNames.get(item.call_id);
      messages.push({
        role: 'tool',
        toolCallId: item.call_id,
        ...(name === undefined ? {} : { name }),
        content: convertUserContent(item.output),
      });
      return;
    }
    if (itemOfType<ResponsesReasoningItem>(item, 'reasoning')) {
      const texts = (item.summary?.length ? item.summary : (item.content ?? [])).map((entry) => entry.text);
      assistantTurn().content.push(...texts.map((text) => ({ type: 'thinking' as const, text })));
      // Encrypted reasoning only makes sense to the provider that wrote it.
      if (item.encrypted_content != null) reportDropped(report, `${path}.encrypted_content`);
      return;
    }
    const unknown = { type: 'unknown' as const, origin: RESPONSES_ITEM_ORIGIN, raw: item };
    if (isAssistantSideItemType(item.type ?? '')) {
      assistantTurn().content.push(unknown);
    } else {
      turn = undefined;
      messages.push({ role: 'user', content: [unknown] });
    }
  });
  return messages;
}

function collectToolNames(message: CanonicalMessage, names: Map<string, string>): void {
  if (message.role !== 'assistant') return;
  for (const part of message.content) if (part.type === 'tool_call') names.set(part.id, part.name);
}

type Content = ResponsesMessageItem['content'];

function textOf(part: ResponsesContentPart): string | undefined {
  if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text === 'string') return part.text;
  return undefined;
}

function convertUserContent(content: Content): CanonicalUserPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part): CanonicalUserPart => {
    const text = textOf(part);
    if (text !== undefined) return { type: 'text', text };
    if (part.type === 'input_image') return convertImage(part as ResponsesInputImagePart);
    return { type: 'unknown', origin: responsesPartOrigin(part.type), raw: part };
  });
}

function convertImage(part: ResponsesInputImagePart): CanonicalUserPart {
  // An uploaded file id means nothing outside OpenAI: keep it for a Responses target only.
  if (typeof part.image_url !== 'string') return { type: 'unknown', origin: responsesPartOrigin('input_image'), raw: part };
  return {
    type: 'image',
    source: imageSourceFromUrl(part.image_url),
    ...(typeof part.detail === 'string' ? { detail: part.detail } : {}),
  };
}

function convertSystemContent(content: Content, path: string, report: BridgeReport): CanonicalTextPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const parts: CanonicalTextPart[] = [];
  content.forEach((part, index) => {
    const text = textOf(part);
    if (text !== undefined) parts.push({ type: 'text', text });
    else reportDropped(report, `${path}.content[${index}]`);
  });
  return parts;
}

function convertAssistantContent(content: Content, path: string, report: BridgeReport): CanonicalAssistantPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part, index): CanonicalAssistantPart => {
    const text = textOf(part);
    if (text !== undefined) return { type: 'text', text };
    if (part.type === 'refusal' && typeof part.refusal === 'string') {
      // Canonical text has no refusal flag; the words still reach the model.
      reportApproximated(report, `${path}.content[${index}]`);
      return { type: 'text', text: part.refusal };
    }
    return { type: 'unknown', origin: responsesPartOrigin(part.type), raw: part };
  });
}

// ---------------------------------------------------------------------------
// Tools, tool choice, text format, reasoning

function isFunctionTool(tool: ResponsesTool): tool is ResponsesFunctionTool {
  return tool.type === 'function';
}

function convertTools(tools: ResponsesTool[]): { tools: CanonicalTool[]; hosted: ResponsesOpaqueObject[] } {
  const converted: CanonicalTool[] = [];
  const hosted: ResponsesOpaqueObject[] = [];
  for (const tool of tools) {
    if (!isFunctionTool(tool)) {
      hosted.push(tool as ResponsesOpaqueObject);
      continue;
    }
    converted.push({
      name: tool.name,
      ...(tool.description != null ? { description: tool.description } : {}),
      parameters: tool.parameters ?? { type: 'object', properties: {} },
      ...(tool.strict != null ? { strict: tool.strict } : {}),
    });
  }
  return { tools: converted, hosted };
}

function convertToolChoice(
  choice: ResponsesToolChoice,
  report: BridgeReport,
): { canonical: CanonicalToolChoice } | { raw: unknown } {
  if (typeof choice === 'string') return { canonical: { type: choice } };
  if (choice.type === 'function' && typeof choice.name === 'string') {
    return { canonical: { type: 'tool', name: choice.name } };
  }
  if (choice.type === 'allowed_tools') {
    // The subset only steers the model; keeping every tool with the same mode is the closest fit.
    reportApproximated(report, 'tool_choice');
    return { canonical: { type: choice.mode === 'required' ? 'required' : 'auto' } };
  }
  return { raw: choice };
}

function convertTextFormat(format: ResponsesTextFormat, report: BridgeReport): CanonicalResponseFormat {
  if (format.type !== 'json_schema') return { type: format.type };
  if (format.description != null) reportDropped(report, 'text.format.description');
  return {
    type: 'json_schema',
    name: format.name,
    schema: format.schema,
    ...(format.strict != null ? { strict: format.strict } : {}),
  };
}

function convertReasoning(
  reasoning: NonNullable<ResponsesRequest['reasoning']>,
  report: BridgeReport,
): CanonicalReasoning | undefined {
  const out: CanonicalReasoning = {};
  const effort = reasoning.effort;
  if (effort != null) {
    if (isCanonicalEffort(effort)) out.effort = effort;
    else if (effort === 'none') out.disabled = true;
    else if (effort === 'xhigh' || effort === 'max') {
      out.effort = 'high';
      reportApproximated(report, 'reasoning.effort');
    } else {
      reportDropped(report, 'reasoning.effort');
    }
  }
  const summary = reasoning.summary ?? reasoning.generate_summary;
  if (summary != null) out.summary = summary;
  return Object.keys(out).length > 0 ? out : undefined;
}

