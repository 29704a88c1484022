/**
 * Embeddings on the offline `mock` provider: the deterministic feature-hashing
 * vectors of `embedMock` (texts that share words are closer), in either wire
 * form. Token-id inputs are decoded with the o200k tokenizer first, and usage
 * counts o200k tokens, as OpenAI's embedding models do.
 */
import { encodeEmbeddingBase64, toFloatArray } from '../../media/embedding-encoding.js';
import { countTextTokens, decodeTokens } from '../../tokenizer.js';
import type { EmbeddingItem } from '../openai/openai-embeddings.wire.js';
import type { EmbeddingsAdapter } from '../types.js';
import { embedMock } from './media/mock-embeddings.js';

export const mockEmbeddingsAdapter: EmbeddingsAdapter = {
  async embed(_transport, _connection, call) {
    let promptTokens = 0;
    const data: EmbeddingItem[] = call.inputs.map((input, index) => {
      const text = typeof input === 'string' ? input : decodeTokens(input);
      promptTokens += typeof input === 'string' ? countTextTokens(input) : input.length;
      const vector = embedMock(text, call.dimensions);
      return { object: 'embedding', index, embedding: call.encodingFormat === 'base64' ? encodeEmbeddingBase64(vector) : toFloatArray(vector) };
    });
    return {
      body: { object: 'list', data, model: String(call.body.model), usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } },
      promptTokens,
    };
  },
};
