/**
 * `POST /v1/embeddings` (SPEC): inputs bounded before anything is held
 * (at most 2048, each within the model's input limit, 300,000 tokens in all),
 * `dimensions` only on models that declare it adjustable, billed per input
 * token (the provider's count when it reports one, else the gateway's o200k
 * count, which is also what the hold is).
 */
import { jsonAnswer, type JsonAnswer } from '../answers.js';
import { DEFAULT_EMBEDDING_MAX_INPUT_TOKENS } from '../catalog/catalog.schema.js';
import { GatewayError } from '../errors.js';
import type { OperationContext } from '../operations/routing.js';
import { runOperation } from '../operations/run-operation.js';
import {
  listEmbeddingInputs,
  MAX_EMBEDDING_REQUEST_TOKENS,
  type EmbeddingList,
  type EmbeddingRequest,
} from '../providers/openai/openai-embeddings.wire.js';
import { countTextTokens } from '../tokenizer.js';

/** Vector size of a model whose catalog entry declares none (OpenAI's small models). */
export const DEFAULT_EMBEDDING_DIMENSIONS = 1536;

/** The vector size a request gets: its `dimensions` where the model allows it, else the model's own. */
function resolveDimensions(modelId: string, declared: number | undefined, adjustable: boolean, requested: number | null | undefined): number {
  const own = declared ?? DEFAULT_EMBEDDING_DIMENSIONS;
  if (requested === undefined || requested === null) return own;
  if (!adjustable) {
    throw new GatewayError('UNSUPPORTED_FEATURE', `The model '${modelId}' has a fixed size of ${own} dimensions; 'dimensions' is not supported.`, { param: 'dimensions' });
  }
  if (requested > own) {
    throw new GatewayError('INVALID_REQUEST', `Invalid value for 'dimensions': at most ${own} on '${modelId}', got ${requested}.`, { param: 'dimensions' });
  }
  return requested;
}

/**
 * Tokens of every input, refusing an input over the model's limit (naming
 * it: `input`, or `input[3]` in a list) and a request over the total. Exact
 * o200k counts (each input's first 64 KiB; a longer input is over any limit
 * anyway), and the count stops at the first input past the total.
 */
function countInputTokens(inputs: ReadonlyArray<string | readonly number[]>, listed: boolean, maxInputTokens: number): number {
  let total = 0;
  inputs.forEach((input, index) => {
    const tokens = typeof input === 'string' ? countTextTokens(input) : input.length;
    const param = listed ? `input[${index}]` : 'input';
    if (tokens > maxInputTokens) {
      throw new GatewayError('INVALID_REQUEST', `Invalid value for '${param}': ${tokens} tokens, over the model's limit of ${maxInputTokens} per input.`, { param });
    }
    total += tokens;
    if (total > MAX_EMBEDDING_REQUEST_TOKENS) {
      throw new GatewayError('INVALID_REQUEST', `Invalid value for 'input': more than ${MAX_EMBEDDING_REQUEST_TOKENS} tokens in one request.`, { param: 'input' });
    }
  });
  return total;
}

export function createEmbeddings(context: OperationContext, body: EmbeddingRequest): Promise<JsonAnswer<EmbeddingList>> {
  return runOperation(context, {
    endpoint: '/v1/embeddings',
    operation: 'embeddings',
    model: body.model,
    plan: (model) => {
      const dimensions = resolveDimensions(model.id, model.entry.dimensions, model.entry.dimensionsAdjustable === true, body.dimensions);
      const inputs = listEmbeddingInputs(body.input);
      const listed = Array.isArray(body.input) && (body.input.length === 0 || typeof body.input[0] !== 'number');
      const counted = countInputTokens(inputs, listed, model.entry.maxInputTokens ?? DEFAULT_EMBEDDING_MAX_INPUT_TOKENS);
      return {
        hold: { inputTokens: counted, outputTokens: 0 },
        stream: false,
        call: async ({ deployment, adapter, transport }) => {
          const answer = await adapter.embed(transport, deployment.provider, {
            body: { ...body, model: deployment.upstreamModel },
            inputs,
            dimensions,
            encodingFormat: body.encoding_format ?? 'float',
          });
          const provider = deployment.provider.id;
          return {
            answer: { ...jsonAnswer(answer.body, { headers: {}, provider }), ...(answer.raw !== undefined ? { raw: answer.raw } : {}) },
            usage: { inputTokens: answer.promptTokens ?? counted, outputTokens: 0 },
          };
        },
      };
    },
  });
}
