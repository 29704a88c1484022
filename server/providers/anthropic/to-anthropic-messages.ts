/**
 * Canonical messages → Anthropic message turns and blocks, for `toAnthropicRequest` (whose
 * module comment lists the choices: tool results first in a user turn, consecutive turns of a
 * role merged, unsigned thinking dropped, tool ids made Anthropic-safe).
 */
import type {
  BridgeReport,
  CanonicalAssistantPart,
  CanonicalImageSource,
  CanonicalMessage,
  CanonicalTextPart,
  CanonicalUnknownPart,
  CanonicalUserPart,
} from '../canonical.js';

type Block = Record<string, unknown>;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Anthropic tool ids allow letters, digits, `_` and `-` only; some providers use `.` or `:`. */
export function toAnthropicToolId(id: string): string {
  return id.replace(/[^a-zA-Z0-9_-]/g, '_');
}

function toTextBlock(part: CanonicalTextPart): Block {
  const block: Block = { type: 'text', text: part.text };
  if (part.cacheControl !== undefined) block.cache_control = part.cacheControl;
  return block;
}

export function toTextBlocks(parts: CanonicalTextPart[]): Block[] {
  return parts.filter((part) => part.text !== '').map(toTextBlock);
}

/** A single plain text block is sent as a string, as clients usually do. */
export function collapseText(blocks: Block[]): string | Block[] {
  if (blocks.length === 1 && blocks[0].type === 'text' && Object.keys(blocks[0]).length === 2) {
    return blocks[0].text as string;
  }
  return blocks;
}

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*?)(;base64)?,(.*)$/s;

function toImageSource(source: CanonicalImageSource): Block {
  if (source.kind === 'base64') return { type: 'base64', media_type: source.mediaType, data: source.data };
  const match = DATA_URL.exec(source.url);
  if (match === null) return { type: 'url', url: source.url };
  const mediaType = match[1] || 'application/octet-stream';
  const data = match[3] ? match[4] : Buffer.from(decodeURIComponent(match[4]), 'utf8').toString('base64');
  return { type: 'base64', media_type: mediaType, data };
}

/** An unknown part travels only back to the format it came from. */
function fromMessagesOrigin(part: CanonicalUnknownPart): Block | undefined {
  return part.origin.startsWith('messages:') && isRecord(part.raw) ? part.raw : undefined;
}

function toUserBlock(part: CanonicalUserPart, path: string, report: BridgeReport): Block | undefined {
  switch (part.type) {
    case 'text':
      return part.text === '' ? undefined : toTextBlock(part);
    case 'image':
      return { type: 'image', source: toImageSource(part.source) };
    case 'unknown': {
      const block = fromMessagesOrigin(part);
      if (block === undefined) report.dropped.push(path);
      return block;
    }
  }
}

function toToolInput(text: string, path: string, report: BridgeReport): Block {
  if (text.trim() === '') return {};
  try {
    const value: unknown = JSON.parse(text);
    if (isRecord(value)) return value;
  } catch {
    // Reported below: Anthropic needs an object.
  }
  report.approximated.push(`${path}.arguments`);
  return {};
}

function toAssistantBlock(part: CanonicalAssistantPart, path: string, report: BridgeReport): Block | undefined {
  switch (part.type) {
    case 'text':
      return part.text === '' ? undefined : toTextBlock(part);
    case 'thinking':
      if (part.redactedData !== undefined) return { type: 'redacted_thinking', data: part.redactedData };
      if (part.signature) return { type: 'thinking', thinking: part.text, signature: part.signature };
      report.dropped.push(path);
      return undefined;
    case 'tool_call':
      return {
        type: 'tool_use',
        id: toAnthropicToolId(part.id),
        name: part.name,
        input: toToolInput(part.arguments, path, report),
      };
    case 'unknown': {
      const block = fromMessagesOrigin(part);
      if (block === undefined) report.dropped.push(path);
      return block;
    }
  }
}

function toToolResultBlock(message: Extract<CanonicalMessage, { role: 'tool' }>, index: number, report: BridgeReport): Block {
  const block: Block = { type: 'tool_result', tool_use_id: toAnthropicToolId(message.toolCallId) };
  const content: Block[] = [];
  message.content.forEach((part, j) => {
    const converted = toUserBlock(part, `messages[${index}].content[${j}]`, report);
    if (converted !== undefined) content.push(converted);
  });
  if (content.length > 0) block.content = collapseText(content);
  if (message.isError !== undefined) block.is_error = message.isError;
  return block;
}

interface Turn {
  role: 'user' | 'assistant' | 'system';
  /** `tool_result` blocks, which Anthropic wants first in a user turn. */
  results: Block[];
  blocks: Block[];
}

export function toAnthropicMessages(messages: CanonicalMessage[], start: number, report: BridgeReport): Block[] {
  const turns: Turn[] = [];
  const turnFor = (role: Turn['role']): Turn => {
    const last = turns[turns.length - 1];
    if (last !== undefined && last.role === role) return last;
    const turn: Turn = { role, results: [], blocks: [] };
    turns.push(turn);
    return turn;
  };

  for (let i = start; i < messages.length; i++) {
    const message = messages[i];
    const path = `messages[${i}]`;
    switch (message.role) {
      case 'system': {
        const blocks = toTextBlocks(message.content);
        if (blocks.length > 0) turnFor('system').blocks.push(...blocks);
        break;
      }
      case 'tool':
        turnFor('user').results.push(toToolResultBlock(message, i, report));
        break;
      case 'user': {
        if (message.name !== undefined) report.dropped.push(`${path}.name`);
        const blocks = message.content
          .map((part, j) => toUserBlock(part, `${path}.content[${j}]`, report))
          .filter((block) => block !== undefined);
        if (blocks.length > 0) turnFor('user').blocks.push(...blocks);
        break;
      }
      case 'assistant': {
        if (message.name !== undefined) report.dropped.push(`${path}.name`);
        const blocks = message.content
          .map((part, j) => toAssistantBlock(part, `${path}.content[${j}]`, report))
          .filter((block) => block !== undefined);
        if (blocks.length > 0) turnFor('assistant').blocks.push(...blocks);
        break;
      }
    }
  }

  return turns.map((turn) => ({ role: turn.role, content: collapseText([...turn.results, ...turn.blocks]) }));
}
