import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_CATALOG } from './demo-catalog.js';
import { CatalogConfigError, findUnservedEndpoint, loadCatalogSource } from './catalog.js';
import { catalogFileSchema, DEFAULT_IMAGE_CAPABILITIES, imageCapabilitiesOf, type CatalogFile, type Endpoint, type ModelEntry } from './catalog.schema.js';

function catalogWith(kind: 'openai' | 'anthropic' | 'mock', endpoint: Endpoint): CatalogFile {
  return {
    providers: [{ id: 'p', kind, ...(kind === 'mock' ? {} : { baseUrl: 'https://example.com/v1' }) }],
    models: [{ id: 'm', ownedBy: 'x', provider: 'p', upstreamModel: 'm', endpoints: [endpoint], pricing: { input: 0, output: 0 } }],
  };
}

describe('the catalog check of endpoints against provider kinds', () => {
  it('refuses embeddings, moderations and image operations on an anthropic provider, naming the model and endpoint', () => {
    for (const endpoint of ['/v1/embeddings', '/v1/moderations', '/v1/images/generations', '/v1/images/edits'] as const) {
      expect(findUnservedEndpoint(catalogWith('anthropic', endpoint))).toBe(`models.0 (m): endpoint ${endpoint} cannot be served by provider "p" of kind anthropic`);
      expect(findUnservedEndpoint(catalogWith('openai', endpoint))).toBeUndefined();
      expect(findUnservedEndpoint(catalogWith('mock', endpoint))).toBeUndefined();
    }
  });

  it('refuses such a catalog file when it is loaded', () => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'umg-catalog-'));
    try {
      const file = path.join(directory, 'catalog.json');
      writeFileSync(file, JSON.stringify(catalogWith('anthropic', '/v1/embeddings')));
      expect(() => loadCatalogSource(file)).toThrow(CatalogConfigError);
      expect(() => loadCatalogSource(file)).toThrow(/m\): endpoint \/v1\/embeddings cannot be served by provider "p" of kind anthropic/);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  });

  it('accepts the demo catalog', () => {
    expect(findUnservedEndpoint(DEMO_CATALOG)).toBeUndefined();
    expect(catalogFileSchema.safeParse(DEMO_CATALOG).success).toBe(true);
  });
});

describe('image capabilities of a model', () => {
  const base: ModelEntry = { id: 'i', ownedBy: 'x', provider: 'p', upstreamModel: 'i', endpoints: ['/v1/images/generations'], pricing: { input: 0, output: 0, image: 0.01 } };

  it('defaults each field on its own', () => {
    expect(imageCapabilitiesOf(base)).toEqual(DEFAULT_IMAGE_CAPABILITIES);
    expect(imageCapabilitiesOf({ ...base, images: { maxImages: 1, styles: ['vivid'] } })).toEqual({ ...DEFAULT_IMAGE_CAPABILITIES, maxImages: 1, styles: ['vivid'] });
  });

  it('takes only known fields and SPEC values in the catalog file', () => {
    const parse = (images: unknown) => catalogFileSchema.safeParse({ providers: [{ id: 'p', kind: 'mock' }], models: [{ ...base, images }] }).success;
    expect(parse({ sizes: ['1024x1024', 'auto'], qualities: ['hd', 'high'], streaming: true })).toBe(true);
    expect(parse({ sizes: ['1792x1024'] })).toBe(false);
    expect(parse({ qualities: ['ultra'] })).toBe(false);
    expect(parse({ maxImages: 11 })).toBe(false);
    expect(parse({ colours: 3 })).toBe(false);
  });
});

describe('catalog files in JSON or YAML', () => {
  function withFile(name: string, text: string, check: (file: string) => void): void {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'umg-catalog-'));
    try {
      const file = path.join(directory, name);
      writeFileSync(file, text);
      check(file);
    } finally {
      rmSync(directory, { recursive: true, force: true });
    }
  }

  it('reads a .yaml or .yml file as YAML, to the same catalog as its JSON', () => {
    const yaml = [
      'providers:',
      '  - id: p',
      '    kind: mock',
      'models:',
      '  - id: m',
      '    ownedBy: x',
      '    provider: p',
      '    upstreamModel: m',
      '    endpoints: [/v1/chat/completions]',
      '    pricing: { input: 1, output: 2 }',
      'families:',
      '  companion: { restricted: true }',
    ].join('\n');
    const json = {
      providers: [{ id: 'p', kind: 'mock' }],
      models: [{ id: 'm', ownedBy: 'x', provider: 'p', upstreamModel: 'm', endpoints: ['/v1/chat/completions'], pricing: { input: 1, output: 2 } }],
      families: { companion: { restricted: true } },
    };
    let fromJson: CatalogFile | undefined;
    withFile('catalog.json', JSON.stringify(json), (file) => (fromJson = loadCatalogSource(file)));
    for (const name of ['catalog.yaml', 'catalog.YML']) {
      withFile(name, yaml, (file) => expect(loadCatalogSource(file)).toEqual(fromJson));
    }
  });

  it('says where a syntax error is without quoting the text around it', () => {
    const pasted = 'sk-live-0123456789abcdef';
    withFile('catalog.json', `{"providers": [{"id": "p", "kind": "mock", "apiKey": ${pasted}}], "models": []}`, (file) => {
      expect(() => loadCatalogSource(file)).toThrow(CatalogConfigError);
      expect(() => loadCatalogSource(file)).toThrow(/catalog\.json: not valid JSON/);
      expect(() => loadCatalogSource(file)).not.toThrow(/0123456789/);
    });
    withFile('catalog.json', '{\n  "providers": [],\n  "models": [,]\n}', (file) => {
      expect(() => loadCatalogSource(file)).toThrow(/catalog\.json: not valid JSON: Unexpected token ','$/);
    });
    withFile('catalog.json', '{\n  "providers": []\n  "models": []\n}', (file) => {
      expect(() => loadCatalogSource(file)).toThrow(/not valid JSON at line 3, column 3: Expected ',' or '}' after property value$/);
    });
    withFile('catalog.yaml', `providers:\n  - id: p\n    apiKey: [${pasted}\nmodels: []\n`, (file) => {
      expect(() => loadCatalogSource(file)).toThrow(/catalog\.yaml: not valid YAML at line \d+, column \d+/);
      expect(() => loadCatalogSource(file)).not.toThrow(/0123456789/);
    });
  });

  it('names the field of a YAML file that breaks the schema', () => {
    withFile('catalog.yml', 'providers: []\nmodels:\n  - id: m\n    pricing: { input: -1, output: 0 }\n', (file) => {
      expect(() => loadCatalogSource(file)).toThrow(/catalog\.yml: models\[0\]\./);
    });
  });
});
