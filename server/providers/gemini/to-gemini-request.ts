/**
 * Canonical request → `generateContent` body (Gemini API and Vertex AI).
 * Whatever Gemini cannot carry is named in the bridge report: strict mode
 * refuses on it, otherwise the answer's fidelity header lists it.
 *
 * @see https://ai.google.dev/api/generate-content#request-body
 * @see https://ai.google.dev/gemini-api/docs/function-calling
 * @see https://ai.google.dev/gemini-api/docs/thinking
 */
import {
  describeHostedTool,
  emptyBridgeReport,
  type BridgeReport,
  type CanonicalAssistantPart,
  type CanonicalImagePart,
  type CanonicalMessage,
  type CanonicalReasoning,
  type CanonicalRequest,
  type CanonicalTextPart,
  type CanonicalUserPart,
} from '../canonical.js';

/** Gemini accepts at most this many stop sequences. */
const MAX_STOP_SEQUENCES = 5;

/**
 * Signatures Gemini issued carry this prefix in canonical form, so that a
 * signature another provider issued (an Anthropic thinking block) is never
 * sent to Gemini, which would refuse it.
 */
export const GEMINI_SIGNATURE_PREFIX = 'gemini:';

/**
 * Effort → thinking budget (tokens). Gemini 2.5 takes a budget, not an
 * effort; these are a judgement within its documented range (0–24,576 on
 * Flash, 128–32,768 on Pro). `-1` would be "dynamic".
 */
export const GEMINI_THINKING_BUDGET_BY_EFFORT: Record<NonNullable<CanonicalReasoning['effort']>, number> = {
  minimal: 128,
  low: 1024,
  medium: 8192,
  high: 24576,
};

type GeminiPart = Record<string, unknown>;
interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export function toGeminiRequest(request: CanonicalRequest): { body: Record<string, unknown>; report: BridgeReport } {
  const report = emptyBridgeReport();
  const body: Record<string, unknown> = { contents: convertMessages(request, report) };

  if (request.system !== undefined && request.system.length > 0) {
    body.systemInstruction = { parts: convertTextParts(request.system, report) };
  }

  const generationConfig: Record<string, unknown> = {};
  if (request.maxOutputTokens !== undefined) generationConfig.maxOutputTokens = request.maxOutputTokens;
  if (request.temperature !== undefined) generationConfig.temperature = request.temperature;
  if (request.topP !== undefined) generationConfig.topP = request.topP;
  if (request.topK !== undefined) generationConfig.topK = request.topK;
  if (request.stop !== undefined && request.stop.length > 0) {
    if (request.stop.length > MAX_STOP_SEQUENCES) report.approximated.push('stop');
    generationConfig.stopSequences = request.stop.slice(0, MAX_STOP_SEQUENCES);
  }
  if (request.presencePenalty !== undefined) generationConfig.presencePenalty = request.presencePenalty;
  if (request.frequencyPenalty !== undefined) generationConfig.frequencyPenalty = request.frequencyPenalty;
  if (request.seed !== undefined) generationConfig.seed = request.seed;
  if (request.responseFormat !== undefined && request.responseFormat.type !== 'text') {
    generationConfig.responseMimeType = 'application/json';
    // `responseJsonSchema` takes JSON Schema as is (`responseSchema` only an OpenAPI subset).
    if (request.responseFormat.type === 'json_schema') generationConfig.responseJsonSchema = request.responseFormat.schema;
  }
  if (request.reasoning !== undefined) {
    const thinkingConfig = convertReasoning(request.reasoning, report);
    if (thinkingConfig !== undefined) generationConfig.thinkingConfig = thinkingConfig;
  }
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;

  const hasTools = request.tools !== undefined && request.tools.length > 0;
  if (hasTools) {
    body.tools = [
      {
        functionDeclarations: request.tools!.map((tool) => {
          const declaration: Record<string, unknown> = { name: tool.name };
          if (tool.description !== undefined) declaration.description = tool.description;
          // JSON Schema as the client wrote it (`parameters` would take only Google's OpenAPI subset).
          declaration.parametersJsonSchema = tool.parameters;
          return declaration;
        }),
      },
    ];
    if (request.tools!.some((tool) => tool.strict === true)) report.approximated.push('tools.strict');
    if (request.toolChoice !== undefined) body.toolConfig = { functionCallingConfig: convertToolChoice(request.toolChoice) };
    // Gemini decides alone how many calls it makes at once.
    if (request.parallelToolCalls === false) report.dropped.push('parallel_tool_calls');
  } else if (request.toolChoice?.type === 'required' || request.toolChoice?.type === 'tool') {
    report.dropped.push('tool_choice');
  }
  if (request.user !== undefined) report.dropped.push('user');

  for (const [key, value] of Object.entries(request.extra ?? {})) {
    if (key === 'tools' && Array.isArray(value)) {
      for (const tool of value) report.dropped.push(`tools.${describeHostedTool(tool)}`);
      continue;
    }
    report.dropped.push(key);
  }
  return { body, report: { dropped: [...new Set(report.dropped)], approximated: [...new Set(report.approximated)] } };
}

function convertMessages(request: CanonicalRequest, report: BridgeReport): GeminiContent[] {
  // Tool answers carry the function name; a tool message from chat or messages carries only the call id.
  const toolNames = new Map<string, string>();
  for (const message of request.messages) {
    if (message.role !== 'assistant') continue;
    for (const part of message.content) if (part.type === 'tool_call') toolNames.set(part.id, part.name);
  }
  const contents: GeminiContent[] = [];
  // Gemini wants turns to alternate: parts of consecutive turns of one role are joined into one turn.
  const push = (role: GeminiContent['role'], parts: GeminiPart[]): void => {
    if (parts.length === 0) return;
    const last = contents.at(-1);
    if (last && last.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  };
  for (const message of request.messages) push(...convertMessage(message, toolNames, report));
  return contents;
}

function convertMessage(message: CanonicalMessage, toolNames: Map<string, string>, report: BridgeReport): [GeminiContent['role'], GeminiPart[]] {
  switch (message.role) {
    case 'system':
      // No system turn inside a conversation: its text goes in as the user's.
      report.approximated.push('messages.system');
      return ['user', convertTextParts(message.content, report)];
    case 'user':
      if (message.name !== undefined) report.dropped.push('name');
      return ['user', message.content.flatMap((part) => convertUserPart(part, report))];
    case 'assistant':
      if (message.name !== undefined) report.dropped.push('name');
      return ['model', convertAssistantParts(message.content, report)];
    case 'tool': {
      const name = message.name ?? toolNames.get(message.toolCallId);
      if (name === undefined) report.approximated.push('tool_call_id');
      const text: string[] = [];
      const images: GeminiPart[] = [];
      for (const part of message.content) {
        if (part.type === 'text') text.push(part.text);
        else if (part.type === 'image') {
          report.approximated.push('tool_result.image');
          images.push(convertImage(part, report));
        } else report.dropped.push(part.origin);
      }
      // `response` must be an object: `output` holds a result, `error` a failure (Google's convention).
      const response = message.isError ? { error: text.join('') } : { output: text.join('') };
      return ['user', [{ functionResponse: { name: name ?? message.toolCallId, response } }, ...images]];
    }
  }
}

function convertAssistantParts(content: CanonicalAssistantPart[], report: BridgeReport): GeminiPart[] {
  const parts: GeminiPart[] = [];
  // A signature without thought text belongs to the part after it (Gemini puts it on the function call it came with).
  let pendingSignature: string | undefined;
  const withSignature = (part: GeminiPart): GeminiPart => {
    if (pendingSignature === undefined) return part;
    const signed = { ...part, thoughtSignature: pendingSignature };
    pendingSignature = undefined;
    return signed;
  };
  for (const part of content) {
    switch (part.type) {
      case 'text':
        if (part.cacheControl !== undefined) report.dropped.push('cache_control');
        parts.push(withSignature({ text: part.text }));
        break;
      case 'tool_call':
        parts.push(withSignature({ functionCall: { name: part.name, args: parseArguments(part.arguments, report) } }));
        break;
      case 'thinking': {
        const signature = part.signature?.startsWith(GEMINI_SIGNATURE_PREFIX) ? part.signature.slice(GEMINI_SIGNATURE_PREFIX.length) : undefined;
        // An empty signature is none (a messages client echoes `signature: ""` of an unsigned thought).
        if (part.redactedData !== undefined || (part.signature && signature === undefined)) {
          // Another provider's reasoning cannot be replayed to Gemini.
          report.dropped.push('thinking');
          break;
        }
        if (part.text === '') pendingSignature = signature;
        else parts.push({ text: part.text, thought: true, ...(signature !== undefined ? { thoughtSignature: signature } : {}) });
        break;
      }
      case 'unknown':
        report.dropped.push(part.origin);
        break;
    }
  }
  // A signature after the last part (a streamed answer sends it on its final text piece) goes back on that part.
  if (pendingSignature !== undefined && parts.length > 0) parts[parts.length - 1] = { ...parts[parts.length - 1], thoughtSignature: pendingSignature };
  return parts;
}

function convertUserPart(part: CanonicalUserPart, report: BridgeReport): GeminiPart[] {
  switch (part.type) {
    case 'text':
      if (part.cacheControl !== undefined) report.dropped.push('cache_control');
      return [{ text: part.text }];
    case 'image':
      return [convertImage(part, report)];
    case 'unknown':
      report.dropped.push(part.origin);
      return [];
  }
}

const DATA_URL = /^data:([^;,]+);base64,(.*)$/s;

function convertImage(part: CanonicalImagePart, report: BridgeReport): GeminiPart {
  if (part.detail !== undefined && part.detail !== 'auto') report.dropped.push('detail');
  if (part.source.kind === 'base64') return { inlineData: { mimeType: part.source.mediaType, data: part.source.data } };
  const dataUrl = DATA_URL.exec(part.source.url);
  if (dataUrl) return { inlineData: { mimeType: dataUrl[1], data: dataUrl[2] } };
  // A URL is fetched by Google; its type is guessed from the name (Gemini requires one).
  return { fileData: { mimeType: guessImageType(part.source.url), fileUri: part.source.url } };
}

function guessImageType(url: string): string {
  const extension = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase();
  switch (extension) {
    case 'png':
      return 'image/png';
    case 'webp':
      return 'image/webp';
    case 'gif':
      return 'image/gif';
    case 'heic':
      return 'image/heic';
    default:
      return 'image/jpeg';
  }
}

function convertTextParts(parts: CanonicalTextPart[], report: BridgeReport): GeminiPart[] {
  for (const part of parts) if (part.cacheControl !== undefined) report.dropped.push('cache_control');
  return parts.map((part) => ({ text: part.text }));
}

/** A call's arguments as Gemini's `args` object; a text that is not a JSON object is kept under `input`. */
function parseArguments(text: string, report: BridgeReport): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text || '{}');
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>;
  } catch {
    // Reported below.
  }
  report.approximated.push('tool_calls.arguments');
  return { input: text };
}

function convertToolChoice(choice: NonNullable<CanonicalRequest['toolChoice']>): Record<string, unknown> {
  switch (choice.type) {
    case 'auto':
      return { mode: 'AUTO' };
    case 'none':
      return { mode: 'NONE' };
    case 'required':
      return { mode: 'ANY' };
    case 'tool':
      return { mode: 'ANY', allowedFunctionNames: [choice.name] };
  }
}

function convertReasoning(reasoning: CanonicalReasoning, report: BridgeReport): Record<string, unknown> | undefined {
  if (reasoning.disabled) return { thinkingBudget: 0 };
  if (reasoning.summary !== undefined && reasoning.summary !== 'auto' && reasoning.summary !== 'detailed') report.approximated.push('reasoning.summary');
  if (reasoning.budgetTokens !== undefined) {
    if (reasoning.effort !== undefined) report.dropped.push('reasoning.effort');
    return { thinkingBudget: reasoning.budgetTokens, includeThoughts: true };
  }
  if (reasoning.effort !== undefined) {
    report.approximated.push('reasoning.effort');
    return { thinkingBudget: GEMINI_THINKING_BUDGET_BY_EFFORT[reasoning.effort], includeThoughts: true };
  }
  return reasoning.summary !== undefined ? { includeThoughts: true } : undefined;
}
