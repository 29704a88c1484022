import { describe, expect, it } from 'vitest';
import type { CatalogModel } from '../catalog/catalog.js';
import { catalogFileSchema, type ModelEntry } from '../catalog/catalog.schema.js';
import { DEMO_CATALOG } from '../catalog/demo-catalog.js';
import { checkUsage } from './usage-run.js';
import { RestrictedFamilies } from './families.js';
import { hasLiveGrant } from './grants.js';

function catalog(models: Array<Partial<ModelEntry>>, families?: Record<string, unknown>): unknown {
  return {
    providers: [{ id: 'mock', kind: 'mock' }],
    ...(families ? { families } : {}),
    models: models.map((model, index) => ({ id: `m${index}`, ownedBy: 'x', provider: 'mock', upstreamModel: 'm', endpoints: ['/v1/chat/completions'], pricing: { input: 0, output: 0 }, ...model })),
  };
}

function modelOf(entry: Partial<ModelEntry>): CatalogModel {
  return { entry: { id: 'm', ...entry } } as CatalogModel;
}

describe('catalog families', () => {
  it('keeps `family: restricted` of existing catalogs restricted without a declaration', () => {
    const parsed = catalogFileSchema.parse(DEMO_CATALOG);
    const families = new RestrictedFamilies(parsed);
    expect(families.familyOf(modelOf({ family: 'restricted' }))?.name).toBe('restricted');
    expect(families.familyOf(modelOf({}))).toBeUndefined();
  });

  it('refuses a model naming an undeclared family, naming the field', () => {
    const result = catalogFileSchema.safeParse(catalog([{ family: 'companoin' }], { companion: { restricted: true } }));
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]).toMatchObject({ path: ['models', 0, 'family'], message: expect.stringContaining('companoin') });
  });

  it('refuses unsafe usage-rule patterns in the catalog', () => {
    const families = { companion: { restricted: true, usageChecks: { rules: { rules: [{ id: 'x', description: 'x', action: 'flag', patterns: ['(a+)+$'] }] } } } };
    expect(catalogFileSchema.safeParse(catalog([{ family: 'companion' }], families)).success).toBe(false);
  });

  it('runs the rules a family declares, the default ones otherwise, and none when turned off', () => {
    const parsed = catalogFileSchema.parse(
      catalog([{ family: 'pirates' }, { family: 'default-rules' }, { family: 'unchecked' }, { family: 'open' }], {
        pirates: { restricted: true, usageChecks: { rules: { rules: [{ id: 'no-pirates', description: 'No pirates.', action: 'reject', patterns: ['\\bpirates?\\b'] }] } } },
        'default-rules': { restricted: true },
        unchecked: { restricted: true, usageChecks: { enabled: false } },
        open: { restricted: false },
      }),
    );
    const families = new RestrictedFamilies(parsed);
    const pirates = families.familyOf(modelOf({ family: 'pirates' }))!;
    expect(checkUsage({ texts: [{ role: 'user', text: 'Tell me about pirates' }] }, pirates.usageRules!).action).toBe('reject');
    const defaults = families.familyOf(modelOf({ family: 'default-rules' }))!;
    expect(checkUsage({ texts: [{ role: 'user', text: 'Tell me about pirates' }] }, defaults.usageRules!).action).toBe('allow');
    expect(checkUsage({ texts: [{ role: 'user', text: 'I am going to kill you' }] }, defaults.usageRules!).action).toBe('flag');
    expect(families.familyOf(modelOf({ family: 'unchecked' }))).toMatchObject({ name: 'unchecked', usageRules: null });
    expect(families.familyOf(modelOf({ family: 'open' }))).toBeUndefined();
    expect(families.names().sort()).toEqual(['default-rules', 'pirates', 'restricted', 'unchecked']);
  });

  it('lets a catalog declare the legacy family unrestricted', () => {
    const families = new RestrictedFamilies(catalogFileSchema.parse(catalog([{ family: 'restricted' }], { restricted: { restricted: false } })));
    expect(families.familyOf(modelOf({ family: 'restricted' }))).toBeUndefined();
  });
});

describe('hasLiveGrant', () => {
  const now = Date.parse('2026-11-24T00:00:00Z');
  it('needs an unrevoked grant on the family that has not expired', () => {
    const account = { grants: new Map<string, number | null>([['forever', null], ['later', now + 1], ['past', now], ['earlier', now - 1]]) };
    expect(hasLiveGrant(account, 'forever', now)).toBe(true);
    expect(hasLiveGrant(account, 'later', now)).toBe(true);
    expect(hasLiveGrant(account, 'past', now)).toBe(false);
    expect(hasLiveGrant(account, 'earlier', now)).toBe(false);
    expect(hasLiveGrant(account, 'other', now)).toBe(false);
  });
});
