/**
 * The usage check's reader: every text a provider will show the model, read from the client's
 * body in its own wire format (the body a same-format provider receives as it is, unknown
 * fields included) and from the stored conversation behind `previous_response_id`.
 *
 * The reader walks the whole body and reads every string except those under the keys listed in
 * `usage-fields.ts` (request options, ids, discriminators, signatures and opaque bytes, which
 * the model is not shown as text). A field or item type a wire format gains later is therefore
 * read without a change here; `usage-texts.schema.test.ts` walks the wire schemas to keep the
 * list honest. Free-form JSON the model reads keys and all (tool parameter and output schemas,
 * tool-call input objects) is read as its JSON text. What cannot be read as text (images,
 * audio, files) is counted in `unread`.
 *
 * One text per piece the model reads as one: each message or input item (its strings joined by
 * line breaks), each tool, each other top-level field.
 */
import type { CanonicalMessage } from '../providers/canonical.js';
import type { ChatFormat } from '../providers/types.js';
import type { UsageCheckInput, UsageText, UsageTextRole } from './usage-rules.js';
import { CONVERSATION_FIELDS, JSON_TEXT_FIELDS, MEDIA_KINDS, MEDIA_TEXT_FIELDS, NOT_READ_FIELDS, SYSTEM_FIELDS, TOP_LEVEL_NOT_READ, type UnreadKind } from './usage-fields.js';

export type { UnreadKind } from './usage-fields.js';

/** What the reader found: the texts to check, and how many parts it could not read, by kind. */
export interface UsageReading extends UsageCheckInput {
  unread: Record<UnreadKind, number>;
}

/** Deeper than this, a value is read as its JSON text (bodies are depth-limited when parsed; this only guards recursion). */
const MAX_DEPTH = 200;

const TURN_ROLES: Record<string, UsageTextRole> = { system: 'system', developer: 'developer', user: 'user', assistant: 'assistant', tool: 'tool', function: 'tool' };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Who an element of a conversation comes from: its `role`, else (Responses items) its `type`. */
function roleOf(item: unknown): UsageTextRole {
  if (!isRecord(item)) return 'user';
  if (typeof item.role === 'string') return TURN_ROLES[item.role] ?? 'user';
  const type = typeof item.type === 'string' ? item.type : '';
  if (type.endsWith('_output') || type === 'mcp_approval_response') return 'tool';
  if (type === 'mcp_list_tools') return 'developer';
  if (type === 'reasoning' || type.endsWith('_call') || type === 'mcp_approval_request') return 'assistant';
  return 'user';
}

class Reader {
  readonly texts: UsageText[] = [];
  readonly unread: Record<UnreadKind, number> = { image: 0, audio: 0, file: 0 };
  private pieces: string[] = [];

  /** Reads `value` as one text of `role`. */
  unit(role: UsageTextRole, value: unknown, source: UsageText['source']): void {
    this.pieces = [];
    this.walk(value, 0);
    if (this.pieces.length === 0) return;
    const text = this.pieces.length === 1 ? this.pieces[0] : this.pieces.join('\n');
    this.texts.push(source === 'history' ? { role, text, source } : { role, text });
  }

  /** Each element of an array as its own text (a string or object: one text). */
  units(role: UsageTextRole | null, value: unknown, source: UsageText['source']): void {
    if (!Array.isArray(value)) return this.unit(role ?? 'user', value, source);
    for (const item of value) this.unit(role ?? roleOf(item), item, source);
  }

  private walk(value: unknown, depth: number): void {
    if (typeof value === 'string') {
      if (value !== '') this.pieces.push(value);
      return;
    }
    if (typeof value !== 'object' || value === null) return;
    if (depth > MAX_DEPTH) {
      this.pieces.push(JSON.stringify(value));
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value) this.walk(item, depth + 1);
      return;
    }
    const record = value as Record<string, unknown>;
    const type = typeof record.type === 'string' ? record.type : undefined;
    if (type !== undefined && Object.hasOwn(MEDIA_KINDS, type)) return this.media(record, MEDIA_KINDS[type], depth);
    // A text-typed source carries a document itself in `data` (any other `data` is bytes).
    if (type === 'text' && typeof record.data === 'string' && record.data !== '') this.pieces.push(record.data);
    for (const key in record) {
      if (NOT_READ_FIELDS.has(key)) continue;
      const child = record[key];
      if (JSON_TEXT_FIELDS.has(key) && isRecord(child)) this.pieces.push(JSON.stringify(child));
      else this.walk(child, depth + 1);
    }
  }

  /**
   * An image, audio clip or file: counted unread, and only its few text fields read (a
   * transcript, a file name, a document's title). An Anthropic document whose source is text
   * or content blocks is read like any other text.
   */
  private media(record: Record<string, unknown>, kind: UnreadKind, depth: number): void {
    const source = record.source;
    if (record.type === 'document' && isRecord(source) && (source.type === 'text' || source.type === 'content')) {
      this.walk(source.type === 'text' ? source.data : source.content, depth + 1);
    } else {
      this.unread[kind]++;
    }
    this.mediaTexts(record, depth);
  }

  private mediaTexts(value: unknown, depth: number): void {
    if (!isRecord(value) || depth > MAX_DEPTH) return;
    for (const key in value) {
      const child = value[key];
      if (typeof child === 'string' && MEDIA_TEXT_FIELDS.has(key) && child !== '') this.pieces.push(child);
      else if (isRecord(child)) this.mediaTexts(child, depth + 1);
    }
  }
}

/**
 * Every text the model will see in a chat-family request: `body` as the client sent it (in
 * `format`; compaction and count_tokens bodies too), after the conversation behind
 * `previous_response_id` (`history`, marked `source: 'history'`).
 */
export function readUsageTexts(format: ChatFormat, body: Record<string, unknown>, history?: readonly CanonicalMessage[]): UsageReading {
  const reader = new Reader();
  for (const message of history ?? []) reader.unit(TURN_ROLES[message.role] ?? 'user', message, 'history');
  for (const key in body) {
    if (TOP_LEVEL_NOT_READ.has(key)) continue;
    const value = body[key];
    if (key === CONVERSATION_FIELDS[format]) reader.units(typeof value === 'string' ? 'user' : null, value, 'request');
    else if (key === SYSTEM_FIELDS[format]) reader.unit('system', value, 'request');
    // A prompt template is read by its variables; its id and version name it.
    else if (format === 'responses' && key === 'prompt') reader.unit('developer', isRecord(value) ? value.variables : undefined, 'request');
    // Tools, functions, output formats, predictions, and fields a later API version adds.
    else reader.units('developer', value, 'request');
  }
  return { texts: reader.texts, unread: reader.unread };
}
