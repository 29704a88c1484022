/**
 * The README's Gemini catalog example (section "Google Gemini and Vertex AI")
 * is a catalog the gateway loads, and its Gemini API and Vertex AI providers
 * are addressed as that section documents.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { findUnservedEndpoint, findUnsetSecrets } from '../../server/catalog/catalog.js';
import { catalogFileSchema, type CatalogFile, type ProviderEntry } from '../../server/catalog/catalog.schema.js';
import { buildGeminiHeaders, geminiMethodUrl } from '../../server/providers/gemini/gemini.adapter.js';
import type { ProviderConnection } from '../../server/providers/types.js';

function readmeGeminiCatalog(): unknown {
  const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
  const start = readme.indexOf('#### Google Gemini and Vertex AI');
  if (start < 0) throw new Error('no Gemini section in the README');
  const block = /```json\n([\s\S]*?)\n```/.exec(readme.slice(start));
  if (!block) throw new Error('no catalog example in the Gemini section');
  return JSON.parse(block[1]!);
}

/** A provider entry as the gateway connects to it, its secret values made up (the catalog resolves them from the environment). */
function connectionOf(provider: ProviderEntry): ProviderConnection {
  return {
    id: provider.id,
    kind: provider.kind,
    baseUrl: provider.baseUrl!,
    ...(provider.apiKey ? { apiKey: 'AIzaSy-readme-example-key' } : {}),
    ...(provider.vertex ? { vertex: { project: provider.vertex.project, location: provider.vertex.location } } : {}),
  };
}

describe("the README's Gemini catalog example", () => {
  it('validates, every model is served by its providers, and its secrets are env references', () => {
    const parsed = catalogFileSchema.safeParse(readmeGeminiCatalog());
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    const catalog = parsed.data as CatalogFile;
    expect(findUnservedEndpoint(catalog)).toBeUndefined();
    expect(findUnsetSecrets(catalog, {})).toEqual([
      { provider: 'google', variable: 'GEMINI_API_KEY' },
      { provider: 'vertex', variable: 'VERTEX_SERVICE_ACCOUNT_JSON' },
      { provider: 'openai', variable: 'OPENAI_API_KEY' },
    ]);
    const gemini = catalog.models.find((model) => model.id === 'gemini-2.5-flash')!;
    expect([gemini.provider, ...(gemini.deployments ?? []).map((deployment) => deployment.provider)]).toEqual(['google', 'vertex', 'openai']);
  });

  it('addresses the Gemini API and Vertex AI as documented, with the key in x-goog-api-key', async () => {
    const catalog = catalogFileSchema.parse(readmeGeminiCatalog());
    const providers = new Map(catalog.providers.map((provider) => [provider.id, connectionOf(provider)]));
    const model = catalog.models.find((entry) => entry.id === 'gemini-2.5-flash')!;
    // A deployment without upstreamModel calls the model's own (as the catalog resolves it).
    const vertexModel = model.deployments!.find((deployment) => deployment.provider === 'vertex')!.upstreamModel ?? model.upstreamModel;
    const google = providers.get('google')!;
    const vertex = providers.get('vertex')!;

    expect(geminiMethodUrl(google, model.upstreamModel, 'generateContent')).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent');
    expect(geminiMethodUrl(google, model.upstreamModel, 'streamGenerateContent')).toBe(
      'https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    expect(geminiMethodUrl(google, 'gemini-embedding-001', 'batchEmbedContents')).toBe('https://generativelanguage.googleapis.com/v1beta/models/gemini-embedding-001:batchEmbedContents');
    expect(geminiMethodUrl(vertex, vertexModel, 'generateContent')).toBe(
      'https://us-central1-aiplatform.googleapis.com/v1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent',
    );
    expect(geminiMethodUrl(vertex, vertexModel, 'streamGenerateContent')).toBe(
      'https://us-central1-aiplatform.googleapis.com/v1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
    );
    expect(await buildGeminiHeaders(google)).toEqual({ 'content-type': 'application/json', 'x-goog-api-key': 'AIzaSy-readme-example-key' });
  });
});
