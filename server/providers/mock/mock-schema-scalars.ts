/**
 * Strings and numbers of the mock's value generator: filled from the prompt
 * where a property's name says what it holds, within the schema's bounds.
 */
import { pickFrom, splitIdentifier, toHex } from './mock-prompt.js';
import { count, finiteNumber, type Schema, type SchemaValueHints } from './mock-schema.js';

const FALLBACK_WORDS = ['amber', 'harbor', 'meadow', 'lantern', 'orbit', 'willow', 'summit', 'ember'] as const;
const FALLBACK_CITIES = ['Paris', 'Lisbon', 'Kyoto', 'Oslo', 'Quito', 'Nairobi'] as const;

/** What string generation needs: the prompt's hints. */
export interface ScalarContext {
  hints: SchemaValueHints;
}

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

export function slugWord(hints: SchemaValueHints): string {
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

export function generateString(context: ScalarContext, schema: Schema, name: string | undefined, variant: number): string {
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

export function generateNumber(schema: Schema, integer: boolean, name: string | undefined, variant: number, random: () => number): number {
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
