/**
 * A `bedrock` provider in the catalog file: what the schema accepts and
 * refuses, the unset-secret warning, the embeddings it cannot serve, and the
 * README's own example entry.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { findUnservedEndpoint, findUnsetSecrets } from '../../server/catalog/catalog.js';
import { catalogFileSchema, type CatalogFile, type ProviderEntry } from '../../server/catalog/catalog.schema.js';

const AWS = { region: 'eu-west-3', accessKeyId: 'env:AWS_ACCESS_KEY_ID', secretAccessKey: 'env:AWS_SECRET_ACCESS_KEY', sessionToken: 'env:AWS_SESSION_TOKEN' };

function catalogOf(provider: Record<string, unknown>, endpoints: string[] = ['/v1/chat/completions']): unknown {
  return {
    providers: [provider],
    models: [{ id: 'm', ownedBy: 'x', provider: provider.id, upstreamModel: 'anthropic.claude-3-haiku-20240307-v1:0', endpoints, pricing: { input: 1, output: 1 } }],
  };
}

describe('a bedrock provider in the catalog', () => {
  it('needs no baseUrl, but its region and credentials as env references', () => {
    expect(catalogFileSchema.safeParse(catalogOf({ id: 'b', kind: 'bedrock', aws: AWS })).success).toBe(true);
    expect(catalogFileSchema.safeParse(catalogOf({ id: 'b', kind: 'bedrock', baseUrl: 'http://127.0.0.1:9000', aws: AWS })).success).toBe(true);

    const missing = catalogFileSchema.safeParse(catalogOf({ id: 'b', kind: 'bedrock' }));
    expect(missing.success).toBe(false);
    expect(missing.error?.issues[0]).toMatchObject({ path: ['providers', 0, 'aws'], message: expect.stringContaining('required for kind bedrock') as unknown });

    const literal = catalogFileSchema.safeParse(catalogOf({ id: 'b', kind: 'bedrock', aws: { ...AWS, secretAccessKey: 'wJalrXUtnFEMI/K7MDENG' } }));
    expect(literal.error?.issues[0]?.message).toMatch(/env:NAME/);
    const region = catalogFileSchema.safeParse(catalogOf({ id: 'b', kind: 'bedrock', aws: { ...AWS, region: 'Virginia' } }));
    expect(region.error?.issues[0]?.message).toMatch(/AWS region/);
    // Other kinds still need a baseUrl.
    expect(catalogFileSchema.safeParse(catalogOf({ id: 'b', kind: 'anthropic' })).success).toBe(false);
  });

  it('warns of each unset credential variable at start', () => {
    const catalog = catalogFileSchema.parse(catalogOf({ id: 'b', kind: 'bedrock', aws: AWS }));
    expect(findUnsetSecrets(catalog, { AWS_ACCESS_KEY_ID: 'AKIA0000000000000000' })).toEqual([
      { provider: 'b', variable: 'AWS_SECRET_ACCESS_KEY' },
      { provider: 'b', variable: 'AWS_SESSION_TOKEN' },
    ]);
  });

  it('serves the chat formats and count_tokens, and is refused for embeddings', () => {
    const chat = catalogFileSchema.parse(catalogOf({ id: 'b', kind: 'bedrock', aws: AWS }, ['/v1/chat/completions', '/v1/messages', '/v1/messages/count_tokens', '/v1/responses']));
    expect(findUnservedEndpoint(chat)).toBeUndefined();
    const embeddings = catalogFileSchema.parse(catalogOf({ id: 'b', kind: 'bedrock', aws: AWS }, ['/v1/embeddings']));
    expect(findUnservedEndpoint(embeddings)).toBe('models.0 (m): endpoint /v1/embeddings cannot be served by provider "b" of kind bedrock');
  });
});

describe("the README's catalog example", () => {
  it('is a valid catalog with a bedrock provider and a model whose primary is Bedrock', () => {
    const readme = readFileSync(path.join(import.meta.dirname, '../../README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('### The catalog file'));
    const json = /```json\n([\s\S]*?)\n```/.exec(section)![1]!;
    const parsed = catalogFileSchema.safeParse(JSON.parse(json));
    expect(parsed.success, JSON.stringify(parsed.error?.issues)).toBe(true);
    const catalog = parsed.data as CatalogFile;
    expect(findUnservedEndpoint(catalog)).toBeUndefined();
    const bedrock = catalog.providers.find((provider: ProviderEntry) => provider.kind === 'bedrock');
    expect(bedrock?.aws?.region).toBe('us-east-1');
    expect(catalog.models.some((model) => model.provider === bedrock?.id)).toBe(true);
  });
});
