/**
 * A validated chat completions request (client side) → canonical request.
 * Everything the canonical types do not model is kept in `request.extra` by
 * its wire name; what can be neither modelled nor kept is in the report.
 */
import {
  emptyBridgeReport,
  type BridgeReport,
  type CanonicalAssistantPart,
  type CanonicalImageSource,
  type CanonicalMessage,
  type CanonicalRequest,
  type CanonicalResponseFormat,
  type CanonicalTextPart,
  type CanonicalTool,
  type CanonicalToolChoice,
  type CanonicalUserPart,
} from '../canonical.js';
import {
  isChatImageUrlPart,
  isChatTextPart,
  type ChatAssistantMessage,
  type ChatCompletionRequest,
  type ChatContentPart,
  type ChatFunctionDefinition,
} from './openai.wire.js';

/**
 * Request fields read into canonical fields (or consumed by the gateway:
 * `stream_options` decides the client's usage chunk). Every other field goes
 * to `extra`.
 */
const MODELLED_FIELDS = new Set([
  'model',
  'messages',
  'stream',
  'stream_options',
  'temperature',
  'top_p',
  'stop',
  'presence_penalty',
  'frequency_penalty',
  'max_tokens',
  'max_completion_tokens',
  'n',
  'seed',
  'tools',
  'tool_choice',
  'parallel_tool_calls',
  'response_format',
  'reasoning_effort',
  'user',
  'safety_identifier',
  'functions',
  'function_call',
]);

/** JSON schema used when a function declares no parameters (OpenAI's own reading of that case). */
const EMPTY_PARAMETERS: Record<string, unknown> = { type: 'object', properties: {} };

export function fromOpenAIChatRequest(body: ChatCompletionRequest): { request: CanonicalRequest; report: BridgeReport } {
  const report = emptyBridgeReport();
  const { system, messages } = convertMessages(body, report);
  const request: CanonicalRequest = { model: body.model, messages, stream: body.stream === true };
  if (system.length > 0) request.system = system;

  const maxOutputTokens = body.max_completion_tokens ?? body.max_tokens;
  if (maxOutputTokens != null) request.maxOutputTokens = maxOutputTokens;
  if (body.temperature != null) request.temperature = body.temperature;
  if (body.top_p != null) request.topP = body.top_p;
  if (body.stop != null) {
    const stop = typeof body.stop === 'string' ? [body.stop] : body.stop;
    if (stop.length > 0) request.stop = [...stop];
  }
  if (body.presence_penalty != null) request.presencePenalty = body.presence_penalty;
  if (body.frequency_penalty != null) request.frequencyPenalty = body.frequency_penalty;
  if (body.seed != null) request.seed = body.seed;

  // The deprecated `functions`/`function_call` are read only when their successors are absent.
  if (body.tools != null && body.functions != null) report.dropped.push('functions');
  if (body.tool_choice != null && body.function_call != null) report.dropped.push('function_call');
  const tools = convertTools(body);
  if (tools.length > 0) request.tools = tools;
  const toolChoice = convertToolChoice(body, report);
  if (toolChoice) request.toolChoice = toolChoice;
  if (body.parallel_tool_calls != null) request.parallelToolCalls = body.parallel_tool_calls;
  if (body.response_format != null) request.responseFormat = convertResponseFormat(body.response_format, report);
  if (body.reasoning_effort != null) request.reasoning = { effort: body.reasoning_effort };
  // `user` is deprecated in favour of `safety_identifier`; the newer field wins when both are sent.
  const user = body.safety_identifier ?? body.user;
  if (user != null) request.user = user;

  const extra: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    // `__proto__` can arrive as an own key of parsed JSON; assigning it would replace the prototype.
    if (MODELLED_FIELDS.has(key) || key === '__proto__' || value === null || value === undefined) continue;
    extra[key] = value;
  }
  // n = 1 is the default and says nothing; more choices than one is not modelled.
  if (body.n != null && body.n !== 1) extra.n = body.n;
  if (Object.keys(extra).length > 0) request.extra = extra;

  return { request, report };
}

function convertMessages(
  body: ChatCompletionRequest,
  report: BridgeReport,
): { system: CanonicalTextPart[]; messages: CanonicalMessage[] } {
  const system: CanonicalTextPart[] = [];
  const messages: CanonicalMessage[] = [];
  body.messages.forEach((message, messageIndex) => {
    const path = `messages[${messageIndex}]`;
    switch (message.role) {
      case 'system':
      case 'developer': {
        // `developer` is the newer name of `system` for reasoning models; both are instructions.
        const content = convertSystemContent(message.content, path, report);
        if (message.name !== undefined) report.dropped.push(`${path}.name`);
        if (messages.length === 0) system.push(...content);
        else messages.push({ role: 'system', content });
        break;
      }
      case 'user': {
        const converted: CanonicalMessage = { role: 'user', content: convertUserContent(message.content) };
        if (message.name !== undefined) converted.name = message.name;
        messages.push(converted);
        break;
      }
      case 'assistant':
        messages.push(convertAssistantMessage(message, path, report));
        break;
      case 'tool':
        messages.push({ role: 'tool', toolCallId: message.tool_call_id, content: convertUserContent(message.content) });
        break;
      case 'function':
        // The legacy function call has no id: its name pairs the call with its answer (see convertAssistantMessage).
        messages.push({
          role: 'tool',
          toolCallId: message.name,
          name: message.name,
          content: message.content === null ? [] : [{ type: 'text', text: message.content }],
        });
        break;
    }
  });
  return { system, messages };
}

function convertSystemContent(content: string | ChatContentPart[], path: string, report: BridgeReport): CanonicalTextPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const parts: CanonicalTextPart[] = [];
  content.forEach((part, partIndex) => {
    if (isChatTextPart(part)) parts.push({ type: 'text', text: part.text });
    else report.dropped.push(`${path}.content[${partIndex}]`);
  });
  return parts;
}

function convertUserContent(content: string | ChatContentPart[]): CanonicalUserPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((part): CanonicalUserPart => {
    if (isChatTextPart(part)) return { type: 'text', text: part.text };
    if (isChatImageUrlPart(part)) {
      const image: CanonicalUserPart = { type: 'image', source: readImageSource(part.image_url.url) };
      if (part.image_url.detail !== undefined) image.detail = part.image_url.detail;
      return image;
    }
    return { type: 'unknown', origin: `chat:${part.type}`, raw: part };
  });
}

function convertAssistantMessage(message: ChatAssistantMessage, path: string, report: BridgeReport): CanonicalMessage {
  const content: CanonicalAssistantPart[] = [];
  if (typeof message.content === 'string') {
    // An empty string is how clients write "no text" next to tool calls.
    if (message.content !== '') content.push({ type: 'text', text: message.content });
  } else if (message.content) {
    for (const part of message.content) {
      if (isChatTextPart(part)) content.push({ type: 'text', text: part.text });
      else content.push({ type: 'unknown', origin: `chat:${part.type}`, raw: part });
    }
  }
  if (message.refusal != null) {
    // Kept in the shape of a refusal content part so that both spellings read back the same way.
    content.push({ type: 'unknown', origin: 'chat:refusal', raw: { type: 'refusal', refusal: message.refusal } });
  }
  for (const call of message.tool_calls ?? []) {
    content.push({ type: 'tool_call', id: call.id, name: call.function.name, arguments: normalizeArguments(call.function.arguments) });
  }
  if (message.function_call != null) {
    const { name, arguments: callArguments } = message.function_call;
    content.push({ type: 'tool_call', id: name, name, arguments: normalizeArguments(callArguments) });
  }
  if (message.audio != null) report.dropped.push(`${path}.audio`);
  const converted: CanonicalMessage = { role: 'assistant', content };
  if (message.name !== undefined) converted.name = message.name;
  return converted;
}

function convertTools(body: ChatCompletionRequest): CanonicalTool[] {
  const definitions: ChatFunctionDefinition[] = body.tools?.map((tool) => tool.function) ?? body.functions ?? [];
  return definitions.map((definition) => {
    const tool: CanonicalTool = { name: definition.name, parameters: definition.parameters ?? EMPTY_PARAMETERS };
    if (definition.description !== undefined) tool.description = definition.description;
    if (definition.strict != null) tool.strict = definition.strict;
    return tool;
  });
}

function convertToolChoice(body: ChatCompletionRequest, report: BridgeReport): CanonicalToolChoice | undefined {
  const choice = body.tool_choice;
  if (choice == null) {
    const legacy = body.function_call;
    if (legacy == null) return undefined;
    return typeof legacy === 'string' ? { type: legacy } : { type: 'tool', name: legacy.name };
  }
  if (typeof choice === 'string') return { type: choice };
  if (choice.type === 'function') return { type: 'tool', name: choice.function.name };
  // `allowed_tools` restricts the callable tools without changing the list (for prompt caching).
  // The canonical choice cannot name a subset, so only its mode is kept.
  report.approximated.push('tool_choice');
  return { type: choice.allowed_tools?.mode === 'required' ? 'required' : 'auto' };
}

function convertResponseFormat(
  format: NonNullable<ChatCompletionRequest['response_format']>,
  report: BridgeReport,
): CanonicalResponseFormat {
  if (format.type !== 'json_schema') return { type: format.type };
  const { json_schema: jsonSchema } = format;
  const converted: CanonicalResponseFormat = { type: 'json_schema', name: jsonSchema.name, schema: jsonSchema.schema ?? {} };
  if (jsonSchema.strict != null) converted.strict = jsonSchema.strict;
  if (jsonSchema.description !== undefined) report.dropped.push('response_format.json_schema.description');
  return converted;
}

/**
 * A `data:<media type>[;param];base64,<data>` URL becomes inline data so that
 * formats without data URLs (Anthropic) can carry it; anything else stays a URL.
 */
export function readImageSource(url: string): CanonicalImageSource {
  if (url.startsWith('data:')) {
    const comma = url.indexOf(',');
    if (comma !== -1) {
      const [mediaType, ...parameters] = url.slice('data:'.length, comma).split(';');
      if (parameters.length > 0 && parameters[parameters.length - 1].toLowerCase() === 'base64') {
        return { kind: 'base64', mediaType: mediaType || 'application/octet-stream', data: url.slice(comma + 1) };
      }
    }
  }
  return { kind: 'url', url };
}

/** Canonical arguments are a JSON text; an empty string means no arguments. */
function normalizeArguments(value: string): string {
  return value === '' ? '{}' : value;
}
