/**
 * `POST /embeddings` on an OpenAI-format provider: the client's body passed
 * through (only `model` swapped) and the provider's answer returned as it
 * came; the provider's `usage.prompt_tokens` is what is billed.
 *
 * @see https://platform.openai.com/docs/api-reference/embeddings/create
 */
import { UpstreamError } from '../../errors.js';
import type { EmbeddingList } from './openai-embeddings.wire.js';
import type { EmbeddingsAdapter } from '../types.js';
import { parseOpenAIError } from './openai-errors.js';
import { buildOpenAIHeaders, joinOpenAIUrl } from './openai.adapter.js';

export const openAIEmbeddingsAdapter: EmbeddingsAdapter = {
  async embed(transport, connection, call) {
    const response = await transport.send(
      { method: 'POST', url: joinOpenAIUrl(connection.baseUrl, '/embeddings'), headers: buildOpenAIHeaders(connection), body: JSON.stringify(call.body) },
      parseOpenAIError,
    );
    const { value, text } = await transport.readJson(response);
    const answer = value as Partial<EmbeddingList> | null;
    if (typeof answer !== 'object' || answer === null || !Array.isArray(answer.data)) {
      throw new UpstreamError('the provider answered without embeddings', { status: 502, provider: connection.id, retryable: false });
    }
    const promptTokens = typeof answer.usage?.prompt_tokens === 'number' ? answer.usage.prompt_tokens : undefined;
    return { body: answer as EmbeddingList, raw: text, ...(promptTokens !== undefined ? { promptTokens } : {}) };
  },
};
