/**
 * `POST /moderations` on an OpenAI-format provider: the client's body passed
 * through (only `model` swapped; multimodal items included) and the answer
 * returned as it came.
 *
 * @see https://platform.openai.com/docs/api-reference/moderations/create
 */
import { UpstreamError } from '../../errors.js';
import type { ModerationResult } from './openai-moderations.wire.js';
import type { ModerationsAdapter } from '../types.js';
import { parseOpenAIError } from './openai-errors.js';
import { buildOpenAIHeaders, joinOpenAIUrl } from './openai.adapter.js';

export const openAIModerationsAdapter: ModerationsAdapter = {
  async moderate(transport, connection, call) {
    const response = await transport.send(
      { method: 'POST', url: joinOpenAIUrl(connection.baseUrl, '/moderations'), headers: buildOpenAIHeaders(connection), body: JSON.stringify(call.body) },
      parseOpenAIError,
    );
    const { value, text } = await transport.readJson(response);
    const answer = value as Partial<ModerationResult> | null;
    if (typeof answer !== 'object' || answer === null || !Array.isArray(answer.results)) {
      throw new UpstreamError('the provider answered without moderation results', { status: 502, provider: connection.id, retryable: false });
    }
    return { body: answer as ModerationResult, raw: text };
  },
};
