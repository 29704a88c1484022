/** The README's catalog example is a catalog the gateway loads, and its Azure entries address Azure as documented. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findUnservedEndpoint } from '../../server/catalog/catalog.js';
import { catalogFileSchema } from '../../server/catalog/catalog.schema.js';
import { buildAzureHeaders, buildAzureUrl } from '../../server/providers/azure/azure-url.js';

function readmeCatalog(): unknown {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const section = readme.slice(readme.indexOf('### The catalog file'));
  const block = /```json\n([\s\S]*?)\n```/.exec(section);
  if (!block) throw new Error('no catalog example in the README');
  return JSON.parse(block[1]!);
}

describe("the README's catalog example", () => {
  it('validates, and every model is served by its providers', () => {
    const parsed = catalogFileSchema.safeParse(readmeCatalog());
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    expect(findUnservedEndpoint(parsed.data!)).toBeUndefined();
  });

  it('has an Azure entry of each URL style that addresses the deployment as documented', () => {
    const catalog = catalogFileSchema.parse(readmeCatalog());
    const azure = catalog.providers.filter((provider) => provider.kind === 'azure');
    const urls = azure.map((provider) =>
      buildAzureUrl({ id: provider.id, kind: 'azure', baseUrl: provider.baseUrl!, ...(provider.azure?.apiVersion ? { azure: { apiVersion: provider.azure.apiVersion } } : {}) }, '/chat/completions', 'gpt-4o-prod'),
    );
    expect(urls).toEqual([
      'https://contoso-east.openai.azure.com/openai/deployments/gpt-4o-prod/chat/completions?api-version=2025-04-01-preview',
      'https://contoso-west.openai.azure.com/openai/v1/chat/completions',
    ]);
    expect(azure.map((provider) => Object.keys(buildAzureHeaders({ id: provider.id, kind: 'azure', baseUrl: provider.baseUrl!, apiKey: provider.apiKey ? 'key-value-x' : undefined, azure: provider.azure?.entraToken ? { entraToken: 'token-value' } : {} })))).toEqual([
      ['content-type', 'api-key'],
      ['content-type', 'authorization'],
    ]);
    expect(catalog.models.filter((model) => azure.some((provider) => provider.id === model.provider)).map((model) => model.id)).toEqual(['gpt-4o-azure', 'embedding-azure']);
  });
});
