/**
 * The prompt tokens of a whole request, estimated before it goes upstream
 * (credit holds, `count_tokens` without a provider's count): every text
 * counted with the o200k tokenizer (`tokenizer.ts`) within one byte budget,
 * plus the framing of messages, tools and schemas, and fixed estimates for
 * images and parts the gateway does not know.
 */
import type {
  CanonicalImagePart,
  CanonicalMessage,
  CanonicalRequest,
  CanonicalTool,
  CanonicalUnknownPart,
} from './canonical.js';
import { countTokensWithin, TOKEN_COUNT_LIMITS, type ExactBudget } from '../tokenizer.js';

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

function estimatePartTokens(part: CanonicalMessage['content'][number], budget: ExactBudget): number {
  switch (part.type) {
    case 'text':
      return countTokensWithin(part.text, budget);
    case 'image':
      return estimateImageTokens(part);
    case 'thinking':
      // Signatures and redacted data are opaque to the model's context window.
      return countTokensWithin(part.text, budget);
    case 'tool_call':
      return TOKEN_ESTIMATE.perToolCall + countTokensWithin(part.name, budget) + countTokensWithin(part.arguments, budget);
    case 'unknown':
      return estimateUnknownTokens(part);
  }
}

function estimateMessageTokens(message: CanonicalMessage, budget: ExactBudget): number {
  let total = TOKEN_ESTIMATE.perMessage;
  for (const part of message.content) total += estimatePartTokens(part, budget);
  if (message.role !== 'system' && message.name !== undefined) {
    total += TOKEN_ESTIMATE.perName + countTokensWithin(message.name, budget);
  }
  return total;
}

function estimateToolTokens(tool: CanonicalTool, budget: ExactBudget): number {
  return (
    TOKEN_ESTIMATE.perTool +
    countTokensWithin(tool.name, budget) +
    countTokensWithin(tool.description ?? '', budget) +
    countTokensWithin(JSON.stringify(tool.parameters) ?? '', budget)
  );
}

/**
 * A fast estimate of the prompt size of a request in `o200k_base` tokens:
 * system prompt, every message's content, tool calls and results, tool
 * definitions and the structured-output schema, with the per-message framing
 * of {@link TOKEN_ESTIMATE}. The texts are counted exactly up to
 * {@link TOKEN_COUNT_LIMITS}`.exactRequestBytes` in all; past that they count
 * as their UTF-8 length, so a huge prompt is over-estimated (never
 * under-estimated) and costs little to estimate.
 */
export function estimateRequestTokens(request: CanonicalRequest): number {
  const budget: ExactBudget = { bytes: TOKEN_COUNT_LIMITS.exactRequestBytes };
  let total = TOKEN_ESTIMATE.replyPriming;
  if (request.system && request.system.length > 0) {
    total += TOKEN_ESTIMATE.perMessage;
    for (const part of request.system) total += countTokensWithin(part.text, budget);
  }
  for (const message of request.messages) total += estimateMessageTokens(message, budget);
  if (request.tools && request.tools.length > 0) {
    total += TOKEN_ESTIMATE.toolsPreamble;
    for (const tool of request.tools) total += estimateToolTokens(tool, budget);
  }
  if (request.responseFormat?.type === 'json_schema') {
    total += TOKEN_ESTIMATE.responseSchema + countTokensWithin(JSON.stringify(request.responseFormat.schema) ?? '', budget);
  }
  return total;
}
