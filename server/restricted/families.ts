/**
 * Which model families are restricted and which usage-check policy each runs, from the catalog
 * file (`families`, and a model's `family`). Built with each catalog version (start, reload); a
 * model carries its family from the version it was resolved in.
 */
import { LEGACY_RESTRICTED_FAMILY, type CatalogFile, type ModelEntry } from '../catalog/catalog.schema.js';
import { DEFAULT_USAGE_RULES } from './default-usage-rules.js';
import { compileUsageRules, type CompiledUsageRules } from './usage-rules.js';

/** A restricted family as the hot path needs it. */
export interface RestrictedFamily {
  name: string;
  description: string | null;
  /** The compiled usage policy; null when the family's usage checks are turned off. */
  usageRules: CompiledUsageRules | null;
}

export class RestrictedFamilies {
  private readonly families = new Map<string, RestrictedFamily>();

  constructor(catalog: Pick<CatalogFile, 'families'>) {
    const declared = catalog.families ?? {};
    // The legacy family is restricted unless the catalog declares it otherwise.
    const entries = LEGACY_RESTRICTED_FAMILY in declared ? declared : { ...declared, [LEGACY_RESTRICTED_FAMILY]: { restricted: true } };
    for (const [name, entry] of Object.entries(entries)) {
      if (entry.restricted !== true) continue;
      const checks = entry.usageChecks;
      const usageRules = checks?.enabled === false ? null : compileUsageRules(checks?.rules ?? DEFAULT_USAGE_RULES);
      this.families.set(name, { name, description: entry.description ?? null, usageRules });
    }
  }

  /** The restricted family of a model entry, or undefined for every other model (one map lookup). */
  familyOf(model: { entry: ModelEntry } | ModelEntry): RestrictedFamily | undefined {
    const family = 'entry' in model ? model.entry.family : model.family;
    return family === undefined ? undefined : this.families.get(family);
  }

  /** Whether `name` is a restricted family of this catalog (grants are only given for those). */
  has(name: string): boolean {
    return this.families.has(name);
  }

  names(): string[] {
    return [...this.families.keys()];
  }

  /** Every restricted family, for the staff pages that offer them in a grant form. */
  list(): RestrictedFamily[] {
    return [...this.families.values()];
  }
}
