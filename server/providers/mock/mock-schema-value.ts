/**
 * Builds a JSON value that is valid against a JSON schema, for the mock
 * provider's tool arguments and structured outputs. It covers the keywords
 * that tool and response schemas use in practice: `type` (also as a list),
 * `properties`/`required`, `additionalProperties`, `min/maxProperties`,
 * `dependentRequired`, `items`/`prefixItems`, `min/maxItems`, `uniqueItems`,
 * `enum`, `const`, `anyOf`/`oneOf` (first non-null branch), `allOf` (merged),
 * local `$ref`s (`#/$defs/…`), numeric bounds and `multipleOf`, string
 * lengths and the common `format`s. It does not try to satisfy `pattern`,
 * `not` or `if`/`then`/`else`.
 *
 * Strings are filled from the prompt where the property name says what it
 * holds (`city` ← a capitalised word of the prompt, `query` ← the user's
 * words, `summary` ← the answer), so the arguments read naturally in demos.
 */
import { count, isSchemaObject, mergeSchemas, normalize, stringList, typeOf, type JsonType, type Schema, type SchemaValueHints } from './mock-schema.js';
import { generateNumber, generateString, slugWord } from './mock-schema-scalars.js';

export type { SchemaValueHints } from './mock-schema.js';

interface GeneratorContext {
  root: unknown;
  hints: SchemaValueHints;
}

/**
 * Nesting depth from which arrays get only their `minItems` and objects only
 * their required properties, so that recursive schemas (trees) end early.
 */
const SHALLOW_DEPTH = 3;
/** Nesting depth after which objects and arrays are left empty, whatever the schema asks. */
const MAX_DEPTH = 8;
/** Upper bound on generated array lengths, whatever `minItems` asks. */
const MAX_ARRAY_ITEMS = 1000;

function minimalValue(type: JsonType): unknown {
  switch (type) {
    case 'object':
      return {};
    case 'array':
      return [];
    case 'string':
      return '';
    case 'number':
    case 'integer':
      return 0;
    case 'boolean':
      return false;
    case 'null':
      return null;
  }
}

function additionalSchemaFor(schema: Schema, key: string): unknown {
  if (isSchemaObject(schema.patternProperties)) {
    for (const [pattern, propertySchema] of Object.entries(schema.patternProperties)) {
      try {
        if (new RegExp(pattern, 'u').test(key)) return propertySchema;
      } catch {
        continue;
      }
    }
  }
  return isSchemaObject(schema.additionalProperties) ? schema.additionalProperties : {};
}

function isPrimitiveSchema(context: GeneratorContext, schema: unknown): boolean {
  const normalized = normalize(context, schema);
  if (typeof normalized === 'boolean') return true;
  const type = typeOf(normalized);
  return type !== 'object' && type !== 'array';
}

function generateObject(context: GeneratorContext, schema: Schema, depth: number): Record<string, unknown> {
  const properties = isSchemaObject(schema.properties) ? schema.properties : {};
  const propertyNames = Object.keys(properties);
  const keys = stringList(schema.required);
  const include = (key: string) => {
    if (!keys.includes(key)) keys.push(key);
  };
  // Optional properties are added sparingly: one, preferably a scalar, when nothing is required.
  if (keys.length === 0 && propertyNames.length > 0 && depth < SHALLOW_DEPTH) {
    include(propertyNames.find((key) => isPrimitiveSchema(context, properties[key])) ?? propertyNames[0]);
  }
  const minProperties = count(schema.minProperties) ?? 0;
  for (const key of propertyNames) {
    if (keys.length >= minProperties) break;
    include(key);
  }
  for (let extra = 1; keys.length < minProperties && schema.additionalProperties !== false; extra++) {
    include(`extra_${extra}`);
  }
  const dependencies = isSchemaObject(schema.dependentRequired) ? schema.dependentRequired : schema.dependencies;
  if (isSchemaObject(dependencies)) {
    for (let i = 0; i < keys.length; i++) {
      for (const dependency of stringList(dependencies[keys[i]])) include(dependency);
    }
  }
  const result: Record<string, unknown> = {};
  for (const key of keys) {
    const propertySchema = key in properties ? properties[key] : additionalSchemaFor(schema, key);
    result[key] = generateValue(context, propertySchema, key, depth + 1, 0);
  }
  return result;
}

function generateArray(context: GeneratorContext, schema: Schema, name: string | undefined, depth: number): unknown[] {
  const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : [];
  const rest: unknown = Array.isArray(schema.prefixItems) || Array.isArray(schema.items)
    ? Array.isArray(schema.prefixItems) ? schema.items : schema.additionalItems
    : schema.items;
  const minItems = count(schema.minItems);
  const maxItems = count(schema.maxItems);
  let length = minItems ?? (depth >= SHALLOW_DEPTH ? 0 : tuple.length > 0 ? tuple.length : 1);
  if (rest === false) length = Math.min(length, tuple.length);
  if (maxItems !== undefined) length = Math.min(length, maxItems);
  length = Math.min(length, MAX_ARRAY_ITEMS);
  const items: unknown[] = [];
  const seen = new Set<string>();
  for (let index = 0; index < length; index++) {
    const itemSchema = index < tuple.length ? tuple[index] : rest ?? {};
    let item = generateValue(context, itemSchema, name, depth + 1, index);
    if (schema.uniqueItems === true) {
      for (let attempt = 1; seen.has(JSON.stringify(item)) && attempt <= 8; attempt++) {
        item = generateValue(context, itemSchema, name, depth + 1, index + attempt * length);
      }
      seen.add(JSON.stringify(item));
    }
    items.push(item);
  }
  return items;
}

function generateValue(
  context: GeneratorContext,
  rawSchema: unknown,
  name: string | undefined,
  depth: number,
  variant: number,
): unknown {
  const schema = normalize(context, rawSchema);
  if (schema === false) return null;
  if (schema === true) return slugWord(context.hints);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    const start = Math.floor(context.hints.random() * schema.enum.length);
    return schema.enum[(start + variant) % schema.enum.length];
  }
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : null;
  if (branches && branches.length > 0) {
    const { anyOf: _anyOf, oneOf: _oneOf, ...rest } = schema;
    const normalizedBranches = branches.map((branch: unknown) => normalize(context, branch));
    const chosen =
      normalizedBranches.find((branch) => branch !== false && (branch === true || typeOf(branch) !== 'null')) ??
      normalizedBranches[0];
    const merged = chosen === true || chosen === false ? rest : mergeSchemas(rest, chosen);
    // One level deeper, so that a branch referring back to its own schema still ends.
    return generateValue(context, merged, name, depth + 1, variant);
  }
  const type = typeOf(schema);
  if (depth > MAX_DEPTH) return minimalValue(type);
  switch (type) {
    case 'object':
      return generateObject(context, schema, depth);
    case 'array':
      return generateArray(context, schema, name, depth);
    case 'string':
      return generateString(context, schema, name, variant);
    case 'number':
    case 'integer':
      return generateNumber(schema, type === 'integer', name, variant, context.hints.random);
    case 'boolean':
      return (Math.floor(context.hints.random() * 2) + variant) % 2 === 0;
    case 'null':
      return null;
  }
}

/**
 * A value valid against `schema` (the root of any `$ref`s), filled from the
 * hints. Deterministic for a given schema and random source.
 */
export function generateSchemaValue(schema: unknown, hints: SchemaValueHints): unknown {
  return generateValue({ root: schema, hints }, schema, undefined, 0, 0);
}
