/** Azure OpenAI entries in the catalog: the two URL styles, authentication, and their secrets. */
import { describe, expect, it } from 'vitest';
import { findUnservedEndpoint, findUnsetSecrets, providerSecrets, type ResolvedProvider } from './catalog.js';
import { catalogFileSchema, type CatalogFile, type Endpoint, type ProviderEntry } from './catalog.schema.js';

function catalogOf(provider: Partial<ProviderEntry> & { kind: ProviderEntry['kind'] }, endpoints: Endpoint[] = ['/v1/chat/completions']): CatalogFile {
  return {
    providers: [{ id: 'az', ...provider } as ProviderEntry],
    models: [{ id: 'm', ownedBy: 'x', provider: 'az', upstreamModel: 'gpt-4o-prod', endpoints, pricing: { input: 1, output: 2 } }],
  };
}

function issuesOf(catalog: CatalogFile): string[] {
  const result = catalogFileSchema.safeParse(catalog);
  return result.success ? [] : result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

describe('azure providers in the catalog', () => {
  it('accepts a resource endpoint with an api-version, and the v1 API base without one', () => {
    expect(issuesOf(catalogOf({ kind: 'azure', baseUrl: 'https://contoso.openai.azure.com', apiKey: 'env:AZURE_KEY', azure: { apiVersion: '2024-10-21' } }))).toEqual([]);
    expect(issuesOf(catalogOf({ kind: 'azure', baseUrl: 'https://contoso.openai.azure.com/openai/v1', azure: { entraToken: 'env:AZURE_TOKEN' } }))).toEqual([]);
  });

  it('refuses a base URL that is not one with the ordinary message', () => {
    expect(issuesOf(catalogOf({ kind: 'azure', baseUrl: 'contoso.openai.azure.com', apiKey: 'env:AZURE_KEY', azure: { apiVersion: '2024-10-21' } }))[0]).toMatch(/^providers\.0\.baseUrl: /);
  });

  it('refuses a resource endpoint without an api-version, naming the field', () => {
    expect(issuesOf(catalogOf({ kind: 'azure', baseUrl: 'https://contoso.openai.azure.com', apiKey: 'env:AZURE_KEY' }))).toEqual([
      'providers.0.azure.apiVersion: required with a resource endpoint (deployment URLs); or use the v1 API base …/openai/v1',
    ]);
  });

  it('refuses a key and a token together, a literal token, and azure options on another kind', () => {
    const base = { kind: 'azure' as const, baseUrl: 'https://contoso.openai.azure.com/openai/v1' };
    expect(issuesOf(catalogOf({ ...base, apiKey: 'env:K', azure: { entraToken: 'env:T' } }))).toEqual(['providers.0.azure.entraToken: give apiKey or entraToken, not both']);
    expect(issuesOf(catalogOf({ ...base, azure: { entraToken: 'eyJ0eXAiOiJKV1Qi' } }))[0]).toMatch(/^providers\.0\.azure\.entraToken: must reference an environment variable/);
    expect(issuesOf(catalogOf({ kind: 'openai', baseUrl: 'https://api.openai.com/v1', azure: { apiVersion: '2024-10-21' } }))).toEqual(['providers.0.azure: only for kind azure']);
  });

  it('serves chat, messages, responses, embeddings, images and audio; not moderations nor videos', () => {
    const provider = { kind: 'azure' as const, baseUrl: 'https://contoso.openai.azure.com/openai/v1' };
    const served: Endpoint[] = ['/v1/chat/completions', '/v1/messages', '/v1/messages/count_tokens', '/v1/responses', '/v1/responses/compact', '/v1/embeddings', '/v1/images/generations', '/v1/images/edits', '/v1/audio/speech', '/v1/audio/transcriptions', '/v1/audio/translations'];
    expect(findUnservedEndpoint(catalogOf(provider, served))).toBeUndefined();
    expect(findUnservedEndpoint(catalogOf(provider, ['/v1/moderations']))).toMatch(/cannot be served by provider "az" of kind azure/);
    expect(findUnservedEndpoint(catalogOf(provider, ['/v1/videos']))).toMatch(/cannot be served by provider "az" of kind azure/);
  });

  it('says when the Entra ID token variable is unset, and keeps the token among the secrets redacted', () => {
    const catalog = catalogOf({ kind: 'azure', baseUrl: 'https://contoso.openai.azure.com/openai/v1', azure: { entraToken: 'env:AZURE_TOKEN' } });
    expect(findUnsetSecrets(catalog, {})).toEqual([{ provider: 'az', variable: 'AZURE_TOKEN' }]);
    expect(findUnsetSecrets(catalog, { AZURE_TOKEN: 'eyJ0eXAi.token' })).toEqual([]);
    const entry = catalog.providers[0]!;
    const resolved: ResolvedProvider = { id: 'az', kind: 'azure', baseUrl: entry.baseUrl!, azure: { entraToken: 'eyJ0eXAi.entra-access-token' }, entry };
    expect(providerSecrets(resolved)).toEqual(['eyJ0eXAi.entra-access-token']);
  });
});
