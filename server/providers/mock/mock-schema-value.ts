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
import { pickFrom, splitIdentifier, toHex } from './mock-prompt.js';

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

type Schema = Record<string, unknown>;

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
/** `$ref` hops followed before giving up on a reference chain. */
const MAX_REF_HOPS = 32;
/** Upper bound on generated array lengths, whatever `minItems` asks. */
const MAX_ARRAY_ITEMS = 1000;

const FALLBACK_WORDS = ['amber', 'harbor', 'meadow', 'lantern', 'orbit', 'willow', 'summit', 'ember'] as const;
const FALLBACK_CITIES = ['Paris', 'Lisbon', 'Kyoto', 'Oslo', 'Quito', 'Nairobi'] as const;

function isSchemaObject(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function finiteNumber(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 ? value : undefined;
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/** Follows a local JSON pointer (`#`, `#/$defs/Name`); anything else resolves to `{}`. */
function resolvePointer(root: unknown, ref: string): unknown {
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
function mergeSchemas(left: Schema, right: Schema): Schema {
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
function normalize(context: GeneratorContext, schema: unknown, hops = 0): Schema | boolean {
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

type JsonType = 'object' | 'array' | 'string' | 'number' | 'integer' | 'boolean' | 'null';
const JSON_TYPES: readonly string[] = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'];

function typeOf(schema: Schema): JsonType {
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
function nameWords(name: string | undefined): string[] {
  const words = splitIdentifier(name ?? '');
  const forms: string[] = [];
  for (const word of words) {
    forms.push(word);
    if (word.length > 4 && word.endsWith('ies')) forms.push(`${word.slice(0, -3)}y`);
    else if (word.length > 3 && word.endsWith('s')) forms.push(word.slice(0, -1));
  }
  return forms;
}

function slugWord(hints: SchemaValueHints): string {
  return hints.words.length > 0 ? pickFrom(hints.words, hints.random) : pickFrom(FALLBACK_WORDS, hints.random);
}

function capitalize(word: string): string {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

function uuidFrom(random: () => number): string {
  const hex = [0, 1, 2, 3].map(() => toHex(Math.floor(random() * 0x100000000))).join('');
  const variant = ((Number.parseInt(hex[16], 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

function stringForFormat(format: unknown, hints: SchemaValueHints): string | undefined {
  switch (format) {
    case 'email':
    case 'idn-email':
      return `${slugWord(hints)}@example.com`;
    case 'uri':
    case 'url':
    case 'iri':
    case 'uri-reference':
    case 'iri-reference':
      return `https://example.com/${slugWord(hints)}`;
    case 'date':
      return '2025-01-15';
    case 'date-time':
      return '2025-01-15T12:00:00Z';
    case 'time':
      return '12:00:00Z';
    case 'duration':
      return 'PT1H';
    case 'uuid':
      return uuidFrom(hints.random);
    case 'ipv4':
      return '192.0.2.1';
    case 'ipv6':
      return '2001:db8::1';
    case 'hostname':
    case 'idn-hostname':
      return 'example.com';
    case 'json-pointer':
      return '/mock';
    case 'regex':
      return '.*';
    default:
      return undefined;
  }
}

function stringForName(name: string | undefined, hints: SchemaValueHints): string {
  const words = nameWords(name);
  const has = (...candidates: string[]) => words.some((word) => candidates.includes(word));
  const last = words.at(-1);
  if (has('email', 'mail')) return `${slugWord(hints)}@example.com`;
  if (has('url', 'uri', 'link', 'website', 'href', 'homepage')) return `https://example.com/${slugWord(hints)}`;
  if (has('uuid', 'guid')) return uuidFrom(hints.random);
  if (last === 'id' || last === 'ids') return `mock_${toHex(Math.floor(hints.random() * 0x100000000))}`;
  if (has('path', 'file', 'filename', 'filepath', 'directory', 'folder')) return `${slugWord(hints)}.txt`;
  if (has('city', 'location', 'place', 'town', 'country', 'region', 'destination', 'origin', 'address', 'venue', 'where')) {
    return hints.properNouns[0] ?? pickFrom(FALLBACK_CITIES, hints.random);
  }
  if (has('name', 'title', 'author', 'person', 'user', 'username', 'company', 'owner')) {
    return hints.properNouns.at(-1) ?? `Mock ${capitalize(slugWord(hints))}`;
  }
  if (has('timestamp', 'datetime') || last === 'at' || last === 'time') return '2025-01-15T12:00:00Z';
  if (has('date', 'day', 'birthday')) return '2025-01-15';
  if (has('language', 'lang', 'locale')) return 'en';
  if (has('currency')) return 'EUR';
  if (has('phone', 'telephone', 'mobile')) return '+1-555-0100';
  if (has('color', 'colour')) return pickFrom(['blue', 'green', 'orange'], hints.random);
  if (
    has('answer', 'response', 'reply', 'text', 'summary', 'content', 'message', 'result', 'explanation', 'output',
      'description', 'body', 'comment', 'note', 'reason', 'reasoning', 'details')
  ) {
    return hints.answer;
  }
  if (has('query', 'question', 'prompt', 'search', 'input', 'keyword', 'term', 'topic', 'subject') || last === 'q') {
    return hints.excerpt || slugWord(hints);
  }
  return slugWord(hints);
}

function fitLength(value: string, schema: Schema, filler: string): string {
  const minLength = count(schema.minLength);
  const maxLength = count(schema.maxLength);
  let characters = Array.from(value);
  if (minLength !== undefined && characters.length < minLength) {
    const pad = Array.from(` ${filler || 'mock'}`);
    while (characters.length < minLength) characters = characters.concat(pad);
  }
  const limit = maxLength === undefined ? characters.length : maxLength;
  return characters.slice(0, Math.max(minLength ?? 0, Math.min(limit, characters.length))).join('');
}

function generateString(context: GeneratorContext, schema: Schema, name: string | undefined, variant: number): string {
  const { hints } = context;
  const formatted = stringForFormat(schema.format, hints);
  let value = formatted ?? stringForName(name, hints);
  // Items of one array differ, so that `uniqueItems` holds and lists look like lists.
  if (variant > 0 && formatted === undefined) value = `${value} ${variant + 1}`;
  return fitLength(value, schema, slugWord(hints));
}

function decimalsOf(step: number): number {
  const text = String(step);
  const exponent = /e-(\d+)$/.exec(text);
  if (exponent) return Number(exponent[1]) + (text.split('e')[0].split('.')[1]?.length ?? 0);
  return text.split('.')[1]?.length ?? 0;
}

function numberForName(name: string | undefined, integer: boolean, base: number): number {
  const words = nameWords(name);
  const has = (...candidates: string[]) => words.some((word) => candidates.includes(word));
  if (has('latitude', 'lat')) return integer ? 48 : 48.8566;
  if (has('longitude', 'lon', 'lng', 'long')) return integer ? 2 : 2.3522;
  if (has('year')) return 2025;
  if (has('age')) return 30;
  if (has('temperature', 'temp')) return 21;
  if (has('price', 'amount', 'cost', 'total')) return integer ? 20 : 19.99;
  return integer ? base : base + 0.5;
}

function generateNumber(schema: Schema, integer: boolean, name: string | undefined, variant: number, random: () => number): number {
  const minimum = finiteNumber(schema.minimum);
  const maximum = finiteNumber(schema.maximum);
  // Draft 4 spells exclusive bounds as booleans next to minimum/maximum.
  const exclusiveMinimum =
    finiteNumber(schema.exclusiveMinimum) ?? (schema.exclusiveMinimum === true ? minimum : undefined);
  const exclusiveMaximum =
    finiteNumber(schema.exclusiveMaximum) ?? (schema.exclusiveMaximum === true ? maximum : undefined);
  const inclusiveMinimum = schema.exclusiveMinimum === true ? undefined : minimum;
  const inclusiveMaximum = schema.exclusiveMaximum === true ? undefined : maximum;
  const step = finiteNumber(schema.multipleOf);
  const validStep = step !== undefined && step > 0 ? step : undefined;

  const fits = (value: number): boolean =>
    (inclusiveMinimum === undefined || value >= inclusiveMinimum) &&
    (inclusiveMaximum === undefined || value <= inclusiveMaximum) &&
    (exclusiveMinimum === undefined || value > exclusiveMinimum) &&
    (exclusiveMaximum === undefined || value < exclusiveMaximum);

  const lowers = [inclusiveMinimum, exclusiveMinimum].filter((bound): bound is number => bound !== undefined);
  const uppers = [inclusiveMaximum, exclusiveMaximum].filter((bound): bound is number => bound !== undefined);
  const lower = lowers.length > 0 ? Math.max(...lowers) : undefined;
  const upper = uppers.length > 0 ? Math.min(...uppers) : undefined;

  let value = numberForName(name, integer, 1 + Math.floor(random() * 10)) + variant;
  if (!fits(value)) {
    if (lower !== undefined && upper !== undefined) value = lower + (upper - lower) / 2;
    else if (lower !== undefined) value = lower + 1 + variant;
    else if (upper !== undefined) value = upper - 1 - variant;
  }
  if (integer) {
    const rounded = Math.round(value);
    value = fits(rounded) ? rounded : fits(Math.floor(value)) ? Math.floor(value) : Math.ceil(value);
  }
  if (validStep !== undefined) {
    const unit = integer ? Math.max(1, Math.ceil(validStep)) : validStep;
    const decimals = Math.min(20, decimalsOf(unit));
    const snap = (multiple: number) => Number((multiple * unit).toFixed(decimals));
    const candidates = [Math.round(value / unit), Math.ceil((lower ?? value) / unit), Math.floor((upper ?? value) / unit)];
    for (const multiple of candidates) {
      for (const offset of [0, 1, -1]) {
        const candidate = snap(multiple + offset);
        if (fits(candidate)) return candidate;
      }
    }
    return snap(Math.round(value / unit));
  }
  return value;
}

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
