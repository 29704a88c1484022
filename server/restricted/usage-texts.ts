/**
 * Every text the model will see, read from the canonical request: the system prompt (and
 * Responses `instructions`), each turn's text, reasoning the client sends back, tool-call
 * arguments, tool results, tool descriptions, and the text of content parts no bridge models
 * (documents given as text). A conversation rebuilt from `previous_response_id` is already part
 * of the canonical request's messages.
 */
import type { CanonicalRequest, CanonicalUnknownPart } from '../providers/canonical.js';
import type { UsageCheckInput, UsageTextRole } from '../moderation/usage-rules.js';

/** How deep the text of an unknown part is looked for. */
const UNKNOWN_PART_DEPTH = 6;
/** Keys whose string values are text a model reads (Anthropic text documents, OpenAI input text). */
const TEXT_KEYS = new Set(['text', 'content', 'title', 'context']);

/** Strings under text-like keys of an unmodelled part (a text document's `source.data` included). */
function textsOfUnknown(part: CanonicalUnknownPart): string[] {
  const found: string[] = [];
  const visit = (value: unknown, key: string | null, depth: number): void => {
    if (depth > UNKNOWN_PART_DEPTH) return;
    if (typeof value === 'string') {
      if (key !== null && TEXT_KEYS.has(key)) found.push(value);
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value) visit(item, key, depth + 1);
      return;
    }
    if (value !== null && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      // A text-typed source carries the document itself in `data` (base64 sources are not text).
      if (record.type === 'text' && typeof record.data === 'string') found.push(record.data);
      for (const [name, child] of Object.entries(record)) visit(child, name, depth + 1);
    }
  };
  visit(part.raw, null, 0);
  return found;
}

export function collectUsageTexts(request: CanonicalRequest): UsageCheckInput {
  const texts: UsageCheckInput['texts'] = [];
  const push = (role: UsageTextRole, text: string): void => {
    if (text !== '') texts.push({ role, text });
  };
  for (const part of request.system ?? []) push('system', part.text);
  for (const tool of request.tools ?? []) if (tool.description) push('developer', tool.description);
  for (const message of request.messages) {
    const role: UsageTextRole = message.role;
    for (const part of message.content) {
      switch (part.type) {
        case 'text':
        case 'thinking':
          push(role, part.text);
          break;
        case 'tool_call':
          push(role, part.arguments);
          break;
        case 'unknown':
          for (const text of textsOfUnknown(part)) push(role, text);
          break;
        case 'image':
          break;
      }
    }
  }
  return { texts };
}
