/**
 * An Azure OpenAI error answer → UpstreamError. Azure keeps OpenAI's
 * `{error:{message,type,param,code}}` envelope but fills it its own way:
 * `type` null and `code` a status text (`"429"`), a name
 * (`DeploymentNotFound`) or `content_filter`, and the request id in
 * `apim-request-id`. A prompt its content filter refused is a 400 with
 * `code: content_filter` and the verdicts under
 * `innererror.content_filter_result`: it becomes `upstreamType:
 * 'content_filter'` (the client's 400 CONTENT_FILTERED) with the filtered
 * categories in the message. Retries and `retry-after` follow the OpenAI rules.
 *
 * @see https://learn.microsoft.com/en-us/azure/ai-foundry/openai/concepts/content-filter#scenario-details
 */
import { UpstreamError } from '../../errors.js';
import { isRecord, readString } from '../openai/json-values.js';
import { parseOpenAIError, redactSecrets } from '../openai/openai-errors.js';
import type { ParseUpstreamError } from '../types.js';

/** The codes Azure gives a refusal by its content filter (chat and completions; images say it their own way). */
const CONTENT_FILTER_CODES = new Set(['content_filter', 'contentFilter', 'content_policy_violation']);

export const parseAzureError: ParseUpstreamError = (status, bodyText, headers) => {
  const parsed = parseOpenAIError(status, bodyText, headers);
  const requestId = parsed.upstreamRequestId ?? headers['apim-request-id'] ?? null;
  const error = readError(bodyText);
  const filtered = error ? readContentFilter(error) : undefined;
  if (filtered !== undefined) {
    const categories = filtered.length > 0 ? ` (${filtered.join(', ')})` : '';
    return new UpstreamError(redactSecrets(`The provider's content filter refused the prompt${categories}. ${parsed.message}`).slice(0, 1200), {
      status,
      provider: 'azure',
      upstreamRequestId: requestId,
      // A policy verdict on the prompt: another attempt, or another deployment, is not the answer.
      retryable: false,
      upstreamType: 'content_filter',
      upstreamParam: parsed.upstreamParam ?? 'prompt',
      cause: parsed.cause,
    });
  }
  return new UpstreamError(parsed.message, {
    status,
    provider: 'azure',
    upstreamRequestId: requestId,
    retryable: parsed.retryable,
    ...(parsed.retryAfter !== undefined ? { retryAfter: parsed.retryAfter } : {}),
    upstreamType: parsed.upstreamType,
    upstreamParam: parsed.upstreamParam,
    cause: parsed.cause,
  });
};

function readError(bodyText: string): Record<string, unknown> | undefined {
  try {
    const body: unknown = JSON.parse(bodyText);
    return isRecord(body) && isRecord(body.error) ? body.error : undefined;
  } catch {
    return undefined;
  }
}

/** The categories the filter flagged, or undefined when the error is not the content filter's. */
function readContentFilter(error: Record<string, unknown>): string[] | undefined {
  const inner = isRecord(error.innererror) ? error.innererror : {};
  const code = readString(error.code);
  const isFilter = (code !== undefined && CONTENT_FILTER_CODES.has(code)) || readString(inner.code) === 'ResponsibleAIPolicyViolation';
  if (!isFilter) return undefined;
  return flaggedCategories(inner.content_filter_result ?? inner.content_filter_results);
}

/**
 * `{hate:{filtered,severity}, jailbreak:{filtered,detected}, custom_blocklists:{filtered,details}, …}`
 * → the names of those filtered, with their severity when one was given.
 */
export function flaggedCategories(result: unknown): string[] {
  if (!isRecord(result)) return [];
  const flagged: string[] = [];
  for (const [name, verdict] of Object.entries(result)) {
    if (!isRecord(verdict) || verdict.filtered !== true) continue;
    const severity = readString(verdict.severity);
    flagged.push(severity && severity !== 'safe' ? `${name}: ${severity}` : name);
  }
  return flagged;
}
