/**
 * Token counting for quotas, usage of the mock provider and prompt-size checks.
 *
 * Counts use the `o200k_base` byte-pair encoding (GPT-4o and later). Other
 * providers tokenize differently, so for them these numbers are estimates; the
 * gateway bills with the provider's reported usage whenever it has one.
 *
 * The rank table is js-tiktoken's `o200k_base` (the same data `js-tiktoken/lite`
 * is built from), loaded on first use or at startup through
 * {@link warmTokenizer}. We merge against it ourselves rather than through
 * `Tiktoken`: its constructor takes about a second, each `encode` call pays a
 * few microseconds of setup (a new RegExp and Sets) per call, and its merge is
 * quadratic with string joins. Here a table keyed by the raw bytes (as a
 * latin1 string) loads in about 0.2 s, ASCII pieces are looked up without any
 * conversion, and very long pieces are merged in bounded slices. The ids are
 * the same as js-tiktoken's (server/tokenizer.test.ts compares them).
 */
import { createRequire } from 'node:module';
import type { TiktokenBPE } from 'js-tiktoken/lite';
import type {
  CanonicalImagePart,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalTool,
  CanonicalUnknownPart,
} from './providers/canonical.js';

/**
 * Constants of {@link estimateRequestTokens}.
 *
 * The message framing follows OpenAI's chat format as documented in the
 * cookbook (`<|start|>{role}<|message|>{content}<|end|>`).
 * @see https://cookbook.openai.com/examples/how_to_count_tokens_with_tiktoken
 * @see https://platform.openai.com/docs/guides/images-vision#calculating-costs
 */
export const TOKEN_ESTIMATE = {
  /** Framing of every message (and of the top-level system prompt). */
  perMessage: 3,
  /** Extra token when a message carries a participant `name` (plus the name's own tokens). */
  perName: 1,
  /** Every answer is primed with `<|start|>assistant<|message|>`. */
  replyPriming: 3,
  /** Framing of each tool call in an assistant message, plus its name and arguments. */
  perToolCall: 4,
  /** The block that declares the tools (`namespace functions { … }` in OpenAI's rendering), once. */
  toolsPreamble: 12,
  /** Framing of each tool definition, plus its name, description and JSON schema text. */
  perTool: 8,
  /** Framing of a structured-output schema, plus its JSON text. */
  responseSchema: 8,
  /** An image sent with `detail: "low"` (OpenAI's fixed price). */
  imageLowDetail: 85,
  /** OpenAI's base cost of a high-detail image, to which every 512-px tile adds `imageTile`. */
  imageBase: 85,
  imageTile: 170,
  /**
   * Tiles assumed for an image by URL, whose size we do not fetch: 4 tiles is a
   * 1024×1024 picture, 765 tokens in all.
   */
  imageUrlTiles: 4,
  /**
   * Inline (base64 or `data:` URL) images: one tile per this many decoded
   * bytes, since a compressed 512×512 tile is typically 30–60 KB of JPEG or PNG.
   */
  imageBytesPerTile: 48 * 1024,
  /** OpenAI never bills more than 8 tiles (768×2048 after its resizing). */
  imageMaxTiles: 8,
  /** Parts we cannot read (documents, audio): a plain character-count estimate of their JSON. */
  unknownCharsPerToken: 4,
} as const;

/**
 * Pieces longer than this many bytes are merged in slices of this size: the
 * merge is quadratic in the piece length, and such pieces (runs of one
 * character, long identifiers, inline blobs) are rare in prose. A slice
 * boundary may cost a merge, so the count of such a piece can be a little high.
 */
const MAX_PIECE_BYTES = 128;

interface RankTable {
  /** Token bytes (one char per byte, latin1) → rank, which is the token id. */
  ranks: Map<string, number>;
  /** Token id → its bytes, as in `ranks`. */
  bytesById: string[];
  /** The encoding's pre-tokenizer (global, unicode). */
  splitPattern: RegExp;
}

let table: RankTable | null = null;

function loadRankTable(): RankTable {
  if (table) return table;
  // A synchronous, lazy load: the rank file is 2.3 MB of JS that we do not
  // want to parse at import time, and counting must stay synchronous.
  const require = createRequire(import.meta.url);
  const bpe = require('js-tiktoken/ranks/o200k_base') as TiktokenBPE;
  const ranks = new Map<string, number>();
  const bytesById: string[] = [];
  // `bpe_ranks` lines are `<name> <first rank> <base64 token> <base64 token> …`.
  for (const line of bpe.bpe_ranks.split('\n')) {
    if (!line) continue;
    const fields = line.split(' ');
    const offset = Number.parseInt(fields[1], 10);
    for (let i = 2; i < fields.length; i++) {
      const bytes = atob(fields[i]);
      ranks.set(bytes, offset + i - 2);
      bytesById[offset + i - 2] = bytes;
    }
  }
  table = { ranks, bytesById, splitPattern: new RegExp(bpe.pat_str, 'gu') };
  return table;
}

/** Loads the rank table now (about 0.2 s) instead of on the first request. */
export function warmTokenizer(): void {
  loadRankTable();
}

// eslint-disable-next-line no-control-regex -- matches the ASCII range on purpose
const NON_ASCII = /[^\x00-\x7f]/;

/** A piece's UTF-8 bytes as a latin1 string, the key form of the rank table. */
function toByteString(piece: string): string {
  return NON_ASCII.test(piece) ? Buffer.from(piece, 'utf8').toString('latin1') : piece;
}

function rankOf(ranks: Map<string, number>, bytes: string, start: number, end: number): number {
  const rank = ranks.get(bytes.slice(start, end));
  return rank === undefined ? Number.POSITIVE_INFINITY : rank;
}

/**
 * Byte-pair merge of one piece: repeatedly join the adjacent pair of parts
 * whose concatenation has the lowest rank (leftmost on ties) until no pair is
 * in the table. Returns the part boundaries, `[0, …, bytes.length]`.
 */
function mergeBounds(ranks: Map<string, number>, bytes: string): number[] {
  const length = bytes.length;
  const bounds: number[] = [];
  for (let i = 0; i <= length; i++) bounds.push(i);
  // pairRanks[i] is the rank of parts i and i + 1 joined.
  const pairRanks: number[] = [];
  for (let i = 0; i < length - 1; i++) pairRanks.push(rankOf(ranks, bytes, i, i + 2));
  while (pairRanks.length > 0) {
    let best = 0;
    for (let i = 1; i < pairRanks.length; i++) {
      if (pairRanks[i] < pairRanks[best]) best = i;
    }
    if (pairRanks[best] === Number.POSITIVE_INFINITY) break;
    bounds.splice(best + 1, 1);
    pairRanks.splice(best, 1);
    // The joined part spans bounds[best]..bounds[best + 1]; refresh the pairs that touch it.
    if (best < pairRanks.length) pairRanks[best] = rankOf(ranks, bytes, bounds[best], bounds[best + 2]);
    if (best > 0) pairRanks[best - 1] = rankOf(ranks, bytes, bounds[best - 1], bounds[best + 1]);
  }
  return bounds;
}

/** Calls `onSlice` with each slice of a text (as bytes) that is merged on its own. */
function forEachMergeUnit(state: RankTable, text: string, onSlice: (bytes: string) => void): void {
  const pattern = state.splitPattern;
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const bytes = toByteString(match[0]);
    if (bytes.length <= MAX_PIECE_BYTES) {
      onSlice(bytes);
      continue;
    }
    for (let start = 0; start < bytes.length; start += MAX_PIECE_BYTES) {
      onSlice(bytes.slice(start, start + MAX_PIECE_BYTES));
    }
  }
}

/**
 * Number of `o200k_base` tokens of a text. Special-token markers such as
 * `<|endoftext|>` in user text are counted as ordinary text.
 */
export function countTextTokens(text: string): number {
  if (text.length === 0) return 0;
  const state = loadRankTable();
  const { ranks } = state;
  let total = 0;
  forEachMergeUnit(state, text, (bytes) => {
    total += bytes.length <= 1 || ranks.has(bytes) ? 1 : mergeBounds(ranks, bytes).length - 1;
  });
  return total;
}

/** The `o200k_base` token ids of a text (special-token markers encoded as ordinary text). */
export function encodeText(text: string): number[] {
  const state = loadRankTable();
  const { ranks } = state;
  const ids: number[] = [];
  forEachMergeUnit(state, text, (bytes) => {
    const whole = ranks.get(bytes);
    if (whole !== undefined) {
      ids.push(whole);
      return;
    }
    const bounds = mergeBounds(ranks, bytes);
    for (let i = 0; i + 1 < bounds.length; i++) {
      // Every single byte is a token, so each merged part has a rank.
      ids.push(ranks.get(bytes.slice(bounds[i], bounds[i + 1])) ?? 0);
    }
  });
  return ids;
}

/** The text of a sequence of token ids; a character cut between tokens becomes U+FFFD. */
export function decodeTokens(ids: readonly number[]): string {
  const { bytesById } = loadRankTable();
  let bytes = '';
  for (const id of ids) bytes += bytesById[id] ?? '';
  return Buffer.from(bytes, 'latin1').toString('utf8');
}

/**
 * The prefix of `text` made of its first `maxTokens` tokens, never counting
 * more than `maxTokens` on its own. A character split between two tokens is
 * dropped rather than left half-encoded.
 */
export function truncateTextToTokens(text: string, maxTokens: number): string {
  if (maxTokens <= 0) return '';
  const ids = encodeText(text);
  if (ids.length <= maxTokens) return text;
  // A cut inside a piece can re-tokenize differently on its own, hence the check.
  for (let kept = maxTokens; kept > 0; kept--) {
    const prefix = decodeTokens(ids.slice(0, kept)).replace(/\uFFFD+$/u, '');
    if (countTextTokens(prefix) <= maxTokens) return prefix;
  }
  return '';
}

function estimateImageTokens(part: CanonicalImagePart): number {
  if (part.detail === 'low') return TOKEN_ESTIMATE.imageLowDetail;
  let base64Length: number | null = null;
  if (part.source.kind === 'base64') {
    base64Length = part.source.data.length;
  } else if (part.source.url.startsWith('data:')) {
    const comma = part.source.url.indexOf(',');
    base64Length = comma === -1 ? 0 : part.source.url.length - comma - 1;
  }
  const tiles =
    base64Length === null
      ? TOKEN_ESTIMATE.imageUrlTiles
      : Math.min(
          TOKEN_ESTIMATE.imageMaxTiles,
          Math.max(1, Math.ceil((base64Length * 3) / 4 / TOKEN_ESTIMATE.imageBytesPerTile)),
        );
  return TOKEN_ESTIMATE.imageBase + tiles * TOKEN_ESTIMATE.imageTile;
}

function estimateUnknownTokens(part: CanonicalUnknownPart): number {
  let json: string | undefined;
  try {
    json = JSON.stringify(part.raw);
  } catch {
    json = undefined;
  }
  return json === undefined ? 0 : Math.ceil(json.length / TOKEN_ESTIMATE.unknownCharsPerToken);
}

function estimatePartTokens(part: CanonicalMessage['content'][number]): number {
  switch (part.type) {
    case 'text':
      return countTextTokens(part.text);
    case 'image':
      return estimateImageTokens(part);
    case 'thinking':
      // Signatures and redacted data are opaque to the model's context window.
      return countTextTokens(part.text);
    case 'tool_call':
      return TOKEN_ESTIMATE.perToolCall + countTextTokens(part.name) + countTextTokens(part.arguments);
    case 'unknown':
      return estimateUnknownTokens(part);
  }
}

function estimateMessageTokens(message: CanonicalMessage): number {
  let total = TOKEN_ESTIMATE.perMessage;
  for (const part of message.content) total += estimatePartTokens(part);
  if (message.role !== 'system' && message.name !== undefined) {
    total += TOKEN_ESTIMATE.perName + countTextTokens(message.name);
  }
  return total;
}

function estimateToolTokens(tool: CanonicalTool): number {
  return (
    TOKEN_ESTIMATE.perTool +
    countTextTokens(tool.name) +
    countTextTokens(tool.description ?? '') +
    countTextTokens(JSON.stringify(tool.parameters) ?? '')
  );
}

/**
 * A fast estimate of the prompt size of a request in `o200k_base` tokens:
 * system prompt, every message's content, tool calls and results, tool
 * definitions and the structured-output schema, with the per-message framing
 * of {@link TOKEN_ESTIMATE}.
 */
export function estimateRequestTokens(request: CanonicalRequest): number {
  let total = TOKEN_ESTIMATE.replyPriming;
  if (request.system && request.system.length > 0) {
    total += TOKEN_ESTIMATE.perMessage;
    for (const part of request.system) total += countTextTokens(part.text);
  }
  for (const message of request.messages) total += estimateMessageTokens(message);
  if (request.tools && request.tools.length > 0) {
    total += TOKEN_ESTIMATE.toolsPreamble;
    for (const tool of request.tools) total += estimateToolTokens(tool);
  }
  if (request.responseFormat?.type === 'json_schema') {
    total += TOKEN_ESTIMATE.responseSchema + countTextTokens(JSON.stringify(request.responseFormat.schema) ?? '');
  }
  return total;
}
