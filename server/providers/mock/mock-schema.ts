/**
 * JSON-schema handling of the mock's value generator: local `$ref`s,
 * `allOf` merged into one schema, and the JSON type a schema asks for.
 */

/** What the generator may draw strings from. */
export interface SchemaValueHints {
  /** Capitalised words of the prompt, most likely names and places first. */
  properNouns: readonly string[];
  /** Other distinctive lowercase words of the prompt. */
  words: readonly string[];
  /** The first words of the user's last message. */
  excerpt: string;
  /** A full-sentence answer, for free-text fields (`answer`, `summary`, …). */
  answer: string;
  /** Deterministic source of randomness in [0, 1). */
  random: () => number;
}

/** A JSON schema object. */
export type Schema = Record<string, unknown>;

/** What schema normalisation needs: the document `$ref`s point into. */
export interface SchemaRoot {
  root: unknown;
}

/** `$ref` hops followed before giving up on a reference chain. */
const MAX_REF_HOPS = 32;

export function isSchemaObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function finiteNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

export function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

export function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** Follows a local JSON pointer (`#`, `#/$defs/Name`); anything else resolves to `{}`. */
export function resolvePointer(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#')) return {};
  let pointer: string;
  try {
    pointer = decodeURIComponent(ref.slice(1));
  } catch {
    return {};
  }
  if (pointer === '') return root;
  if (!pointer.startsWith('/')) return {};
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(node)) node = node[Number(key)];
    else if (isSchemaObject(node)) node = node[key];
    else return {};
  }
  return node ?? {};
}

function mergeTypes(left: unknown, right: unknown): unknown {
  if (left === undefined) return right;
  if (right === undefined) return left;
  const leftTypes = Array.isArray(left) ? left : [left];
  const rightTypes = Array.isArray(right) ? right : [right];
  const common = leftTypes.filter(
    (type) => rightTypes.includes(type) || (type === 'integer' && rightTypes.includes('number')),
  );
  for (const type of rightTypes) {
    if (type === 'integer' && leftTypes.includes('number') && !common.includes('integer')) common.push('integer');
  }
  if (common.length === 0) return right;
  return common.length === 1 ? common[0] : common;
}

const TAKE_LARGER = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties']);
const TAKE_SMALLER = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties']);

/** The conjunction of two schemas, as far as generation needs it. */
export function mergeSchemas(left: Schema, right: Schema): Schema {
  const merged: Schema = { ...left };
  for (const [key, value] of Object.entries(right)) {
    const existing = merged[key];
    if (existing === undefined) {
      merged[key] = value;
    } else if (key === 'properties' && isSchemaObject(existing) && isSchemaObject(value)) {
      const properties: Schema = { ...existing };
      for (const [name, schema] of Object.entries(value)) {
        properties[name] = name in properties ? { allOf: [properties[name], schema] } : schema;
      }
      merged.properties = properties;
    } else if (key === 'required') {
      merged.required = [...new Set([...stringList(existing), ...stringList(value)])];
    } else if (key === 'type') {
      merged.type = mergeTypes(existing, value);
    } else if (key === 'enum' && Array.isArray(existing) && Array.isArray(value)) {
      const common = existing.filter((item) => value.some((other) => JSON.stringify(other) === JSON.stringify(item)));
      merged.enum = common.length > 0 ? common : value;
    } else if (TAKE_LARGER.has(key) && typeof existing === 'number' && typeof value === 'number') {
      merged[key] = Math.max(existing, value);
    } else if (TAKE_SMALLER.has(key) && typeof existing === 'number' && typeof value === 'number') {
      merged[key] = Math.min(existing, value);
    } else {
      merged[key] = value;
    }
  }
  return merged;
}

/** A schema with its top-level `$ref` followed and `allOf` merged in; booleans stay booleans. */
export function normalize(context: SchemaRoot, schema: unknown, hops = 0): Schema | boolean {
  if (typeof schema === 'boolean') return schema;
  if (!isSchemaObject(schema)) return {};
  let current = schema;
  if (typeof current.$ref === 'string') {
    const { $ref, ...rest } = current;
    const target = hops < MAX_REF_HOPS ? normalize(context, resolvePointer(context.root, $ref), hops + 1) : {};
    if (target === false) return false;
    current = target === true ? rest : mergeSchemas(target, rest);
  }
  if (Array.isArray(current.allOf)) {
    const { allOf, ...rest } = current;
    let merged: Schema = rest;
    for (const branch of allOf as unknown[]) {
      const normalized = normalize(context, branch, hops + 1);
      if (normalized === false) return false;
      if (normalized !== true) merged = mergeSchemas(merged, normalized);
    }
    current = merged;
  }
  return current;
}

export type JsonType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null';
const JSON_TYPES: readonly string[] = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'];

export function typeOf(schema: Schema): JsonType {
  const declared = schema.type;
  if (typeof declared === 'string' && JSON_TYPES.includes(declared)) return declared as JsonType;
  if (Array.isArray(declared)) {
    const types = declared.filter((type): type is JsonType => typeof type === 'string' && JSON_TYPES.includes(type));
    const useful = types.find((type) => type !== 'null');
    if (useful) return useful;
    if (types.length > 0) return 'null';
  }
  const has = (...keys: string[]) => keys.some((key) => key in schema);
  if (has('properties', 'required', 'additionalProperties', 'patternProperties', 'minProperties')) return 'object';
  if (has('items', 'prefixItems', 'minItems', 'maxItems', 'uniqueItems')) return 'array';
  if (has('minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf')) return 'number';
  return 'string';
}

/** The name's words with a naive singular of each (`cities` → `city`). */
