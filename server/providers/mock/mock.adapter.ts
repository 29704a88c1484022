/**
 * The built-in `mock` provider: a deterministic, offline answer to any
 * canonical request, for demos, SDK tests and load tests.
 *
 * The answer is a pure function of the prompt (system, messages, tool names,
 * response format, seed) and of `options.id`, which only names the response
 * and its tool calls. It quotes the start of the last user message and adds a
 * sentence picked by a hash of the whole prompt, so different prompts get
 * different answers. It follows the request like a model would: forced and
 * mentioned tools are called with arguments valid against their schemas, tool
 * results are acknowledged in text (so agent loops end), JSON formats give
 * JSON, reasoning gives a thinking part, and `maxOutputTokens` and `stop`
 * cut the answer with the matching finish reason. Usage is counted with the
 * gateway tokenizer.
 *
 * The stream is the same answer cut into events, so both give the same
 * content and usage.
 */
import type {
  CanonicalAssistantPart,
  CanonicalFinishReason,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalResponse,
  CanonicalStreamEvent,
  CanonicalTool,
  CanonicalUsage,
} from '../canonical.js';
import { estimateRequestTokens } from '../request-tokens.js';
import { countTextTokens, truncateTextToTokens } from '../../tokenizer.js';
import {
  contentWordsOf,
  createRandom,
  excerptOf,
  fingerprintPrompt,
  hashText,
  lastUserText,
  mentionsTool,
  pickFrom,
  readableText,
  properNounsOf,
  textOfParts,
  toHex,
} from './mock-prompt.js';
import { generateSchemaValue, type SchemaValueHints } from './mock-schema-value.js';

export interface MockOptions {
  /** Response id; tool-call ids are derived from it. */
  id: string;
}

/** Words of the user's message quoted at the start of an answer. */
const EXCERPT_WORDS = 8;
/** Words of a tool result quoted in the answer that follows it. */
const TOOL_RESULT_EXCERPT_WORDS = 12;
/** Words per text or thinking delta in a stream. */
const WORDS_PER_DELTA = 3;
/** Longest tool-argument delta in a stream, in characters. */
const MAX_ARGUMENT_DELTA_CHARS = 12;

/** The closing sentence of every text answer; a natural place for a test to pick a stop sequence. */
export const MOCK_CLOSING_SENTENCE = 'This reply was generated offline by the mock provider.';

const ADJECTIVES = [
  'amber', 'quiet', 'silver', 'patient', 'bright', 'gentle', 'distant', 'hidden',
  'golden', 'steady', 'curious', 'ancient', 'swift', 'velvet', 'crisp', 'humble',
] as const;
const NOUNS = [
  'river', 'lantern', 'harbor', 'meadow', 'compass', 'orchard', 'signal', 'garden',
  'mountain', 'library', 'beacon', 'canyon', 'forest', 'island', 'window', 'bridge',
] as const;
const VERBS = [
  'hums', 'drifts', 'waits', 'glows', 'turns', 'settles', 'travels', 'listens',
  'gathers', 'rests', 'sparkles', 'wanders', 'echoes', 'returns', 'lingers', 'shines',
] as const;
const ADVERBS = [
  'softly', 'slowly', 'calmly', 'brightly', 'quietly', 'gladly', 'steadily', 'gently',
  'warmly', 'boldly', 'lightly', 'kindly', 'evenly', 'freely', 'neatly', 'openly',
] as const;

/** A sentence chosen by the prompt's hash, e.g. "The amber river hums softly beside the quiet lantern." */
function composeSentence(random: () => number): string {
  const first = `${pickFrom(ADJECTIVES, random)} ${pickFrom(NOUNS, random)}`;
  const action = `${pickFrom(VERBS, random)} ${pickFrom(ADVERBS, random)}`;
  const second = `${pickFrom(ADJECTIVES, random)} ${pickFrom(NOUNS, random)}`;
  return `The ${first} ${action} beside the ${second}.`;
}

function lastMessage(request: CanonicalRequest): CanonicalMessage | undefined {
  return request.messages[request.messages.length - 1];
}

/** The tools to call, in order; empty for a text answer. */
function selectTools(request: CanonicalRequest): CanonicalTool[] {
  const tools = request.tools ?? [];
  const choice = request.toolChoice;
  if (tools.length === 0 || choice?.type === 'none') return [];
  if (choice?.type === 'tool') {
    return [tools.find((tool) => tool.name === choice.name) ?? { name: choice.name, parameters: { type: 'object' } }];
  }
  if (choice?.type === 'required') return [tools[0]];
  // Auto: only a fresh user turn that mentions a tool gets a call; a tool result gets text.
  const last = lastMessage(request);
  if (last?.role !== 'user') return [];
  const text = readableText(textOfParts(last.content));
  const mentioned = tools.filter((tool) => mentionsTool(text, tool.name));
  if (mentioned.length <= 1 || request.parallelToolCalls !== false) return mentioned;
  return [mentioned[0]];
}

function toolNameOf(request: CanonicalRequest, toolCallId: string): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message.role !== 'assistant') continue;
    for (const part of message.content) {
      if (part.type === 'tool_call' && part.id === toolCallId) return part.name;
    }
  }
  return 'tool';
}

/** "The get_weather tool returned: …" for each tool result at the end of the conversation. */
function describeToolResults(request: CanonicalRequest): string | null {
  const results: string[] = [];
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message.role !== 'tool') break;
    const name = message.name ?? toolNameOf(request, message.toolCallId);
    const excerpt = excerptOf(readableText(textOfParts(message.content)), TOOL_RESULT_EXCERPT_WORDS) || '(no text)';
    results.unshift(`The ${name} tool ${message.isError ? 'failed with' : 'returned'}: "${excerpt}".`);
  }
  return results.length > 0 ? results.join(' ') : null;
}

function isThinkingRequested(request: CanonicalRequest): boolean {
  const reasoning = request.reasoning;
  return (
    reasoning !== undefined &&
    reasoning.disabled !== true &&
    (reasoning.effort !== undefined || reasoning.budgetTokens !== undefined)
  );
}

function thinkingSentenceCount(request: CanonicalRequest): number {
  switch (request.reasoning?.effort) {
    case 'minimal':
      return 1;
    case 'low':
      return 2;
    case 'medium':
      return 3;
    case 'high':
      return 4;
    default: {
      const budget = request.reasoning?.budgetTokens ?? 0;
      return budget < 2048 ? 2 : budget < 8192 ? 3 : 4;
    }
  }
}

function composeThinking(request: CanonicalRequest, excerpt: string, tools: CanonicalTool[]): string {
  const intent =
    tools.length > 0
      ? `I should call ${tools.map((tool) => tool.name).join(' and ')} to answer.`
      : lastMessage(request)?.role === 'tool'
        ? 'The tool results are in, so I can answer now.'
        : request.responseFormat && request.responseFormat.type !== 'text'
          ? 'The answer must be JSON.'
          : 'A short, friendly answer will do.';
  const sentences = [
    excerpt ? `The user wrote: "${excerpt}".` : 'The user sent a message without text.',
    intent,
    'A mock model has no knowledge of its own, so the wording comes from a hash of the prompt.',
    'Checking the format once more before answering.',
  ];
  const thinking = sentences.slice(0, thinkingSentenceCount(request)).join(' ');
  const budget = request.reasoning?.budgetTokens;
  return budget === undefined ? thinking : truncateTextToTokens(thinking, budget);
}

/** A stable stand-in for a provider's thinking signature (opaque base64, like Anthropic's). */
function signThinking(text: string): string {
  return Buffer.from(`mock-signature:${toHex(hashText(text))}${toHex(hashText(text, 0x9e3779b9))}`).toString('base64');
}

/** The text before the earliest stop sequence, and that sequence; unchanged text and `null` when none occurs. */
function applyStopSequences(text: string, stop: readonly string[] | undefined): { text: string; stopSequence: string | null } {
  let cutAt = -1;
  let matched: string | null = null;
  for (const sequence of stop ?? []) {
    if (sequence.length === 0) continue;
    const at = text.indexOf(sequence);
    if (at !== -1 && (cutAt === -1 || at < cutAt)) {
      cutAt = at;
      matched = sequence;
    }
  }
  return matched === null ? { text, stopSequence: null } : { text: text.slice(0, cutAt), stopSequence: matched };
}

function formatAnswer(request: CanonicalRequest, plain: string, hints: SchemaValueHints): string {
  const format = request.responseFormat;
  if (format?.type === 'json_object') return JSON.stringify({ answer: plain });
  if (format?.type === 'json_schema') return JSON.stringify(generateSchemaValue(format.schema, hints)) ?? 'null';
  return plain;
}

function toolCallId(options: MockOptions, index: number): string {
  return `call_mock${toHex(hashText(`${options.id}:${index}`))}${toHex(hashText(`${index}:${options.id}`))}`;
}

/** The non-streaming answer to a request. */
export function generateMock(request: CanonicalRequest, options: MockOptions): CanonicalResponse {
  const random = createRandom(fingerprintPrompt(request));
  const userText = lastUserText(request);
  const excerpt = excerptOf(userText, EXCERPT_WORDS);
  const sentence = composeSentence(random);
  const tools = selectTools(request);

  const toolResults = describeToolResults(request);
  const opening = toolResults ?? (excerpt ? `Mock answer to: "${excerpt}".` : 'Mock answer to your message.');
  const plain = `${opening} ${sentence} ${MOCK_CLOSING_SENTENCE}`;
  const hints: SchemaValueHints = {
    properNouns: properNounsOf(userText),
    words: contentWordsOf(userText),
    excerpt: excerpt.replace(/…$/u, ''),
    answer: plain,
    random,
  };

  const content: CanonicalAssistantPart[] = [];
  let remaining = request.maxOutputTokens === undefined ? Number.POSITIVE_INFINITY : Math.max(0, request.maxOutputTokens);
  let truncated = false;
  let outputTokens = 0;
  let reasoningTokens: number | undefined;
  let stopSequence: string | null = null;

  /** Keeps as much of a text as the budget allows; returns what was kept and its cost. */
  const spend = (text: string): { text: string; tokens: number } => {
    let kept = text;
    let tokens = countTextTokens(kept);
    if (tokens > remaining) {
      kept = truncateTextToTokens(kept, remaining);
      tokens = countTextTokens(kept);
      truncated = true;
    }
    remaining -= tokens;
    outputTokens += tokens;
    return { text: kept, tokens };
  };

  if (isThinkingRequested(request)) {
    const thinking = spend(composeThinking(request, excerpt, tools));
    reasoningTokens = thinking.tokens;
    if (thinking.text) content.push({ type: 'thinking', text: thinking.text, signature: signThinking(thinking.text) });
  }

  if (!truncated && tools.length === 0) {
    const stopped = applyStopSequences(formatAnswer(request, plain, hints), request.stop);
    const answer = spend(stopped.text);
    // A stop sequence only ends the answer if the budget let it get that far.
    stopSequence = truncated ? null : stopped.stopSequence;
    if (answer.text) content.push({ type: 'text', text: answer.text });
  }

  for (const [index, tool] of tools.entries()) {
    if (truncated) break;
    const argumentsText = JSON.stringify(generateSchemaValue(tool.parameters, hints)) ?? '{}';
    const tokens = countTextTokens(argumentsText);
    // Arguments are never cut: a half JSON text would break clients that parse it.
    if (tokens > remaining) {
      truncated = true;
      break;
    }
    remaining -= tokens;
    outputTokens += tokens;
    content.push({ type: 'tool_call', id: toolCallId(options, index), name: tool.name, arguments: argumentsText });
  }

  const finishReason: CanonicalFinishReason = truncated
    ? 'length'
    : stopSequence !== null
      ? 'stop_sequence'
      : content.some((part) => part.type === 'tool_call')
        ? 'tool_calls'
        : 'stop';
  const usage: CanonicalUsage = { inputTokens: estimateRequestTokens(request), outputTokens };
  if (reasoningTokens !== undefined) usage.reasoningTokens = reasoningTokens;
  return { id: options.id, model: request.model, content, finishReason, stopSequence, usage };
}

/** Cuts a text into pieces of `wordsPerChunk` words; the pieces join back to the text exactly. */
export function splitIntoWordChunks(text: string, wordsPerChunk: number): string[] {
  if (text.length === 0) return [];
  const starts = [0];
  let words = 0;
  for (const match of text.matchAll(/\S+/gu)) {
    if (words > 0 && words % wordsPerChunk === 0 && match.index > 0) starts.push(match.index);
    words++;
  }
  return starts.map((start, i) => text.slice(start, starts[i + 1] ?? text.length));
}

/** Cuts JSON text into a few deltas, never inside a character (surrogate pairs stay whole). */
export function splitArguments(text: string): string[] {
  const characters = Array.from(text);
  if (characters.length === 0) return [];
  const size = Math.max(1, Math.min(MAX_ARGUMENT_DELTA_CHARS, Math.ceil(characters.length / 3)));
  const chunks: string[] = [];
  for (let start = 0; start < characters.length; start += size) {
    chunks.push(characters.slice(start, start + size).join(''));
  }
  return chunks;
}

/** The answer of {@link generateMock} as a stream of canonical events. */
export function streamMock(request: CanonicalRequest, options: MockOptions): CanonicalStreamEvent[] {
  const response = generateMock(request, options);
  const events: CanonicalStreamEvent[] = [
    {
      type: 'start',
      id: response.id,
      model: response.model,
      usage: { inputTokens: response.usage.inputTokens, outputTokens: 0 },
    },
  ];
  response.content.forEach((part, index) => {
    if (part.type === 'unknown') return;
    switch (part.type) {
      case 'thinking':
        events.push({ type: 'thinking-start', index });
        for (const text of splitIntoWordChunks(part.text, WORDS_PER_DELTA)) {
          events.push({ type: 'thinking-delta', index, text });
        }
        if (part.signature !== undefined) events.push({ type: 'thinking-signature', index, signature: part.signature });
        break;
      case 'text':
        events.push({ type: 'text-start', index });
        for (const text of splitIntoWordChunks(part.text, WORDS_PER_DELTA)) events.push({ type: 'text-delta', index, text });
        break;
      case 'tool_call':
        events.push({ type: 'tool-call-start', index, id: part.id, name: part.name });
        for (const argumentsDelta of splitArguments(part.arguments)) {
          events.push({ type: 'tool-call-delta', index, argumentsDelta });
        }
        break;
    }
    events.push({ type: 'part-end', index });
  });
  events.push({
    type: 'finish',
    finishReason: response.finishReason,
    stopSequence: response.stopSequence,
    usage: response.usage,
  });
  return events;
}
