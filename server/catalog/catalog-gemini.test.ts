import { describe, expect, it } from 'vitest';
import { findUnservedEndpoint, findUnsetSecrets, providerSecrets, type ResolvedProvider } from './catalog.js';
import { catalogFileSchema, type CatalogFile, type Endpoint, type ProviderEntry } from './catalog.schema.js';

const VERTEX: ProviderEntry = {
  id: 'vertex',
  kind: 'gemini',
  baseUrl: 'https://us-central1-aiplatform.googleapis.com/v1',
  vertex: { project: 'my-project', location: 'us-central1', credentials: 'env:VERTEX_SA' },
};

function catalogWith(provider: ProviderEntry, endpoint: Endpoint = '/v1/chat/completions'): CatalogFile {
  return {
    providers: [provider],
    models: [{ id: 'm', ownedBy: 'google', provider: provider.id, upstreamModel: 'gemini-2.5-flash', endpoints: [endpoint], pricing: { input: 0, output: 0 } }],
  };
}

describe('gemini providers in the catalog', () => {
  it('accepts a Gemini API entry and a Vertex entry; the credential must be an env: reference', () => {
    expect(catalogFileSchema.safeParse(catalogWith({ id: 'g', kind: 'gemini', baseUrl: 'https://generativelanguage.googleapis.com/v1beta', apiKey: 'env:GEMINI_API_KEY' })).success).toBe(true);
    expect(catalogFileSchema.safeParse(catalogWith(VERTEX)).success).toBe(true);
    expect(catalogFileSchema.safeParse(catalogWith({ ...VERTEX, vertex: { ...VERTEX.vertex!, credentials: '{"private_key":"…"}' } })).success).toBe(false);
    expect(catalogFileSchema.safeParse(catalogWith({ ...VERTEX, vertex: { ...VERTEX.vertex!, region: 'x' } as never })).success).toBe(false);
  });

  it('serves chat, messages, responses, count_tokens and embeddings, and refuses images', () => {
    for (const endpoint of ['/v1/chat/completions', '/v1/messages', '/v1/responses', '/v1/messages/count_tokens', '/v1/embeddings'] as const) {
      expect(findUnservedEndpoint(catalogWith(VERTEX, endpoint))).toBeUndefined();
    }
    expect(findUnservedEndpoint(catalogWith(VERTEX, '/v1/images/generations'))).toMatch(/cannot be served by provider "vertex" of kind gemini/);
  });

  it('warns of an unset service account variable', () => {
    expect(findUnsetSecrets(catalogWith(VERTEX), {})).toEqual([{ provider: 'vertex', variable: 'VERTEX_SA' }]);
  });

  it('counts the service account key, its private key and its key id among the provider secrets', () => {
    const privateKey = `-----BEGIN PRIVATE KEY-----\n${'A'.repeat(64)}\n${'B'.repeat(64)}\n-----END PRIVATE KEY-----\n`;
    const credentials = JSON.stringify({ type: 'service_account', private_key_id: 'abcdef0123456789', private_key: privateKey, client_email: 'sa@p.iam.gserviceaccount.com' });
    const provider: ResolvedProvider = { id: 'vertex', kind: 'gemini', baseUrl: VERTEX.baseUrl!, vertex: { project: 'my-project', location: 'us-central1', credentials }, entry: VERTEX };
    expect(providerSecrets(provider)).toEqual(expect.arrayContaining([credentials, privateKey, 'A'.repeat(64), 'B'.repeat(64), 'abcdef0123456789']));
  });
});
