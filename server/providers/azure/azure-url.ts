/**
 * Where an Azure OpenAI resource serves an OpenAI-format operation, and how
 * the gateway authenticates to it. Two URL styles:
 *
 * - a resource endpoint (`https://NAME.openai.azure.com`): deployment-scoped
 *   URLs, `{endpoint}/openai/deployments/{deployment}/{op}?api-version=…`,
 *   the deployment being the catalog's `upstreamModel`. The Responses API is
 *   not deployment-scoped there: `{endpoint}/openai/responses?api-version=…`
 *   with the deployment as `model` in the body.
 * - the v1 API base (`https://NAME.openai.azure.com/openai/v1`): OpenAI's own
 *   paths, `{base}/{op}`, the deployment as `model` in the body;
 *   `api-version` only when configured (`preview`).
 *
 * @see https://learn.microsoft.com/en-us/azure/ai-foundry/openai/reference
 * @see https://learn.microsoft.com/en-us/azure/ai-foundry/openai/api-version-lifecycle
 */
import type { ProviderConnection } from '../types.js';

/** Whether a base URL is the v1 API base (`…/openai/v1`) rather than a resource endpoint. */
export function isAzureV1Base(baseUrl: string): boolean {
  // Read as text: the catalog check runs on values that may not be URLs at all.
  return /\/openai\/v1\/*$/.test(baseUrl.split(/[?#]/)[0]!);
}

/** An operation's path as OpenAI names it (`/chat/completions`, `/embeddings`, `/audio/speech`…). */
export type AzureOperationPath = `/${string}`;

/** Operations Azure serves beside the deployments, with the deployment in the body. */
const RESOURCE_SCOPED = new Set<string>(['/responses']);

export function buildAzureUrl(connection: ProviderConnection, operation: AzureOperationPath, deployment: string): string {
  const base = connection.baseUrl.replace(/\/+$/, '');
  const apiVersion = connection.azure?.apiVersion;
  const query = apiVersion ? `?api-version=${encodeURIComponent(apiVersion)}` : '';
  if (isAzureV1Base(base)) return `${base}${operation}${query}`;
  const scope = RESOURCE_SCOPED.has(operation) ? '/openai' : `/openai/deployments/${encodeURIComponent(deployment)}`;
  return `${base}${scope}${operation}${query}`;
}

/**
 * `api-key` (or the Entra ID bearer token), then the connection's own
 * headers; names lower-cased so that a configured header replaces ours.
 * `contentType: null` leaves the content type to the caller (multipart bodies).
 *
 * @see https://learn.microsoft.com/en-us/azure/ai-foundry/openai/reference#authentication
 */
export function buildAzureHeaders(connection: ProviderConnection, contentType: string | null = 'application/json'): Record<string, string> {
  const headers: Record<string, string> = {};
  if (contentType) headers['content-type'] = contentType;
  if (connection.azure?.entraToken) headers.authorization = `Bearer ${connection.azure.entraToken}`;
  else if (connection.apiKey) headers['api-key'] = connection.apiKey;
  for (const [name, value] of Object.entries(connection.headers ?? {})) headers[name.toLowerCase()] = value;
  return headers;
}
