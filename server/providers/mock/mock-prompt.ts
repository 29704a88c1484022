/**
 * What the mock provider reads from a prompt: a stable fingerprint, a seeded
 * pseudo-random source, the last user turn and the words in it. Everything is
 * a pure function of the request, so the same prompt always gives the same
 * answer.
 */
import type { CanonicalMessage, CanonicalRequest, CanonicalUserPart } from '../canonical.js';

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * The mock reads at most this many characters of a text: it answers from
 * the start of a prompt, and must stay cheap (a few milliseconds) on a huge one.
 */
export const MOCK_READ_CHARS = 16 * 1024;
/** Texts longer than this are fingerprinted by their head, their tail and their length. */
const HASHED_CHARS = 32 * 1024;

function fnv(text: string, from: number, to: number, hash: number): number {
  let value = hash;
  for (let i = from; i < to; i++) {
    value ^= text.charCodeAt(i);
    value = Math.imul(value, FNV_PRIME);
  }
  return value;
}

/** 32-bit FNV-1a of a string (UTF-16 code units), continuing from `hash`; a long text by its head, tail and length. */
export function hashText(text: string, hash: number = FNV_OFFSET): number {
  if (text.length <= 2 * HASHED_CHARS) return fnv(text, 0, text.length, hash) >>> 0;
  const head = fnv(text, 0, HASHED_CHARS, hash);
  const tail = fnv(text, text.length - HASHED_CHARS, text.length, head);
  return fnv(String(text.length), 0, String(text.length).length, tail) >>> 0;
}

/** The first {@link MOCK_READ_CHARS} characters of a text, never cutting a surrogate pair. */
export function readableText(text: string): string {
  if (text.length <= MOCK_READ_CHARS) return text;
  const code = text.charCodeAt(MOCK_READ_CHARS - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? MOCK_READ_CHARS - 1 : MOCK_READ_CHARS);
}

/** A hash as 8 lowercase hex digits. */
export function toHex(hash: number): string {
  return hash.toString(16).padStart(8, '0');
}

/** A deterministic generator of numbers in [0, 1) (mulberry32). */
export function createRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = Math.imul(state ^ (state >>> 15), state | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

/** A deterministic pick from a non-empty list. */
export function pickFrom<T>(items: readonly T[], random: () => number): T {
  return items[Math.floor(random() * items.length) % items.length];
}

/** The text parts of a message's content, joined by blank lines. */
export function textOfParts(parts: readonly { type: string; text?: string }[]): string {
  const texts: string[] = [];
  for (const part of parts) {
    if (part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
  }
  return texts.join('\n\n');
}

function hashUserPart(part: CanonicalUserPart, hash: number): number {
  switch (part.type) {
    case 'text':
      return hashText(part.text, hash);
    case 'image':
      // Hashing a large inline image in full buys nothing: its head and size tell images apart well enough.
      if (part.source.kind === 'url') return hashText(part.source.url.slice(0, 256), hashText(String(part.source.url.length), hash));
      return hashText(part.source.data.slice(0, 256), hashText(String(part.source.data.length), hash));
    case 'unknown':
      return hashText(part.origin, hash);
  }
}

function hashMessage(message: CanonicalMessage, hash: number): number {
  let value = hashText(`\u0000${message.role}\u0000`, hash);
  switch (message.role) {
    case 'system':
      for (const part of message.content) value = hashText(part.text, value);
      return value;
    case 'user':
    case 'tool':
      for (const part of message.content) value = hashUserPart(part, value);
      return value;
    case 'assistant':
      for (const part of message.content) {
        if (part.type === 'text' || part.type === 'thinking') value = hashText(part.text, value);
        else if (part.type === 'tool_call') value = hashText(`${part.name}\u0000${part.arguments}`, value);
      }
      return value;
  }
}

/**
 * Fingerprint of what a model would see: system prompt, messages, tool names,
 * response format and seed. The model id is left out so that every mock model
 * answers a prompt alike.
 */
export function fingerprintPrompt(request: CanonicalRequest): number {
  let hash = FNV_OFFSET;
  for (const part of request.system ?? []) hash = hashText(part.text, hash);
  for (const message of request.messages) hash = hashMessage(message, hash);
  for (const tool of request.tools ?? []) hash = hashText(`\u0001${tool.name}`, hash);
  if (request.responseFormat) hash = hashText(`\u0002${request.responseFormat.type}`, hash);
  if (request.seed !== undefined) hash = hashText(`\u0003${request.seed}`, hash);
  return hash;
}

/** Text of the last user message, or `''` when there is none. */
export function lastUserText(request: CanonicalRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i--) {
    const message = request.messages[i];
    if (message.role === 'user') return readableText(textOfParts(message.content));
  }
  return '';
}

const WORD = /[\p{L}\p{N}][\p{L}\p{N}'’]*/gu;

/** The words of a text, in order (letters and digits, apostrophes kept inside). */
export function wordsOf(text: string): string[] {
  return text.match(WORD) ?? [];
}

/** Words too common to name a tool or to stand for the subject of a prompt. */
export const COMMON_WORDS: ReadonlySet<string> = new Set([
  'a', 'about', 'add', 'all', 'an', 'and', 'any', 'are', 'as', 'at', 'be', 'by', 'call', 'can', 'could',
  'create', 'data', 'delete', 'do', 'does', 'fetch', 'for', 'from', 'get', 'give', 'has', 'have', 'hello',
  'hi', 'how', 'i', 'if', 'in', 'info', 'is', 'it', 'item', 'items', 'its', 'just', 'list', 'make', 'me',
  'my', 'new', 'no', 'not', 'of', 'on', 'or', 'please', 'read', 'remove', 'run', 'set', 'show', 'so',
  'some', 'tell', 'that', 'the', 'their', 'them', 'then', 'there', 'these', 'this', 'to', 'tool', 'tools',
  'update', 'use', 'value', 'values', 'was', 'we', 'what', "what's", 'when', 'where', 'which', 'who',
  'why', 'will', 'with', 'would', 'write', 'you', 'your',
]);

/**
 * The lowercase words of an identifier, split on `_`, `-`, `.`, spaces and
 * camelCase (`getHTTPStatus` → `get`, `http`, `status`).
 */
export function splitIdentifier(name: string): string[] {
  return name
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 0)
    .map((word) => word.toLowerCase());
}

/**
 * Whether a text mentions a tool: its full name, or one of the words of its
 * name that is at least 3 letters long and not a {@link COMMON_WORDS} word
 * (`get_weather` ← "what's the weather in Paris?"). A plural `s` is tolerated.
 */
export function mentionsTool(text: string, toolName: string): boolean {
  const lower = text.toLowerCase();
  if (toolName.length >= 3 && lower.includes(toolName.toLowerCase())) return true;
  const words = new Set(wordsOf(lower));
  for (const word of splitIdentifier(toolName)) {
    if (word.length < 3 || COMMON_WORDS.has(word)) continue;
    if (words.has(word) || words.has(`${word}s`) || words.has(`${word}es`)) return true;
    if (word.endsWith('s') && words.has(word.slice(0, -1))) return true;
  }
  return false;
}

/**
 * Capitalised words of a text that are not common words, those in the middle
 * of a sentence first ("What is the weather in Paris?" → `Paris`).
 */
export function properNounsOf(text: string): string[] {
  const inside: string[] = [];
  const atStart: string[] = [];
  let sentenceStart = true;
  for (const match of text.matchAll(/[\p{L}\p{N}][\p{L}\p{N}'’-]*|[.!?\n]/gu)) {
    const token = match[0];
    if (/^[.!?\n]$/u.test(token)) {
      sentenceStart = true;
      continue;
    }
    const word = token.replace(/['’]s$/u, '');
    if (/^\p{Lu}[\p{L}\p{N}-]+$/u.test(word) && !COMMON_WORDS.has(word.toLowerCase())) {
      const list = sentenceStart ? atStart : inside;
      if (!list.includes(word)) list.push(word);
    }
    sentenceStart = false;
  }
  return [...inside, ...atStart.filter((word) => !inside.includes(word))];
}

/** Lowercase words of at least 4 letters that are not common words, without repeats. */
export function contentWordsOf(text: string): string[] {
  const words: string[] = [];
  for (const word of wordsOf(text.toLowerCase())) {
    const clean = word.replace(/['’]s$/u, '');
    if (clean.length >= 4 && /^\p{L}+$/u.test(clean) && !COMMON_WORDS.has(clean) && !words.includes(clean)) {
      words.push(clean);
    }
  }
  return words;
}

/**
 * The first `count` words of a text as a one-line excerpt, each word cut to
 * 24 characters, with `…` when words were left out.
 */
export function excerptOf(text: string, count: number): string {
  const words = text.split(/\s+/u).filter((word) => word.length > 0);
  const kept = words.slice(0, count).map((word) => {
    const characters = Array.from(word);
    return characters.length > 24 ? `${characters.slice(0, 24).join('')}…` : word;
  });
  return kept.join(' ') + (words.length > count ? '…' : '');
}
